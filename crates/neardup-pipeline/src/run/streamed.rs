//! The spilling path of a run that does not fit in memory: the inputs streamed (twice when
//! the method learns from the corpus, once more to write the kept records), the sketches
//! spilled to a temporary directory.
//!
//! Its stages, each a function: the work directory ([`WorkDir`]: a temporary area, or the
//! resume directory of a resumable run), the copy of standard input, the corpus pass
//! ([`CorpusPass`]), the sketch stage (a [`Sketcher`] and the [`SidesRead`] of its read), the
//! engine, the kept records written by reading the inputs again, and the ids of the
//! documents restored for the clusters and pairs files.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use neardup_core::registry::Registered;
use neardup_engine::sketch_store::Spilling;
use neardup_engine::{CorpusLearner, EngineOptions, Learned, NoProgress, Progress, Sketcher};
use serde_json::Value;

use super::checkpoint::{
    decode_corpus_checkpoint, encode_corpus_checkpoint, encode_sketch_checkpoint,
    split_sketch_checkpoint, CorpusPass, CHECKPOINT_LAYOUT,
};
use super::outputs::Outputs;
use super::sides::{changed, refuse_all_skipped_meta, ParkedSides, ReadSummary, Sides, SidesRead};
use super::templates;
use super::{settings_json, Ids, Read, ResumeStats, RunConfig};
use crate::error::{Error, Result};
use crate::file_spill::{temp_parent, FileSpillDir, TempArea};
use crate::input::{read_inputs_replayed, Corpus, Meta};
use crate::output::{write_kept_streamed, AtomicOutput};
use crate::paths::STANDARD;
use crate::resume::{ResumeDir, Stage};

/// The spilling path: the inputs streamed (twice when the method learns from the corpus,
/// once more to write the kept records), sketches spilled to the temporary directory.
pub(super) fn read_streamed<M: Registered>(
    method: &M,
    config: &RunConfig,
    engine: EngineOptions,
    limit: u64,
    outputs: &mut Outputs,
    progress: &dyn Progress,
) -> Result<Read> {
    let mut timed: Vec<(String, f64)> = Vec::new();
    let work = WorkDir::open(method, config, engine, &mut timed)?;
    // Standard input, a FIFO or a descriptor cannot be read twice: it is copied first.
    let mut spilled = 0;
    let against_opened =
        copy_read_once(&config.against, "stdin-against", &work.path, &mut spilled)?;
    let inputs_opened = copy_read_once(&config.inputs, "stdin", &work.path, &mut spilled)?;
    let mut stream = Stream {
        method,
        engine,
        sides: Sides {
            config,
            against_opened: &against_opened,
            inputs_opened: &inputs_opened,
        },
        work: &work,
        progress,
        resumed: None,
        parked: None,
    };
    let (corpus, first_read, first_full) = match stream.corpus_pass()? {
        Some((pass, full)) => (Some((pass.stats, pass.seconds)), Some(pass.summary), full),
        None => (None, None, None),
    };
    let spilling = work.spilling(limit);
    let sketched = work.load(Stage::Sketch)?;
    // A resumed sketch stage needs the learned method again: the corpus checkpoint is
    // loaded above whenever the method learns (it is kept beside the sketch checkpoint).
    if sketched.is_some() && method.learns_from_corpus() && corpus.is_none() {
        return Err(Error::Parameter(neardup_core::Error::invalid(
            "checkpoint",
            "the sketch checkpoint has no corpus checkpoint beside it",
        )));
    }
    let learned = Learned::new(method, corpus, engine)?;
    let (sketcher, mut read) =
        stream.sketch(&learned, sketched, first_read, first_full, spilling)?;
    let parked = stream.parked.take();
    let parked = parked.map_or_else(|| ParkedSides::park(&mut read, &work.path), Ok)?;
    let resumed = stream.resumed;
    let SidesRead {
        reference,
        corpus,
        mut reference_meta,
        mut corpus_meta,
    } = read;
    refuse_all_skipped_meta(&reference, &reference_meta)?;
    refuse_all_skipped_meta(&corpus, &corpus_meta)?;
    let first = reference_meta.len();
    let engine = EngineOptions {
        reference: first as u32,
        ..engine
    };
    let mut outcome = sketcher.finish(engine, progress)?;
    learned.complete(&mut outcome);
    let writing = Instant::now();
    let duplicate_of = &outcome.assignment.duplicate_of[first..];
    let kept = KeptAgain {
        config,
        inputs_opened: &inputs_opened,
        corpus: &corpus,
        corpus_meta: &corpus_meta,
    };
    // The texts the templates section lists, taken as the inputs go by once more; the ids
    // again for the outputs that name documents (else the parked files go with the work).
    let wanted = templates::listed_inputs(&outcome.stats.templates, first, &outputs.stats);
    let texts = kept.write(duplicate_of, &wanted, &mut outputs.kept)?;
    let named = outputs.stats.is_some() && !outcome.stats.templates.groups.is_empty();
    if outputs.clusters.is_some() || outputs.pairs.is_some() || named {
        parked.restore(&mut reference_meta, &mut corpus_meta)?;
    }
    name_reference(config, &reference, &mut reference_meta);
    let resume_stats = work.close(resumed);
    Ok(Read {
        reference: Ids::Meta(reference_meta),
        corpus: Ids::Meta(corpus_meta),
        counts: corpus,
        outcome,
        seconds: {
            timed.push(("write_kept".to_owned(), writing.elapsed().as_secs_f64()));
            timed
        },
        spilled,
        memory: None,
        resume: resume_stats,
        texts: texts
            .into_iter()
            .map(|(at, text)| (first + at, text))
            .collect(),
        spans: None,
    })
}

