//! The last room of a run: the clusters, pairs, boilerplate, lexicon and statistics files
//! written from what the engine decided, and every output committed together.

use std::time::Instant;

use neardup_core::registry::Registered;
use neardup_engine::{BoilerplateStats, Outcome};
use serde_json::Value;

use super::memory::StagePeaks;
use super::outputs::Outputs;
use super::templates::templates_report;
use super::{settings_json, Read, RunConfig, RunReport, View};
use crate::error::{Error, Result};
use crate::input::Corpus;
use crate::output::{commit_all, write_json_lines, AtomicOutput};
use crate::rows::{ClusterRow, PairRow};
use crate::spans::SpanOutputs;
use crate::stats::{
    cluster_size_histogram_from, peak_rss_bytes, BoilerplateLineReport, BoilerplateReport,
    MethodStats, RunStats,
};

/// Writes the reports and commits every output.
pub(super) fn finish<M: Registered>(
    method: &M,
    config: &RunConfig,
    mut outputs: Outputs,
    read: Read,
    started: Instant,
    peaks: StagePeaks<'_>,
) -> Result<RunReport> {
    let outcome = &read.outcome;
    let view = View {
        reference: &read.reference,
        corpus: &read.corpus,
        within: config.engine.within,
    };
    let writing = Instant::now();
    write_reports(&mut outputs, view, outcome)?;
    // Read again for their texts: only with a stats file, within the `write` stage.
    let templates = match outputs.stats {
        Some(_) => templates_report(method, config, view, &outcome.stats.templates, &read.texts)?,
        None => None,
    };
    let seconds = stage_seconds(&read.seconds, &outcome.stats.seconds, writing, started);
    let mut stats = run_stats(method, config, view, &read.counts, outcome, seconds);
    stats.templates = templates;
    note_paths(&mut stats, &read);
    stats.peak_rss_by_stage = peaks.finish();
    if let Some(out) = outputs.stats.as_mut() {
        write_stats(out, &stats)?;
    }
    commit(outputs)?;
    Ok(RunReport {
        stats,
        spans: read.spans,
    })
}

/// Writes the clusters, pairs, boilerplate and lexicon files that were asked for.
fn write_reports(outputs: &mut Outputs, view: View<'_>, outcome: &Outcome) -> Result<()> {
    if let Some(out) = outputs.clusters.as_mut() {
        write_json_lines(out, cluster_rows(view, outcome))?;
    }
    if let Some(out) = outputs.pairs.as_mut() {
        write_json_lines(out, pair_rows(view, outcome))?;
    }
    if let Some(out) = outputs.boilerplate.as_mut() {
        write_boilerplate(out, &outcome.stats.boilerplate)?;
    }
    if let (Some(out), Some(lexicon)) = (outputs.lexicon.as_mut(), &outcome.stats.lexicon) {
        let path = out.path().to_owned();
        (out.writer().write_all(lexicon.as_bytes())).map_err(|e| Error::Output {
            path,
            message: e.to_string(),
        })?;
    }
    Ok(())
}

