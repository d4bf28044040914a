//! The spilling path (sketches in a [`Spill`], texts given in blocks) against the in-memory
//! path: the same outcome for every registered method, both cluster modes, any block size,
//! one and two threads, with a template flood that makes `minhash` mark common shingles on
//! spilled sketches and the candidate budget cut in.

use neardup_core::cluster::{ClusterMode, KeepPolicy};
use neardup_core::registry::{self, MethodVisitor, Params, Registered};
use neardup_core::Method;
use neardup_engine::sketch_store::{MemorySpillDir, Spill, SpillDir, Spilling};
use neardup_engine::{dedup, CorpusLearner, EngineOptions, Learned, NoProgress, Outcome, Sketcher};

/// The shipped news (with reposts and edits), a template flood, short and empty texts.
fn corpus() -> Vec<String> {
    let mut texts: Vec<String> = include_str!("../../../examples/news.jsonl")
        .lines()
        .map(|line| {
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            value["text"].as_str().unwrap().to_owned()
        })
        .collect();
    for n in 0..150 {
        texts.push(format!(
            "【顺丰速运】您的快件{n:04}已由本人签收，如有疑问请致电客服热线，感谢您使用顺丰速运，祝您生活愉快。"
        ));
    }
    texts.extend(["".to_owned(), "好".to_owned(), "。。。".to_owned()]);
    let copy = texts[3].clone();
    texts.push(copy);
    texts
}

/// The outcome through the spilling path: the corpus pass and the sketch stage fed
/// `block` texts at a time, sketches spilled to memory.
fn streamed<M: Method>(
    method: &M,
    texts: &[String],
    options: EngineOptions,
    block: usize,
) -> (Outcome, u64) {
    let corpus = method.learns_from_corpus().then(|| {
        let mut learner = CorpusLearner::new(options.corpus_memory);
        for chunk in texts.chunks(block) {
            learner.push(method, chunk, &NoProgress);
        }
        (learner.finish(), 0.0)
    });
    let learned = Learned::new(method, corpus, options).unwrap();
    // A budget of 1 byte: the candidate stage writes runs of its smallest size (1,024
    // entries), so the merge sees many runs.
    let spilling = Spilling {
        dir: std::sync::Arc::new(MemorySpillDir),
        budget: 1,
    };
    let mut sketcher = Sketcher::new(
        learned.method(),
        Some(texts.len()),
        Some(spilling),
        &NoProgress,
    )
    .unwrap();
    for chunk in texts.chunks(block) {
        sketcher.push_owned(chunk.to_vec(), &NoProgress).unwrap();
    }
    let mut outcome = sketcher.finish(options, &NoProgress).unwrap();
    learned.complete(&mut outcome);
    let spilled = outcome.stats.spilled_bytes;
    (outcome, spilled)
}

/// Everything an outcome says but its timings and spill size.
fn summary(outcome: &Outcome) -> String {
    let mut stats = outcome.stats.clone();
    stats.seconds.clear();
    stats.spilled_bytes = 0;
    format!(
        "{:?}\n{:?}\n{:?}\n{:?}\n{stats:?}",
        outcome.assignment, outcome.leader_pairs, outcome.groups, outcome.distances
    )
}

struct Compare<'a> {
    texts: &'a [String],
    options: EngineOptions,
}

impl MethodVisitor for Compare<'_> {
    type Output = ();
    fn visit<M: Registered>(self, method: M) {
        let expected = dedup(&method, self.texts, self.options, &NoProgress).unwrap();
        for block in [1, 64] {
            let (got, spilled) = streamed(&method, self.texts, self.options, block);
            assert!(spilled > 0, "{}: nothing was spilled", method.name());
            assert_eq!(
                summary(&got),
                summary(&expected),
                "{} with blocks of {block}",
                method.name()
            );
        }
    }
}

#[test]
fn every_method_spilled_equals_in_memory() {
    let texts = corpus();
    for spec in registry::methods() {
        // `connected` reads sketches by offset for its similarities: minhash covers it.
        let modes: &[ClusterMode] = match spec.name {
            "minhash" => &[ClusterMode::Representative, ClusterMode::Connected],
            _ => &[ClusterMode::Representative],
        };
        for &cluster in modes {
            let options = EngineOptions {
                cluster,
                keep: KeepPolicy::Longest,
                ..EngineOptions::default()
            };
            let compare = Compare {
                texts: &texts,
                options,
            };
            registry::with_method(spec.name, &Params::new(), compare).unwrap();
        }
    }
}