/// Where a streamed run keeps its temporary files: the resume directory of a resumable run
/// (`--resume`), else a temporary area removed when the run ends.
struct WorkDir {
    resume: Option<ResumeDir>,
    area: Option<TempArea>,
    path: PathBuf,
}

impl WorkDir {
    /// Opens the resume directory (hashing every input for its manifest, timed in `timed`
    /// as `resume_hash`) or creates the temporary area.
    fn open<M: Registered>(
        method: &M,
        config: &RunConfig,
        engine: EngineOptions,
        timed: &mut Vec<(String, f64)>,
    ) -> Result<WorkDir> {
        let parent = temp_parent(config.temp_dir.as_deref(), &config.output);
        let resume = match config.resume {
            true => {
                let head = manifest_head(method, config, engine);
                // The manifest hashes every input in full: seconds of their own in the stats.
                let hashing = Instant::now();
                let manifest = crate::resume::manifest(&head, &config.against, &config.inputs)?;
                timed.push(("resume_hash".to_owned(), hashing.elapsed().as_secs_f64()));
                Some(ResumeDir::open(&parent, &config.output, &manifest)?)
            }
            false => None,
        };
        let area = match &resume {
            Some(_) => None,
            None => Some(TempArea::create(&parent)?),
        };
        let path: PathBuf = match (&resume, &area) {
            (Some(resume), _) => resume.path().to_path_buf(),
            (None, Some(area)) => area.path().to_path_buf(),
            (None, None) => unreachable!("a run has a resume directory or a temporary area"),
        };
        Ok(WorkDir { resume, area, path })
    }

    /// Where the engine spills: this directory, holding candidate-stage entries by
    /// [`key_budget`] (the sketches are kept for the checkpoint of a resumable run).
    fn spilling(&self, limit: u64) -> Spilling {
        Spilling {
            dir: std::sync::Arc::new(FileSpillDir {
                path: self.path.clone(),
                keep_sketches: self.resume.is_some(),
            }),
            budget: key_budget(limit),
        }
    }

    /// The checkpoint of `stage` an earlier run left, when this run is resumable.
    fn load(&self, stage: Stage) -> Result<Option<Vec<u8>>> {
        match self.resume.as_ref().map(|r| r.load(stage)).transpose()? {
            Some(Some(payload)) => Ok(Some(payload)),
            _ => Ok(None),
        }
    }

    /// The last stage an earlier run checkpointed, when this run is resumable.
    fn last(&self) -> Option<Stage> {
        self.resume.as_ref().and_then(ResumeDir::last)
    }

    /// Removes the temporary area, or marks the resume directory complete; what a resumable
    /// run took up (from `resumed`, the last stage whose checkpoint it took up).
    fn close(self, resumed: Option<&'static str>) -> Option<ResumeStats> {
        let WorkDir {
            mut resume, area, ..
        } = self;
        drop(area);
        let resume_stats = resume.as_mut().map(|resume| {
            resume.complete();
            ResumeStats {
                from: resumed,
                discarded: resume.discarded().map(str::to_owned),
            }
        });
        drop(resume);
        resume_stats
    }
}