/// The seconds of the stats file: the pipeline's own stages (`read`), the engine's, then
/// `write` (the kept records, timed by the path as `write_kept`, and the reports since
/// `writing`) and `total` (since `started`).
fn stage_seconds(
    pipeline: &[(String, f64)],
    engine: &[(&'static str, f64)],
    writing: Instant,
    started: Instant,
) -> Vec<(String, f64)> {
    let mut seconds: Vec<(String, f64)> = Vec::new();
    let mut write_kept_seconds = 0.0;
    for (stage, value) in pipeline {
        match stage.as_str() {
            "write_kept" => write_kept_seconds = *value,
            _ => seconds.push((stage.clone(), *value)),
        }
    }
    for (stage, value) in engine {
        seconds.push(((*stage).to_owned(), *value));
    }
    seconds.push((
        "write".into(),
        write_kept_seconds + writing.elapsed().as_secs_f64(),
    ));
    seconds.push(("total".into(), started.elapsed().as_secs_f64()));
    seconds
}

/// What the stats file says of the path the run took: bytes spilled, the memory plan,
/// what a resumable run took up.
fn note_paths(stats: &mut RunStats, read: &Read) {
    stats.spilled_bytes = read.spilled + read.outcome.stats.spilled_bytes;
    if let Some((limit, plan)) = &read.memory {
        stats.memory_limit_bytes = Some(*limit);
        stats.memory_path = Some(if plan.spill { "spill" } else { "memory" }.to_owned());
        stats.memory_reason = Some(plan.reason.clone());
    }
    if let Some(resume) = &read.resume {
        stats.resumed_from = Some(resume.from.map(str::to_owned));
        stats.resume_discarded = resume.discarded.clone();
    }
}

/// Renames every output into place, all together, now that everything is written.
fn commit(outputs: Outputs) -> Result<()> {
    let reports = [
        outputs.clusters,
        outputs.pairs,
        outputs.stats,
        outputs.boilerplate,
        outputs.lexicon,
    ];
    let spans = outputs
        .spans
        .map(SpanOutputs::into_files)
        .unwrap_or_default();
    commit_all(
        std::iter::once(outputs.kept)
            .chain(reports.into_iter().flatten())
            .chain(spans)
            .collect(),
    )
}

/// The boilerplate lines, one per line, most frequent first.
fn write_boilerplate(out: &mut AtomicOutput, found: &BoilerplateStats) -> Result<()> {
    let path = out.path().to_owned();
    let writer = out.writer();
    for line in &found.lines {
        writeln!(writer, "{}", line.text).map_err(|e| Error::Output {
            path: path.clone(),
            message: e.to_string(),
        })?;
    }
    Ok(())
}

/// The boilerplate section of the stats file, for methods that have boilerplate settings.
fn boilerplate_report<M: Registered>(
    _method: &M,
    found: &BoilerplateStats,
) -> Option<BoilerplateReport> {
    if !M::params().iter().any(|p| p.name == "max_df") {
        return None;
    }
    let limit = |name: &str| found.limits.iter().find(|(n, _)| *n == name).map(|l| l.1);
    Some(BoilerplateReport {
        table: found.table.map(|t| t.0.to_owned()),
        table_bytes: found.table.map(|t| t.1 as u64),
        counted_documents: found.counted_documents,
        max_df: limit("max_df"),
        boilerplate_df: limit("boilerplate_df"),
        table_saturated: limit("table_saturated").is_some(),
        documents: found.documents,
        removed_lines: found.removed_lines,
        distinct_lines: found.lines.len() as u64,
        discounted_shingles: found.discounted_features,
        top_lines: (found.lines.iter().take(20))
            .map(|line| BoilerplateLineReport {
                text: line.text.clone(),
                documents: line.documents,
            })
            .collect(),
    })
}

fn write_stats(out: &mut AtomicOutput, stats: &RunStats) -> Result<()> {
    let text = stats.to_json_pretty() + "\n";
    let path = out.path().to_owned();
    (out.writer().write_all(text.as_bytes())).map_err(|e| Error::Output {
        path,
        message: e.to_string(),
    })
}

/// One row per input document (not per reference document).
fn cluster_rows<'a>(view: View<'a>, outcome: &'a Outcome) -> impl Iterator<Item = ClusterRow> + 'a {
    let assignment = &outcome.assignment;
    let first = view.first();
    (0..view.corpus.len()).map(move |input| {
        let index = first + input;
        let cluster = assignment.cluster_of(index as u32) as usize;
        let duplicate_of = assignment.duplicate_of[index].map(|d| view.id(d as usize).into());
        ClusterRow {
            id: view.corpus.get(input).into(),
            cluster: view.id(cluster).into(),
            duplicate_of,
            similarity: assignment.similarity.get(index),
        }
    })
}

/// Every verified pair with an input document in it (with `--against`: an input and a
/// reference document, or two inputs when they are deduplicated among themselves).
fn pair_rows<'a>(view: View<'a>, outcome: &'a Outcome) -> impl Iterator<Item = PairRow> + 'a {
    let first = view.first() as u32;
    (outcome.all_pairs())
        .filter(move |pair| first == 0 || (pair.b >= first && (view.within || pair.a < first)))
        .map(move |pair| PairRow {
            a: view.id(pair.a as usize).into(),
            b: view.id(pair.b as usize).into(),
            similarity: Some(pair.similarity),
            distance: pair.distance,
        })
}

fn run_stats<M: Registered>(
    method: &M,
    config: &RunConfig,
    view: View<'_>,
    corpus: &Corpus,
    outcome: &Outcome,
    seconds: Vec<(String, f64)>,
) -> RunStats {
    let first = view.first();
    let documents = view.corpus.len() as u64;
    let kept = (outcome.assignment.duplicate_of[first..].iter())
        .filter(|d| d.is_none())
        .count() as u64;
    let histogram = cluster_size_histogram_from(&outcome.assignment, first);
    let clusters: u64 = (histogram.iter())
        .filter(|(size, _)| *size > 1)
        .map(|(_, count)| count)
        .sum();
    let engine = &outcome.stats;
    RunStats {
        inputs: config.inputs.clone(),
        method: MethodStats {
            name: method.name().to_owned(),
            threshold: method.threshold(),
            params: settings_json(method.settings()),
            learned: (engine.boilerplate.limits.iter())
                .map(|&(name, value)| (name.to_owned(), Value::from(value)))
                .collect(),
        },
        cluster_mode: config.engine.cluster.name().to_owned(),
        keep: config.engine.keep.name().to_owned(),
        documents_in: documents,
        kept,
        removed: documents - kept,
        skipped: corpus.skipped.count,
        skipped_first: corpus.skipped.first.clone(),
        empty_documents: engine.empty_documents,
        exact_only_documents: engine.exact_only_documents,
        exact_copies: engine.exact_copies,
        clusters,
        cluster_sizes: histogram
            .iter()
            .map(|&(size, count)| (size as u64, count))
            .collect(),
        candidate_pairs: engine.candidate_pairs,
        verified_pairs: engine.verified_pairs,
        largest_bucket: engine.largest_bucket,
        reference_documents: first as u64,
        capped_buckets: engine.capped_buckets,
        capped_out: engine.capped_out,
        candidate_comparisons: engine.candidate_comparisons,
        budget_hits: engine.budget_hits,
        partner_limit: engine.partner_limit,
        bytes_in: corpus.bytes_read,
        threads: rayon::current_num_threads() as u64,
        seconds,
        peak_rss_bytes: peak_rss_bytes(),
        boilerplate: boilerplate_report(method, &engine.boilerplate),
        ..RunStats::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::Ids;
    use neardup_core::registry::{self, MethodVisitor, Params};
    use neardup_engine::{EngineOptions, NoProgress};

    /// The outcome of `exact` on `texts`, the first `reference` of them a reference corpus.
    fn outcome(texts: &[&str], reference: u32, within: bool) -> Outcome {
        struct Dedup<'a>(&'a [&'a str], EngineOptions);
        impl MethodVisitor for Dedup<'_> {
            type Output = Outcome;
            fn visit<M: Registered>(self, method: M) -> Outcome {
                neardup_engine::dedup(&method, self.0, self.1, &NoProgress).unwrap()
            }
        }
        let options = EngineOptions {
            reference,
            within,
            ..EngineOptions::default()
        };
        registry::with_method("exact", &Params::new(), Dedup(texts, options)).unwrap()
    }

    fn ids(names: &[&str]) -> Ids {
        Ids::Records(names.iter().map(|&name| Value::from(name)).collect())
    }

    #[test]
    fn cluster_rows_are_one_per_input_and_name_reference_documents() {
        let texts = [
            "same text",
            "other text",
            "same text",
            "new text",
            "other text",
        ];
        let outcome = outcome(&texts, 2, true);
        let (reference, corpus) = (ids(&["r1", "r2"]), ids(&["i1", "i2", "i3"]));
        let view = View {
            reference: &reference,
            corpus: &corpus,
            within: true,
        };
        let rows: Vec<ClusterRow> = cluster_rows(view, &outcome).collect();
        let named: Vec<(Value, Value, Option<Value>)> = (rows.into_iter())
            .map(|row| {
                let duplicate_of = row.duplicate_of.map(|id| id.to_value());
                (row.id.to_value(), row.cluster.to_value(), duplicate_of)
            })
            .collect();
        let value = |name: &str| Value::from(name);
        assert_eq!(
            named,
            [
                (value("i1"), value("r1"), Some(value("r1"))),
                (value("i2"), value("i2"), None),
                (value("i3"), value("r2"), Some(value("r2"))),
            ]
        );
    }

    #[test]
    fn pair_rows_leave_out_pairs_of_reference_documents_and_of_inputs_unless_within() {
        let texts = ["same text", "same text", "same text", "same text"];
        let (reference, corpus) = (ids(&["r1", "r2"]), ids(&["i1", "i2"]));
        let pairs = |within: bool| -> Vec<(Value, Value)> {
            let outcome = outcome(&texts, 2, within);
            let view = View {
                reference: &reference,
                corpus: &corpus,
                within,
            };
            (pair_rows(view, &outcome))
                .map(|row| {
                    assert_eq!(row.similarity, Some(1.0));
                    (row.a.to_value(), row.b.to_value())
                })
                .collect()
        };
        let named = |pairs: &[(&str, &str)]| -> Vec<(Value, Value)> {
            (pairs.iter())
                .map(|&(a, b)| (Value::from(a), Value::from(b)))
                .collect()
        };
        let across = [("r1", "i1"), ("r1", "i2"), ("r2", "i1"), ("r2", "i2")];
        assert_eq!(pairs(false), named(&across));
        let mut all = pairs(true);
        all.sort_by_key(|(a, b)| (a.to_string(), b.to_string()));
        let mut expected = named(&across);
        expected.push((Value::from("i1"), Value::from("i2")));
        expected.sort_by_key(|(a, b)| (a.to_string(), b.to_string()));
        assert_eq!(all, expected);
    }

    #[test]
    fn the_kept_records_count_in_write_and_total_comes_last() {
        let pipeline = [("read".to_owned(), 1.5), ("write_kept".to_owned(), 2.0)];
        let now = Instant::now();
        let seconds = stage_seconds(&pipeline, &[("sketch", 0.25)], now, now);
        let names: Vec<&str> = seconds.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, ["read", "sketch", "write", "total"]);
        assert_eq!((seconds[0].1, seconds[1].1), (1.5, 0.25));
        assert!(seconds[2].1 >= 2.0 && seconds[2].1 < 3.0);
    }

    #[test]
    fn without_a_reference_every_pair_is_written() {
        let texts = ["a text", "a text", "a text"];
        let outcome = outcome(&texts, 0, false);
        let (reference, corpus) = (ids(&[]), ids(&["x", "y", "z"]));
        let view = View {
            reference: &reference,
            corpus: &corpus,
            within: false,
        };
        assert_eq!(pair_rows(view, &outcome).count(), 3);
    }
}
