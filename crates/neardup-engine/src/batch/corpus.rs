//! The corpus pass: the document frequencies a method learns from its corpus before the
//! first document is sketched ([`Method::learns_from_corpus`]), and the learned method.

use std::time::Instant;

use neardup_core::corpus::ExactShard;
use neardup_core::hash::hash128_u64s;
use neardup_core::sharded::ShardedTable;
use neardup_core::{CorpusStats, Error, Method, Result};
use rayon::prelude::*;

use super::options::{EngineOptions, Progress};
use super::outcome::Outcome;

/// A method ready to sketch: learned from the corpus when it learns from one (see
/// [`Method::learns_from_corpus`]), with what the run reports of that pass (its time, its
/// table, the lexicon to save). A run that reads its corpus in blocks makes the pass with a
/// [`CorpusLearner`] and gives it to [`Learned::new`].
pub struct Learned<M: Method> {
    method: M,
    /// Seconds of the corpus pass and (kind, bytes, documents) of its table.
    corpus: Option<(f64, (&'static str, usize, u64))>,
    lexicon: Option<String>,
}

impl<M: Method> Learned<M> {
    /// `method` after learning `corpus` (the counts of its corpus pass and the seconds it
    /// took), or as it is without one.
    ///
    /// # Errors
    /// [`EngineOptions::save_lexicon`] for a method without a lexicon (parameter
    /// `save_lexicon`), or a lexicon that cannot be written.
    pub fn new(
        method: &M,
        corpus: Option<(CorpusStats, f64)>,
        options: EngineOptions,
    ) -> Result<Learned<M>> {
        let mut method = method.clone();
        let corpus = corpus.map(|(stats, seconds)| {
            let stats = std::sync::Arc::new(stats);
            method.learn(&stats);
            (
                seconds,
                (stats.kind(), stats.memory_bytes(), stats.documents()),
            )
        });
        let lexicon = saved_lexicon(&method, options)?;
        Ok(Learned {
            method,
            corpus,
            lexicon,
        })
    }

    /// Learns from `texts` in memory when the method learns from a corpus.
    pub(super) fn from_texts<S: AsRef<str> + Sync>(
        method: &M,
        texts: &[S],
        options: EngineOptions,
        progress: &dyn Progress,
    ) -> Result<Learned<M>> {
        let corpus = method.learns_from_corpus().then(|| {
            let started = Instant::now();
            progress.stage("corpus", texts.len() as u64);
            let stats = learn_corpus(method, texts, options.corpus_memory, progress);
            (stats, started.elapsed().as_secs_f64())
        });
        Learned::new(method, corpus, options)
    }

    /// The method to sketch with.
    pub fn method(&self) -> &M {
        &self.method
    }

    /// Adds what was learned to the statistics of `outcome` (an outcome of
    /// [`Learned::method`]).
    pub fn complete(self, outcome: &mut Outcome) {
        let stats = &mut outcome.stats;
        stats.lexicon = self.lexicon;
        (stats.boilerplate.limits).splice(0..0, self.method.learned_limits());
        if let Some((seconds, table)) = self.corpus {
            stats.seconds.insert(0, ("corpus", seconds));
            stats.boilerplate.table = Some((table.0, table.1));
            stats.boilerplate.counted_documents = table.2;
        }
    }
}

/// The document frequencies of `method`'s corpus features over `texts` (see
/// [`Method::learns_from_corpus`]) in a table of at most `memory` bytes (exact when the
/// corpus surely fits, else count-min: [`neardup_core::corpus`]). Documents with the same
/// features (exact copies after normalisation) are counted once, so that a text reposted
/// verbatim many times does not look like boilerplate. Deterministic whatever the thread
/// count: the first of equal documents is counted, and counts are sums.
pub fn learn_corpus<M: Method, S: AsRef<str> + Sync>(
    method: &M,
    texts: &[S],
    memory: usize,
    progress: &dyn Progress,
) -> CorpusStats {
    let mut learner = CorpusLearner::new(memory);
    learner.push(method, texts, progress);
    learner.finish()
}

/// The corpus pass of [`learn_corpus`], fed block by block (a run that reads its input in
/// blocks gives each block to [`CorpusLearner::push`]); the counts do not depend on how the
/// texts were cut into blocks.
pub struct CorpusLearner {
    stats: CorpusStats,
    /// The texts counted so far, by the upper 64 bits of their identity (a hash of their
    /// distinct features), in shards so that growing does not hold the table twice: 9 bytes
    /// a slot where a set of the whole identities took 17, and a text counts once. Two
    /// different texts whose identities agree in 64 bits (about one chance in 10^5 at 20
    /// million texts) would count as one: the later one's features go uncounted, which moves
    /// a document frequency by one.
    seen: ShardedTable<u64>,
    memory: usize,
}

impl CorpusLearner {
    /// A corpus pass whose table holds at most `memory` bytes.
    pub fn new(memory: usize) -> CorpusLearner {
        // Exact counts until they outgrow `memory`, then count-min (the same cells whenever
        // the switch happens: see `CorpusStats::fit_within`).
        CorpusLearner {
            stats: CorpusStats::exact(),
            seen: ShardedTable::new(),
            memory,
        }
    }

    /// Counts the features of the next texts.
    pub fn push<M: Method, S: AsRef<str> + Sync>(
        &mut self,
        method: &M,
        texts: &[S],
        progress: &dyn Progress,
    ) {
        let (stats, seen) = (&mut self.stats, &mut self.seen);
        let mut start = 0;
        while start < texts.len() {
            // Blocks of about 4 MB of text bound the features held at once.
            let mut end = start;
            let mut block_bytes = 0;
            while end < texts.len() && (end == start || block_bytes < CORPUS_BLOCK_BYTES) {
                block_bytes += texts[end].as_ref().len();
                end += 1;
            }
            let featured: Vec<(u128, Vec<u64>)> = texts[start..end]
                .par_iter()
                .map(|text| {
                    let mut features = Vec::new();
                    method.corpus_features(text.as_ref(), &mut features);
                    features.sort_unstable();
                    features.dedup();
                    (hash128_u64s(&features), features)
                })
                .collect();
            let fresh: Vec<Vec<u64>> = featured
                .into_iter()
                .filter_map(|(identity, features)| {
                    let upper = (identity >> 64) as u64;
                    (seen.insert_new(upper, upper, |&v| v == upper, |&v| v)).then_some(features)
                })
                .collect();
            if let Some(shards) = stats.exact_shards_mut() {
                // One pass spreads the features over their shards; each shard then counts
                // its own (not every shard scanning every document).
                let mut by_shard: Vec<Vec<u64>> = vec![Vec::new(); shards.len()];
                for &feature in fresh.iter().flatten() {
                    by_shard[ExactShard::shard_of(feature)].push(feature);
                }
                (shards.par_iter_mut().zip(by_shard))
                    .for_each(|(shard, features)| shard.add_each(&features));
                stats.add_documents(fresh.len() as u64);
                stats.fit_within(self.memory);
            } else {
                fresh
                    .par_iter()
                    .for_each(|features| stats.add_shared(features));
                stats.add_documents(fresh.len() as u64);
            }
            progress.advance((end - start) as u64);
            start = end;
        }
    }

    /// The counts.
    pub fn finish(self) -> CorpusStats {
        self.stats
    }
}

/// Text bytes per block of the corpus pass.
const CORPUS_BLOCK_BYTES: usize = 4 << 20;

/// The method's lexicon when [`EngineOptions::save_lexicon`] asks for it, known before the
/// documents are sketched (so that a method without one fails at once).
fn saved_lexicon<M: Method>(method: &M, options: EngineOptions) -> Result<Option<String>> {
    if !options.save_lexicon {
        return Ok(None);
    }
    match method.lexicon() {
        Some(lexicon) => lexicon.map(Some),
        None => Err(Error::invalid(
            "save_lexicon",
            format!("method {} has no lexicon (imatch has one)", method.name()),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::testing::{word, Words};
    use crate::NoProgress;

    fn learning() -> Words {
        Words {
            learns: true,
            ..Words::default()
        }
    }

    #[test]
    fn exact_copies_count_once() {
        let texts = ["a b", "b a", "a c", "d"];
        let stats = learn_corpus(&learning(), &texts, 1 << 20, &NoProgress);
        assert_eq!(stats.documents(), 3);
        assert_eq!(stats.document_frequency(u64::from(word("a"))), 2);
        assert_eq!(stats.document_frequency(u64::from(word("d"))), 1);
    }

    #[test]
    fn the_counts_do_not_depend_on_the_blocks() {
        let texts: Vec<String> = (0..50)
            .map(|i| format!("w{} w{} x", i % 7, i % 3))
            .collect();
        let whole = learn_corpus(&learning(), &texts, 1 << 20, &NoProgress);
        let mut learner = CorpusLearner::new(1 << 20);
        for block in texts.chunks(9) {
            learner.push(&learning(), block, &NoProgress);
        }
        let blocks = learner.finish();
        assert_eq!(blocks.documents(), whole.documents());
        for feature in ["w0", "w1", "w6", "x"] {
            let feature = u64::from(word(feature));
            assert_eq!(
                blocks.document_frequency(feature),
                whole.document_frequency(feature)
            );
        }
    }

    #[test]
    fn a_learned_method_reports_its_pass() {
        let texts = ["a b", "a b", "c"];
        let options = EngineOptions::default();
        let learned = Learned::from_texts(&learning(), &texts, options, &NoProgress).unwrap();
        assert_eq!(learned.method().learned, Some(2));
        let mut outcome = crate::dedup(&Words::default(), &texts, options, &NoProgress).unwrap();
        learned.complete(&mut outcome);
        let stats = &outcome.stats;
        assert_eq!(stats.seconds.first().map(|s| s.0), Some("corpus"));
        assert_eq!(stats.boilerplate.table.map(|t| t.0), Some("exact"));
        assert_eq!(stats.boilerplate.counted_documents, 2);
        assert_eq!(stats.boilerplate.limits.first(), Some(&("documents", 2)));
    }

    #[test]
    fn a_method_that_does_not_learn_makes_no_pass() {
        let options = EngineOptions::default();
        let learned = Learned::from_texts(&Words::default(), &["a"], options, &NoProgress);
        assert_eq!(learned.unwrap().method().learned, None);
    }

    #[test]
    fn saving_a_lexicon_the_method_lacks_is_refused() {
        let options = EngineOptions {
            save_lexicon: true,
            ..EngineOptions::default()
        };
        let refused = Learned::new(&Words::default(), None, options)
            .err()
            .unwrap();
        assert!(refused.to_string().contains("save_lexicon"), "{refused}");
    }
}