/// The lines of a resumable run's manifest besides its inputs: what must not change for its
/// checkpoints to be taken up.
fn manifest_head<M: Registered>(
    method: &M,
    config: &RunConfig,
    engine: EngineOptions,
) -> Vec<String> {
    vec![
        format!("neardup {}", env!("CARGO_PKG_VERSION")),
        // Raised whenever a checkpoint's layout changes, so that checkpoints of
        // another layout are discarded, not read.
        format!("checkpoints {CHECKPOINT_LAYOUT}"),
        format!(
            "method {} {}",
            method.name(),
            Value::Object(settings_json(method.settings()))
        ),
        format!("input {:?}", config.input),
        format!("engine {engine:?}"),
    ]
}

/// `paths` with each input that cannot be read twice (standard input, a FIFO, a descriptor:
/// [`crate::paths::read_once`]) copied to `name` (then `name-2`, ...) in `work`, the bytes
/// copied added to `spilled`. A copy keeps the input's extension, so that its format and
/// compression are told as they would be from its name.
fn copy_read_once(
    paths: &[String],
    name: &str,
    work: &Path,
    spilled: &mut u64,
) -> Result<Vec<String>> {
    let mut opened = Vec::with_capacity(paths.len());
    let mut copies = 0;
    for path in paths {
        if !crate::paths::read_once(path) {
            opened.push(path.clone());
            continue;
        }
        copies += 1;
        let suffix = match copies {
            1 => String::new(),
            n => format!("-{n}"),
        };
        let extension = match path.as_str() {
            STANDARD => String::new(),
            _ => (Path::new(path).file_name().and_then(|n| n.to_str()))
                .and_then(|n| n.split_once('.'))
                .map(|(_, extension)| format!(".{extension}"))
                .unwrap_or_default(),
        };
        let copy = work.join(format!("{name}{suffix}{extension}"));
        let mut file = std::fs::File::create(&copy).map_err(|error| Error::Io {
            path: copy.display().to_string(),
            error,
        })?;
        let shown = crate::paths::display_input(path);
        let copied = match path.as_str() {
            STANDARD => std::io::copy(&mut std::io::stdin().lock(), &mut file),
            _ => {
                let mut input = std::fs::File::open(path).map_err(|error| Error::Io {
                    path: shown.to_owned(),
                    error,
                })?;
                std::io::copy(&mut input, &mut file)
            }
        };
        *spilled += copied.map_err(|e| {
            Error::Parameter(neardup_core::Error::invalid(
                "temp_dir",
                format!("copying {shown} to {}: {e}", copy.display()),
            ))
        })?;
        opened.push(copy.display().to_string());
    }
    Ok(opened)
}

/// A streamed run between its stages.
struct Stream<'a, M> {
    method: &'a M,
    engine: EngineOptions,
    sides: Sides<'a>,
    work: &'a WorkDir,
    progress: &'a dyn Progress,
    /// The last stage whose checkpoint was taken up.
    resumed: Option<&'static str>,
    /// The ids, while the stages that do not need them run.
    parked: Option<ParkedSides>,
}

