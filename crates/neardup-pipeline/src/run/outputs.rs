//! The outputs of a run: checked against the files it reads and against each other before
//! anything is read, then created (each a temporary file beside its final path) before any
//! work starts, so that an unwritable path fails at once.

use super::{files_read, RunConfig};
use crate::error::{Error, Result};
use crate::input::Format;
use crate::output::AtomicOutput;
use crate::paths::check_distinct_named;
use crate::spans::SpanOutputs;

/// Every output of a run, created and not yet committed.
pub(super) struct Outputs {
    pub(super) kept: AtomicOutput,
    pub(super) clusters: Option<AtomicOutput>,
    pub(super) pairs: Option<AtomicOutput>,
    pub(super) stats: Option<AtomicOutput>,
    pub(super) boilerplate: Option<AtomicOutput>,
    pub(super) lexicon: Option<AtomicOutput>,
    /// The span report files (`dedup --spans`).
    pub(super) spans: Option<SpanOutputs>,
}

/// The outputs of a run, each with its option, in the order they are created.
fn named_outputs(config: &RunConfig) -> Vec<(&'static str, &str)> {
    let named = [
        ("`output`", Some(&config.output)),
        ("`clusters`", config.clusters.as_ref()),
        ("`pairs`", config.pairs.as_ref()),
        ("`stats`", config.stats.as_ref()),
        ("`boilerplate_out`", config.boilerplate_out.as_ref()),
        ("`save_lexicon`", config.save_lexicon.as_ref()),
        (
            "`span_report`",
            config
                .spans
                .as_ref()
                .and_then(|spans| spans.report.as_ref()),
        ),
        (
            "`span_ranges`",
            config
                .spans
                .as_ref()
                .and_then(|spans| spans.ranges.as_ref()),
        ),
    ];
    (named.into_iter())
        .filter_map(|(option, path)| path.map(|path| (option, path.as_str())))
        .collect()
}

/// Refuses outputs that are files the run reads ([`files_read`]) or each other, before
/// anything is read or created.
pub(super) fn check_outputs(config: &RunConfig) -> Result<()> {
    check_distinct_named(&files_read(config), &named_outputs(config))?;
    check_kept_format(config)
}

/// Kept records are written in their inputs' format, byte for byte: an output whose name
/// says another format (`-o kept.csv` for JSONL inputs) is refused, not written in a format
/// its name belies. An output whose name says no format is written as the inputs are.
fn check_kept_format(config: &RunConfig) -> Result<()> {
    let Some(named) = format_named(&config.output) else {
        return Ok(());
    };
    let Some(input) = config.inputs.first() else {
        return Ok(());
    };
    let read = match config.input.format {
        Some(format) => format,
        None => match format_named(input) {
            Some(format) => format,
            None => return Ok(()),
        },
    };
    if read == named {
        return Ok(());
    }
    Err(Error::format(
        &config.output,
        format!(
            "the name says {named}, but the kept records are written in the format of the \
             inputs, {read}: name the output .{} (optionally followed by .gz or .zst)",
            read.name()
        ),
    ))
}

/// The format a file's name says (its extension, after a compression extension).
fn format_named(path: &str) -> Option<Format> {
    if path == crate::paths::STANDARD {
        return None;
    }
    let (_, stem) = crate::compression::Compression::from_extension(path);
    let extension = std::path::Path::new(stem).extension()?.to_str()?;
    Format::from_extension(extension)
}

/// Creates every output (checked by [`check_outputs`] when the run started).
pub(super) fn open_outputs(config: &RunConfig) -> Result<Outputs> {
    let optional = |path: &Option<String>| path.as_deref().map(AtomicOutput::create).transpose();
    Ok(Outputs {
        kept: AtomicOutput::create(&config.output)?,
        clusters: optional(&config.clusters)?,
        pairs: optional(&config.pairs)?,
        stats: optional(&config.stats)?,
        boilerplate: optional(&config.boilerplate_out)?,
        lexicon: optional(&config.save_lexicon)?,
        spans: config
            .spans
            .as_ref()
            .map(SpanOutputs::reports)
            .transpose()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use neardup_core::registry::Params;

    fn config() -> RunConfig {
        RunConfig::new(
            vec!["in.jsonl".into()],
            "out.jsonl".into(),
            "minhash",
            Params::new(),
        )
    }

    #[test]
    fn outputs_are_named_in_creation_order_and_absent_ones_left_out() {
        let mut config = config();
        config.stats = Some("stats.json".into());
        config.clusters = Some("clusters.jsonl".into());
        let named = named_outputs(&config);
        assert_eq!(
            named,
            [
                ("`output`", "out.jsonl"),
                ("`clusters`", "clusters.jsonl"),
                ("`stats`", "stats.json")
            ]
        );
    }

    #[test]
    fn an_output_that_is_an_input_is_refused_before_anything_is_created() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.jsonl").display().to_string();
        std::fs::write(&input, "{\"text\": \"a\"}\n").unwrap();
        let mut config = config();
        config.inputs = vec![input.clone()];
        config.pairs = Some(input);
        let error = check_outputs(&config).unwrap_err().to_string();
        assert!(error.contains("`pairs`"), "{error}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn an_output_named_for_another_format_is_refused() {
        // Issue 44: `-o kept.csv` on a JSONL input silently wrote JSONL.
        let mut config = config();
        config.output = "kept.csv".into();
        let error = check_outputs(&config).unwrap_err().to_string();
        assert!(
            error.starts_with(
                "kept.csv: the name says csv, but the kept records are written in \
                 the format of the inputs, jsonl: name the output .jsonl"
            ),
            "{error}"
        );
        for fine in ["kept.jsonl.gz", "kept.ndjson", "kept", "kept.out", "-"] {
            config.output = fine.into();
            check_outputs(&config).unwrap();
        }
        config.output = "kept.txt".into();
        config.input.format = Some(Format::Text);
        check_outputs(&config).unwrap();
        config.output = "kept.tsv.zst".into();
        assert!(check_outputs(&config).is_err());
    }

    #[test]
    fn distinct_outputs_are_created_beside_their_paths() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = config();
        config.output = dir.path().join("kept.jsonl").display().to_string();
        config.pairs = Some(dir.path().join("pairs.jsonl").display().to_string());
        check_outputs(&config).unwrap();
        let outputs = open_outputs(&config).unwrap();
        assert!(outputs.pairs.is_some() && outputs.clusters.is_none());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }
}