/// With `templates = duplicate`, the methods whose templated texts meet through their
/// template keys (`anchor_pairs`) give the same outcome spilled: the engine walks a
/// symmetric join's keys itself when it spills, and `imatch` and `topn` under the policy add
/// the anchors' pairs to them (before, the spilled path left the anchors out).
#[test]
fn every_method_spilled_equals_in_memory_with_templates_duplicate() {
    let texts = corpus();
    for spec in registry::methods() {
        if !spec.params.iter().any(|param| param.name == "templates") {
            continue;
        }
        let compare = Compare {
            texts: &texts,
            options: EngineOptions::default(),
        };
        let params = Params::new().set("templates", "duplicate");
        registry::with_method(spec.name, &params, compare).unwrap();
    }
}

#[test]
fn spilled_marks_common_features_and_keeps_the_budget() {
    let mut texts = corpus();
    // A tiny bucket cap and budget make the limits cut in on a crowd too small to be a
    // template's (the flood's notices are keyed by their numbers, see `MinHash::keys`);
    // minhash's common-shingle check marks the flood's wording on spilled sketches.
    let words = [
        "amid", "after", "despite", "before", "during", "as", "while", "since",
    ];
    texts.extend(words.iter().flat_map(|word| {
        (1..4).map(move |n| {
            format!("The central bank raised its key rate by a quarter point today {word} {n} weeks of turmoil in the markets")
        })
    }));
    let options = EngineOptions {
        bucket_cap: 3,
        candidate_budget: 1,
        ..EngineOptions::default()
    };
    let compare = Compare {
        texts: &texts,
        options,
    };
    registry::with_method("minhash", &Params::new(), compare).unwrap();
    let method = neardup_core::methods::minhash::MinHashBuilder::new()
        .build()
        .unwrap();
    let (outcome, _) = streamed(&method, &texts, options, 13);
    assert!(outcome.stats.budget_hits > 0, "{:?}", outcome.stats);
    assert!(
        outcome.stats.boilerplate.discounted_features > 0,
        "{:?}",
        outcome.stats
    );
}

#[test]
fn spilled_is_the_same_on_one_and_two_threads() {
    let texts = corpus();
    let method = neardup_core::methods::minhash::MinHashBuilder::new()
        .build()
        .unwrap();
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| summary(&streamed(&method, &texts, EngineOptions::default(), 50).0))
    };
    assert_eq!(run(1), run(2));
}

/// A spill that fails to write, as a full disk does.
struct Full;

impl SpillDir for Full {
    fn create(&self, _name: &str) -> Result<Box<dyn Spill>, String> {
        Ok(Box::new(Full))
    }
}

impl Spill for Full {
    fn append(&mut self, _bytes: &[u8]) -> Result<(), String> {
        Err("/tmp/x/sketches: No space left on device (os error 28)".to_owned())
    }
    fn flush(&mut self) -> Result<(), String> {
        Ok(())
    }
    fn read_at(&self, _offset: u64, _buffer: &mut [u8]) -> Result<(), String> {
        Err("nothing written".to_owned())
    }
}

#[test]
fn a_spill_that_cannot_be_written_is_an_error_naming_temp_dir() {
    let method = neardup_core::methods::minhash::MinHashBuilder::new()
        .build()
        .unwrap();
    let spilling = Spilling {
        dir: std::sync::Arc::new(Full),
        budget: 1,
    };
    let mut sketcher = Sketcher::new(&method, None, Some(spilling), &NoProgress).unwrap();
    let error = sketcher
        .push_owned(vec!["一".into(), "二".into()], &NoProgress)
        .unwrap_err();
    assert_eq!(error.parameter(), "temp_dir");
    assert!(error.message().contains("No space left"), "{error}");
}