impl<M: Registered> Stream<'_, M> {
    /// The corpus pass, when the method learns from the corpus: what the first read found
    /// (ids, places, skips) is kept, and the second read replays it (no table of ids, no
    /// second copy of the ids); a corpus pass taken up from a checkpoint has only its
    /// summary, and the second read is a full one checked against it.
    fn corpus_pass(&mut self) -> Result<Option<(CorpusPass, Option<SidesRead>)>> {
        if !self.method.learns_from_corpus() {
            return Ok(None);
        }
        match self.work.load(Stage::Corpus)? {
            Some(payload) => {
                self.resumed = Some(Stage::Corpus.name());
                Ok(Some((decode_corpus_checkpoint(&payload)?, None)))
            }
            None if self.work.last() == Some(Stage::Sketch) => Ok(None),
            None => {
                let (pass, read) = self.read_corpus()?;
                Ok(Some((pass, Some(read))))
            }
        }
    }

    /// The corpus pass run: the inputs read once, their texts given to a [`CorpusLearner`].
    fn read_corpus(&mut self) -> Result<(CorpusPass, SidesRead)> {
        let started = Instant::now();
        let progress = self.progress;
        progress.stage_bytes("read+corpus", self.sides.total_bytes());
        // The table's memory is `--corpus-memory` on either path, so that both
        // count alike (it is not shrunk to fit a small limit).
        let mut learner = CorpusLearner::new(self.engine.corpus_memory);
        let method = self.method;
        let mut read = self.sides.read(progress, &mut |texts| {
            learner.push(method, &texts, &NoProgress);
            Ok(())
        })?;
        // Kept through the run: without the slack of a read of unknown size.
        read.reference_meta.shrink_to_fit();
        read.corpus_meta.shrink_to_fit();
        let pass = CorpusPass {
            stats: learner.finish(),
            seconds: started.elapsed().as_secs_f64(),
            summary: read.summary(),
        };
        if let Some(resume) = &self.work.resume {
            resume.save(Stage::Corpus, &encode_corpus_checkpoint(&pass))?;
        }
        // The replayed read needs places, not ids: they wait on disk (a resumable
        // run's sketch checkpoint holds them, so it parks them after that stage).
        if self.work.resume.is_none() {
            self.parked = Some(ParkedSides::park(&mut read, &self.work.path)?);
        }
        Ok((pass, read))
    }

    /// The sketch stage, taken up from its checkpoint (`sketched`) or run by reading the
    /// inputs again. A replayed read is the first read itself (checked as it went): only
    /// the others are compared with the first read's summary.
    fn sketch<'l>(
        &mut self,
        learned: &'l Learned<M>,
        sketched: Option<Vec<u8>>,
        first_read: Option<ReadSummary>,
        first_full: Option<SidesRead>,
        spilling: Spilling,
    ) -> Result<(Sketcher<'l, M>, SidesRead)> {
        let (sketcher, read, replayed) = match sketched {
            Some(payload) => {
                self.resumed = Some(Stage::Sketch.name());
                let (state, read) = split_sketch_checkpoint(&payload)?;
                let sketcher = Sketcher::resume(learned.method(), state, spilling)?;
                (sketcher, read, false)
            }
            None => self.read_sketches(learned, first_read, first_full, spilling)?,
        };
        if let Some(first) = first_read.as_ref().filter(|_| !replayed) {
            if *first != read.summary() {
                return Err(self.sides.changed());
            }
        }
        Ok((sketcher, read))
    }

    /// The sketch stage run: the inputs read (or the first read replayed), their texts
    /// given to a spilling [`Sketcher`]; its checkpoint saved when the run is resumable.
    /// Also returns whether the read was a replay.
    fn read_sketches<'l>(
        &self,
        learned: &'l Learned<M>,
        first_read: Option<ReadSummary>,
        first_full: Option<SidesRead>,
        spilling: Spilling,
    ) -> Result<(Sketcher<'l, M>, SidesRead, bool)> {
        let progress = self.progress;
        let documents = (first_read.as_ref()).map(|summary| summary.reference.0 + summary.corpus.0);
        progress.stage_bytes("read+sketch", self.sides.total_bytes());
        let mut sketcher = Sketcher::new(learned.method(), documents, Some(spilling), &NoProgress)?;
        let sizes = first_read.map(|summary| (summary.reference, summary.corpus));
        let mut each = |texts| -> Result<()> {
            sketcher.push_owned(texts, &NoProgress)?;
            Ok(())
        };
        let (read, replayed) = match first_full {
            Some(first) => (self.sides.replay(first, progress, &mut each)?, true),
            None => (self.sides.read_sized(sizes, progress, &mut each)?, false),
        };
        if let Some(resume) = &self.work.resume {
            let state = sketcher.checkpoint()?;
            resume.save(Stage::Sketch, &encode_sketch_checkpoint(&state, &read))?;
        }
        Ok((sketcher, read, replayed))
    }
}

/// What writing the kept records of a streamed run needs: the inputs, read once more.
struct KeptAgain<'a> {
    config: &'a RunConfig,
    inputs_opened: &'a [String],
    corpus: &'a Corpus,
    corpus_meta: &'a Meta,
}

impl KeptAgain<'_> {
    /// Writes the records whose `duplicate_of` is `None` (one entry per input record, in
    /// order), by reading the inputs once more; fails when they changed since the first read.
    /// Returns the texts of the records numbered `wanted` (sorted), taken on the way.
    fn write(
        &self,
        duplicate_of: &[Option<u32>],
        wanted: &[usize],
        kept: &mut AtomicOutput,
    ) -> Result<HashMap<usize, String>> {
        let mut texts = HashMap::new();
        let config = self.config;
        let corpus_meta = self.corpus_meta;
        let mut index = 0;
        let mut count = Corpus::default();
        write_kept_streamed(&self.corpus.sources, kept, |write| {
            let again = read_inputs_replayed(
                &config.inputs,
                self.inputs_opened,
                &config.input,
                corpus_meta,
                &mut |record| {
                    if wanted.binary_search(&index).is_ok() {
                        texts.insert(index, record.text.clone());
                    }
                    let keep = duplicate_of.get(index).is_some_and(Option::is_none);
                    index += 1;
                    if keep {
                        write(&record)?;
                    }
                    Ok(())
                },
            )?;
            count = again;
            Ok(())
        })?;
        if index != corpus_meta.len() || count.bytes_read != self.corpus.bytes_read {
            return Err(changed(&config.inputs));
        }
        Ok(texts)
    }
}