#[test]
fn texts_must_match_the_announced_count() {
    let method = neardup_core::methods::minhash::MinHashBuilder::new()
        .build()
        .unwrap();
    let mut sketcher = Sketcher::new(&method, Some(1), None, &NoProgress).unwrap();
    let error = sketcher
        .push_owned(vec!["一".into(), "二".into()], &NoProgress)
        .unwrap_err();
    assert_eq!(error.parameter(), "documents");
    let sketcher = Sketcher::new(&method, Some(3), None, &NoProgress).unwrap();
    let error = sketcher
        .finish(EngineOptions::default(), &NoProgress)
        .unwrap_err();
    assert_eq!(error.parameter(), "documents");
}

/// Spills in memory that a later sketch stage can open again by name, as the pipeline's
/// files of a resumable run.
#[derive(Default)]
struct NamedSpills(std::sync::Mutex<std::collections::HashMap<String, SharedSpill>>);

#[derive(Clone, Default)]
struct SharedSpill(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl Spill for SharedSpill {
    fn append(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(())
    }
    fn flush(&mut self) -> Result<(), String> {
        Ok(())
    }
    fn read_at(&self, offset: u64, buffer: &mut [u8]) -> Result<(), String> {
        let bytes = self.0.lock().unwrap();
        let start = offset as usize;
        let slice = bytes.get(start..start + buffer.len()).ok_or("short read")?;
        buffer.copy_from_slice(slice);
        Ok(())
    }
}

impl SpillDir for NamedSpills {
    fn create(&self, name: &str) -> Result<Box<dyn Spill>, String> {
        let spill = SharedSpill::default();
        self.0
            .lock()
            .unwrap()
            .insert(name.to_owned(), spill.clone());
        Ok(Box::new(spill))
    }
    fn open(&self, name: &str) -> Result<Box<dyn Spill>, String> {
        match self.0.lock().unwrap().get(name) {
            Some(spill) => Ok(Box::new(spill.clone())),
            None => Err(format!("no spill {name}")),
        }
    }
}

struct Resumed<'a> {
    texts: &'a [String],
}

impl MethodVisitor for Resumed<'_> {
    type Output = ();
    fn visit<M: Registered>(self, method: M) {
        let options = EngineOptions::default();
        let expected = dedup(&method, self.texts, options, &NoProgress).unwrap();
        // The corpus counts go through their checkpoint encoding.
        let corpus = method.learns_from_corpus().then(|| {
            let mut learner = CorpusLearner::new(options.corpus_memory);
            learner.push(&method, self.texts, &NoProgress);
            let mut out = neardup_core::codec::Encoder::new();
            learner.finish().encode(&mut out);
            let bytes = out.finish();
            let mut from = neardup_core::codec::Decoder::new(&bytes).unwrap();
            let stats = neardup_core::corpus::CorpusStats::decode(&mut from).unwrap();
            (stats, 0.0)
        });
        let learned = Learned::new(&method, corpus, options).unwrap();
        let dir = std::sync::Arc::new(NamedSpills::default());
        let spilling = Spilling {
            dir: dir.clone(),
            budget: 1,
        };
        let half = self.texts.len() / 2;
        let mut sketcher = Sketcher::new(
            learned.method(),
            Some(self.texts.len()),
            Some(spilling.clone()),
            &NoProgress,
        )
        .unwrap();
        sketcher
            .push_owned(self.texts[..half].to_vec(), &NoProgress)
            .unwrap();
        let checkpoint = sketcher.checkpoint().unwrap();
        drop(sketcher);
        // A sketch stage taken up from the checkpoint goes on where the first one stopped.
        let mut sketcher = Sketcher::resume(learned.method(), &checkpoint, spilling).unwrap();
        sketcher
            .push_owned(self.texts[half..].to_vec(), &NoProgress)
            .unwrap();
        let mut got = sketcher.finish(options, &NoProgress).unwrap();
        // A damaged checkpoint is refused with an error, not a panic.
        let mut damaged = checkpoint.clone();
        let middle = damaged.len() / 2;
        damaged[middle] ^= 1;
        let spilling = Spilling { dir, budget: 1 };
        let error = Sketcher::resume(learned.method(), &damaged, spilling)
            .err()
            .unwrap();
        assert_eq!(error.parameter(), "checkpoint", "{error}");
        learned.complete(&mut got);
        assert_eq!(summary(&got), summary(&expected), "{}", method.name());
    }
}

#[test]
fn every_method_resumes_from_a_sketch_checkpoint() {
    let texts = corpus();
    for spec in registry::methods() {
        registry::with_method(spec.name, &Params::new(), Resumed { texts: &texts }).unwrap();
    }
}

/// A spill directory whose `prechecks` spill reads back scrambled: every document's bytes
/// after the first replaced by ones of its own, so no two pre-checks agree.
struct ScrambledPrechecks;

struct Scrambled(Box<dyn Spill>);

impl Spill for Scrambled {
    fn append(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.0.append(bytes)
    }
    fn flush(&mut self) -> Result<(), String> {
        self.0.flush()
    }
    fn read_at(&self, offset: u64, buffer: &mut [u8]) -> Result<(), String> {
        self.0.read_at(offset, buffer)?;
        for (i, byte) in buffer.iter_mut().enumerate().skip(1) {
            *byte = (offset as u8).wrapping_mul(7).wrapping_add(i as u8);
        }
        Ok(())
    }
}

impl SpillDir for ScrambledPrechecks {
    fn create(&self, name: &str) -> Result<Box<dyn Spill>, String> {
        let spill = MemorySpillDir.create(name)?;
        Ok(match name {
            "prechecks" => Box::new(Scrambled(spill)),
            _ => spill,
        })
    }
}

/// A spill directory that counts the bytes appended to each spill, by name.
#[derive(Default)]
struct Counting(std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, u64>>>);

struct Counted {
    spill: Box<dyn Spill>,
    name: String,
    counts: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, u64>>>,
}

impl Spill for Counted {
    fn append(&mut self, bytes: &[u8]) -> Result<(), String> {
        *self
            .counts
            .lock()
            .unwrap()
            .entry(self.name.clone())
            .or_default() += bytes.len() as u64;
        self.spill.append(bytes)
    }
    fn flush(&mut self) -> Result<(), String> {
        self.spill.flush()
    }
    fn read_at(&self, offset: u64, buffer: &mut [u8]) -> Result<(), String> {
        self.spill.read_at(offset, buffer)
    }
}

impl SpillDir for Counting {
    fn create(&self, name: &str) -> Result<Box<dyn Spill>, String> {
        Ok(Box::new(Counted {
            spill: MemorySpillDir.create(name)?,
            name: name.to_owned(),
            counts: self.0.clone(),
        }))
    }
}

#[test]
fn spilled_minhash_pairs_pass_their_prechecks_first() {
    // With its pre-checks scrambled, a spilled run refuses every candidate before reading
    // the sketches: the pre-checks are consulted, and the run that reads them intact equals
    // the in-memory run (`every_method_spilled_equals_in_memory`).
    let texts = corpus();
    let method = neardup_core::methods::minhash::MinHashBuilder::new()
        .build()
        .unwrap();
    assert!(method.pair_precheck().is_some());
    let run = |dir: std::sync::Arc<dyn SpillDir>| {
        let spilling = Spilling { dir, budget: 1 };
        let mut sketcher = Sketcher::new(&method, None, Some(spilling), &NoProgress).unwrap();
        sketcher.push(&texts, &NoProgress).unwrap();
        sketcher
            .finish(EngineOptions::default(), &NoProgress)
            .unwrap()
    };
    let intact = run(std::sync::Arc::new(MemorySpillDir));
    let mut sketcher = Sketcher::new(&method, None, None, &NoProgress).unwrap();
    sketcher.push(&texts, &NoProgress).unwrap();
    let held = sketcher
        .finish(EngineOptions::default(), &NoProgress)
        .unwrap();
    assert_eq!(intact.leader_pairs, held.leader_pairs);
    assert!(intact.stats.verified_pairs > 0);
    // The pre-checks' bytes (129 a document) count as spilled, with the sketches' own.
    let counting = std::sync::Arc::new(Counting::default());
    let counted = run(counting.clone());
    let written = counting.0.lock().unwrap().clone();
    assert_eq!(written["prechecks"], 129 * texts.len() as u64);
    assert_eq!(counted.stats.spilled_bytes, written.values().sum::<u64>());
    let scrambled = run(std::sync::Arc::new(ScrambledPrechecks));
    assert_eq!(
        scrambled.stats.candidate_pairs,
        intact.stats.candidate_pairs
    );
    assert_eq!(scrambled.stats.verified_pairs, 0);
}