/// As in memory: without an id field, reference documents are named by file and line.
fn name_reference(config: &RunConfig, reference: &Corpus, reference_meta: &mut Meta) {
    if !config.against.is_empty() && config.input.id_field.is_none() {
        reference_meta.ids = (reference_meta
            .sources
            .iter()
            .zip(reference_meta.lines.iter()))
        .map(|(source, line)| {
            let path = &reference.sources[source as usize].path;
            Value::String(format!("{path}:{line}"))
        })
        .collect();
    }
}

/// Bytes of candidate-stage entries a spilling run under `limit` holds before sorting them
/// into a run on disk: an eighth of the limit, between 1 MiB and 256 MiB.
fn key_budget(limit: u64) -> usize {
    usize::try_from(limit / 8)
        .unwrap_or(usize::MAX)
        .clamp(1 << 20, 256 << 20)
}

#[cfg(test)]
mod tests {
    use super::*;
    use neardup_core::registry::Params;

    #[test]
    fn the_key_budget_is_an_eighth_of_the_limit_within_bounds() {
        assert_eq!(key_budget(0), 1 << 20);
        assert_eq!(key_budget(64 << 20), 8 << 20);
        assert_eq!(key_budget(u64::MAX), 256 << 20);
    }

    #[test]
    fn paths_other_than_standard_input_are_read_where_they_are() {
        let dir = tempfile::tempdir().unwrap();
        let mut spilled = 0;
        let paths = ["a.jsonl".to_owned(), "b.txt".to_owned()];
        let opened = copy_read_once(&paths, "stdin", dir.path(), &mut spilled).unwrap();
        assert_eq!(opened, paths);
        assert_eq!(spilled, 0);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_copied_once_under_its_extension() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("in.jsonl.gz");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("skipped: mkfifo is not available");
            return;
        }
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::write(fifo, b"abc").unwrap())
        };
        let work = tempfile::tempdir().unwrap();
        let paths = [fifo.display().to_string(), "b.txt".to_owned()];
        let mut spilled = 0;
        let opened = copy_read_once(&paths, "stdin", work.path(), &mut spilled).unwrap();
        writer.join().unwrap();
        let copy = work.path().join("stdin.jsonl.gz");
        assert_eq!(opened, [copy.display().to_string(), "b.txt".to_owned()]);
        assert_eq!(
            (spilled, std::fs::read(&copy).unwrap()),
            (3, b"abc".to_vec())
        );
    }

    #[test]
    fn reference_documents_are_named_by_file_and_line_without_an_id_field() {
        let mut config = RunConfig::new(vec!["in".into()], "-".into(), "exact", Params::new());
        config.against = vec!["ref.txt".into()];
        let mut reference = Corpus::default();
        reference.sources.push(crate::input::Source {
            path: "ref.txt".into(),
            format: crate::input::Format::Text,
            csv_headers: None,
            parquet: None,
            reread: None,
        });
        let mut meta = Meta::default();
        for line in [1, 4] {
            meta.ordinals.push(line);
            meta.sources.push(0);
            meta.lines.push(line);
        }
        name_reference(&config, &reference, &mut meta);
        assert_eq!(meta.id(1), Value::from("ref.txt:4"));
        let mut with_ids = Meta::default();
        config.input.id_field = Some("id".into());
        name_reference(&config, &reference, &mut with_ids);
        assert_eq!(with_ids.ids.len(), 0);
    }

    #[test]
    fn the_manifest_names_the_layout_the_method_and_the_options() {
        struct Head(RunConfig);
        impl neardup_core::registry::MethodVisitor for Head {
            type Output = Vec<String>;
            fn visit<M: Registered>(self, method: M) -> Vec<String> {
                manifest_head(&method, &self.0, EngineOptions::default())
            }
        }
        let config = RunConfig::new(vec!["in".into()], "-".into(), "minhash", Params::new());
        let params = Params::new().set("permutations", "64");
        let head = neardup_core::registry::with_method("minhash", &params, Head(config)).unwrap();
        assert_eq!(head[1], format!("checkpoints {CHECKPOINT_LAYOUT}"));
        assert!(head[2].starts_with("method minhash {"), "{}", head[2]);
        assert!(head[2].contains("\"permutations\":64"), "{}", head[2]);
        assert!(head[3].starts_with("input ") && head[4].starts_with("engine "));
    }
}
