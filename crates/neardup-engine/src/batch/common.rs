//! Common shingles: for a method with a document-frequency limit
//! ([`Method::common_limit`]), the features more than that many leaders share are found
//! (counted in the crowded leaders, sampled elsewhere) and marked in the crowded leaders'
//! sketches ([`Method::mark_common`]) before candidates are generated.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use neardup_core::{CommonMarking, JoinShape, Method, Result};
use rayon::prelude::*;

use super::keys::{ExcludedRanks, GatheredKeys, Keyed};
use super::options::Progress;
use super::outcome::EngineStats;
use super::{for_each_sized_chunk, KEY_CHUNK};
use crate::sketch_store::{PrefixIndex, SketchStore, Spilling};
use neardup_index::ExternalKeys;

/// The leaders as the candidate stage will see them: their ranks, which of them are
/// exact-only (left out of candidates), and the bucket cap. The crowd check's walk of
/// spilled runs takes the candidate stage's first walk with them
/// ([`ExternalKeys::walk_first`]).
#[derive(Clone, Copy)]
pub(crate) struct Ranking<'a> {
    /// The leaders, ascending.
    pub(crate) leaders: &'a [u32],
    /// Per document, its rank.
    pub(crate) rank: &'a [u32],
    /// Per document, whether it takes part in exact-copy groups only.
    pub(crate) exact_only: &'a [bool],
    /// The candidate stage's bucket cap.
    pub(crate) bucket_cap: usize,
}

/// What the common-features stage found and marked.
pub(crate) struct CommonMarks<'d> {
    /// The document-frequency limit ([`Method::common_limit`]).
    pub(crate) limit: u64,
    /// Features marked, summed over the marked sketches.
    pub(crate) marked: u64,
    /// Whether the keys of a marked sketch changed ([`Method::marks_changed_keys`]).
    pub(crate) keys_changed: bool,
    /// The crowd check's `(key, leader)` entries of every leader (see [`GatheredKeys`]).
    pub(crate) gathered: Option<GatheredKeys<'d>>,
    /// Bytes the count of common features spilled.
    pub(crate) spilled: u64,
}

/// Marks the common features of the leaders' sketches when the method has a limit for
/// them (see [`mark_common`]); `None` for a method without one.
pub(crate) fn mark_common_features<'d, M: Method>(
    method: &M,
    sketches: &mut SketchStore<M::Sketch>,
    spilling: Option<&'d Spilling>,
    ranking: Ranking<'_>,
    progress: &dyn Progress,
) -> Result<Option<CommonMarks<'d>>> {
    let leaders = ranking.leaders;
    let Some(limit) = method.common_limit(leaders.len() as u64) else {
        return Ok(None);
    };
    progress.stage("common", leaders.len() as u64);
    let ((marked, keys_changed), gathered, spilled) =
        mark_common(method, sketches, spilling, ranking, limit)?;
    Ok(Some(CommonMarks {
        limit,
        marked,
        keys_changed,
        gathered,
        spilled,
    }))
}

impl<'d> CommonMarks<'d> {
    /// Adds the marks to `stats`; returns the crowd check's runs when the candidates can be
    /// found from them (marks leave keys alone), else counts their bytes here.
    pub(crate) fn record(self, stats: &mut EngineStats) -> Option<GatheredKeys<'d>> {
        stats.boilerplate.discounted_features += self.marked;
        stats.boilerplate.limits.push(("max_df", self.limit));
        stats.spilled_bytes += self.spilled;
        let keys = self.gathered?;
        // The runs' bytes count once: here, or with the candidates that read them.
        match (self.keys_changed, keys) {
            (true, GatheredKeys::Spilled(keys, _)) => {
                stats.spilled_bytes += keys.spilled();
                None
            }
            (true, GatheredKeys::Held { .. }) => None,
            (false, keys) => Some(keys),
        }
    }
}

/// Marks the common features of the crowded leaders' sketches (see [`crowded_documents`])
/// and returns how many were marked. A feature is common when more than `limit` leaders
/// have it (exact copies count once). Only the features of crowded leaders are counted: in
/// every crowded leader, and in a deterministic sample of one in [`SAMPLE`] of the others
/// (each counting [`SAMPLE`] times), by a sorted merge of each leader's features with them.
/// A template's wording is in all of its crowd; ordinary language is spread over the rest,
/// where a sample estimates its frequency.
///
/// When spilling, also returns the crowd check's runs of `(key, leader)` entries (see
/// [`crowded_documents`]) and the bytes the count of common features spilled.
fn mark_common<'d, M: Method>(
    method: &M,
    sketches: &mut SketchStore<M::Sketch>,
    spilling: Option<&'d Spilling>,
    ranking: Ranking<'_>,
    limit: u64,
) -> Result<((u64, bool), Option<GatheredKeys<'d>>, u64)> {
    let leaders = ranking.leaders;
    let (crowded, gathered) = crowded_documents(method, sketches, spilling, ranking, CROWD)?;
    let (common, spilled) = match spilling {
        Some(spilling) => {
            common_features_external(method, sketches, spilling, leaders, &crowded, limit)?
        }
        None => (
            common_features_held(method, sketches, leaders, &crowded, limit)?,
            0,
        ),
    };
    if common.is_empty() {
        return Ok(((0, false), gathered, spilled));
    }
    let mut marked = vec![false; sketches.len()];
    for &leader in leaders {
        marked[leader as usize] = crowded[leader as usize];
    }
    Ok((
        sketches.mark_common(method, common, marked)?,
        gathered,
        spilled,
    ))
}

/// The common features that [`mark_common`] finds, with the crowded leaders' features
/// gathered in memory.
fn common_features_held<M: Method>(
    method: &M,
    sketches: &SketchStore<M::Sketch>,
    leaders: &[u32],
    crowded: &[bool],
    limit: u64,
) -> Result<Vec<u32>> {
    let crowded_leaders: Vec<u32> = (leaders.iter().copied())
        .filter(|&leader| crowded[leader as usize])
        .collect();
    let mut keys: Vec<u32> = sketches
        .map_sorted(method, &crowded_leaders, |_, sketch| {
            method.frequency_features(sketch).to_vec()
        })?
        .concat();
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    keys.par_sort_unstable();
    keys.dedup();
    let counts: Vec<AtomicU32> = keys.iter().map(|_| AtomicU32::new(0)).collect();
    let index = PrefixIndex::new(&keys);
    // Crowded leaders are counted one by one; of the others, every SAMPLE-th (by
    // position) counts SAMPLE times.
    let counted: Vec<(u32, u32)> = (leaders.iter().enumerate())
        .filter_map(|(position, &leader)| match crowded[leader as usize] {
            true => Some((leader, 1)),
            false => (position % SAMPLE == 0).then_some((leader, SAMPLE as u32)),
        })
        .collect();
    let weights: Vec<u32> = counted.iter().map(|c| c.1).collect();
    let counted: Vec<u32> = counted.iter().map(|c| c.0).collect();
    // `counted` is sorted (leaders are): a leader's weight is found by its position.
    let position_of = |leader: u32| counted.binary_search(&leader).unwrap_or(0);
    sketches.map_sorted(method, &counted, |leader, sketch| {
        let weight = weights[position_of(leader)];
        for &value in method.frequency_features(sketch) {
            if let Some(at) = index.find(&keys, value) {
                counts[at].fetch_add(weight, Ordering::Relaxed);
            }
        }
    })?;
    let common: Vec<u32> = (keys.iter().zip(&counts))
        .filter(|(_, count)| u64::from(count.load(Ordering::Relaxed)) > limit)
        .map(|(&key, _)| key)
        .collect();
    Ok(common)
}

/// The common features that [`mark_common`] finds, counted by sorting `(feature, leader)`
/// entries in runs in the spill directory instead of gathering the crowded leaders' features
/// in memory: the same leaders are counted with the same weights (a crowded leader once, one
/// in [`SAMPLE`] of the others by position [`SAMPLE`] times), and a feature counts only when a
/// crowded leader has it. Also returns the bytes its runs took.
fn common_features_external<M: Method>(
    method: &M,
    sketches: &SketchStore<M::Sketch>,
    spilling: &Spilling,
    leaders: &[u32],
    crowded: &[bool],
    limit: u64,
) -> Result<(Vec<u32>, u64)> {
    let counted: Vec<u32> = (leaders.iter().enumerate())
        .filter(|&(position, &leader)| crowded[leader as usize] || position % SAMPLE == 0)
        .map(|(_, &leader)| leader)
        .collect();
    let mut external = ExternalKeys::new(spilling.dir.as_ref(), "common", spilling.budget);
    for_each_sized_chunk(&counted, spilling.budget, |chunk| {
        let features = sketches.map_sorted(method, chunk, |_, sketch| {
            method.frequency_features(sketch).to_vec()
        })?;
        let bytes = (features.iter()).map(|f| 24 + 4 * f.len()).sum();
        external.extend(
            (chunk.iter().zip(features)).flat_map(|(&leader, features)| {
                features
                    .into_iter()
                    .map(move |feature| (u64::from(feature), leader))
            }),
        )?;
        Ok(bytes)
    })?;
    let mut common = Vec::new();
    external.finish()?;
    external.walk(None, |feature, members| {
        if !members.iter().any(|&m| crowded[m as usize]) {
            return;
        }
        let count: u64 = (members.iter())
            .map(|&m| {
                if crowded[m as usize] {
                    1
                } else {
                    SAMPLE as u64
                }
            })
            .sum();
        if count > limit {
            common.push(feature as u32);
        }
    })?;
    Ok((common, external.spilled()))
}

/// One in this many uncrowded leaders is counted by [`mark_common`].
const SAMPLE: usize = 4;

/// A bucket of more than this many distinct documents is a crowd (see
/// [`crowded_documents`]): ten texts that agree on a whole LSH band are one text in ten
/// copies or ten fillings of one template.
const CROWD: u64 = 10;

/// Per document, whether it shares a bucket key with more than `limit` other leaders: a
/// member of a large group of near-identical texts (a template's notices), as opposed to a
/// document whose common features are spread over ordinary language. Only such documents
/// get the rare-feature check. Methods that do not find candidates by shared keys, or whose
/// keys do not gather a template's fillings ([`Method::marks_crowds_only`]), have all their
/// documents checked.
///
/// Also returns the entries the check sorted: every leader's distinct keys, as `(key,
/// rank)` entries in runs in the spill directory when spilling (`rank`: per document, its
/// rank), else as `(key, leader)` entries in memory.
fn crowded_documents<'d, M: Method>(
    method: &M,
    sketches: &SketchStore<M::Sketch>,
    spilling: Option<&'d Spilling>,
    ranking: Ranking<'_>,
    limit: u64,
) -> Result<(Vec<bool>, Option<GatheredKeys<'d>>)> {
    let Ranking { leaders, rank, .. } = ranking;
    if method.join().shape() != JoinShape::SymmetricKeys || !method.marks_crowds_only() {
        return Ok((vec![true; sketches.len()], None));
    }
    // By rank: the candidate stage walks these runs and pairs ranks, and a lookup per entry
    // in a table by document there missed the cache on a large corpus.
    let leader_entries = |documents: &[u32]| {
        sketches.flat_map_sorted(method, documents, |leader, sketch, keys, out| {
            method.keys(sketch, keys);
            keys.sort_unstable();
            keys.dedup();
            let ranked = rank[leader as usize];
            out.extend(keys.iter().map(|&key| (key, ranked)));
        })
    };
    let mut crowded = vec![false; sketches.len()];
    if let Some(spilling) = spilling {
        // The entries sorted in runs in the spill directory instead of in memory. Only the
        // keys that may be shared go there ([`SeenTwice`], its two bitmaps within a quarter
        // of the budget; its pass reads the spilled sketches once more).
        let room = (spilling.budget / 8).max(1 << 13) * 8;
        let bits = (leaders.len().saturating_mul(SeenTwice::BITS_PER_LEADER))
            .min(1 << (usize::BITS - 1 - room.leading_zeros()));
        let (seen, keyed) = SeenTwice::mark(method, sketches, leaders, bits)?;
        let mut external = ExternalKeys::new(spilling.dir.as_ref(), "crowd", spilling.budget);
        for_each_sized_chunk(leaders, spilling.budget, |chunk| {
            let mut entries = leader_entries(chunk)?;
            let bytes = entries.capacity() * std::mem::size_of::<(u64, u32)>();
            entries.retain(|&(key, _)| seen.may_share(key));
            external.extend(entries)?;
            Ok(bytes)
        })?;
        drop(seen);
        // A leader is crowded when one of its keys is: the members of the crowded keys'
        // buckets, marked as the merge meets them (no second scan of the sketches).
        external.finish()?;
        let mut crowded_ranks = vec![false; rank.len()];
        // The candidate stage walks these runs twice; the first of its walks is taken here.
        let excluded = ExcludedRanks::new(ranking.exact_only, rank);
        let map = |ranked: u32| excluded.map(ranked);
        external.walk_first((&map, rank.len()), ranking.bucket_cap, |_, members| {
            if members.len() as u64 > limit {
                for &member in members {
                    crowded_ranks[member as usize] = true;
                }
            }
        })?;
        for &leader in leaders {
            crowded[leader as usize] = crowded_ranks[rank[leader as usize] as usize];
        }
        return Ok((crowded, Some(GatheredKeys::Spilled(external, keyed))));
    }
    // One flat list of the shared keys' entries, sorted once: the crowds are its long
    // runs, and the candidate stage pairs the same list.
    let (entries, keyed) = shared_entries(method, sketches, leaders)?;
    for run in entries.chunk_by(|a, b| a.0 == b.0) {
        if run.len() as u64 > limit {
            for &(_, member) in run {
                crowded[member as usize] = true;
            }
        }
    }
    Ok((crowded, Some(GatheredKeys::Held { entries, keyed })))
}

/// The `(key, leader)` entries, sorted, of the keys that two leaders or more have (each
/// leader's keys counted once), and the leaders with a key.
///
/// Most keys of a corpus are one document's alone and pair nothing, so they are left out
/// before the sort ([`SeenTwice`]), and the runs of one entry left by the filter are dropped
/// after it. The list sorted and held is then the shared keys', a fraction of all (a tenth
/// on short Chinese posts), not every key.
fn shared_entries<M: Method>(
    method: &M,
    sketches: &SketchStore<M::Sketch>,
    leaders: &[u32],
) -> Result<(Vec<(u64, u32)>, Keyed)> {
    let bits = leaders.len().saturating_mul(SeenTwice::BITS_PER_LEADER);
    let (seen, keyed) = SeenTwice::mark(method, sketches, leaders, bits)?;
    let mut entries = sketches.flat_map_sorted(method, leaders, |leader, sketch, keys, out| {
        method.keys(sketch, keys);
        out.extend(
            keys.iter()
                .filter(|&&key| seen.may_share(key))
                .map(|&key| (key, leader)),
        );
    })?;
    drop(seen);
    entries.par_sort_unstable();
    entries.dedup();
    // Runs of one entry: keys that shared a bit only.
    // (Runs are short: a linear scan, not a search of the rest of the list per run.)
    let mut kept = 0;
    let mut at = 0;
    while at < entries.len() {
        let key = entries[at].0;
        let mut end = at + 1;
        while end < entries.len() && entries[end].0 == key {
            end += 1;
        }
        if end - at > 1 {
            entries.copy_within(at..end, kept);
            kept += end - at;
        }
        at = end;
    }
    entries.truncate(kept);
    entries.shrink_to_fit();
    Ok((entries, keyed))
}

/// The keys that may be had by two leaders or more: a first pass over every leader's keys
/// sets a key's bit in `once`, and in `twice` when it was set already (one bit per key hash,
/// so a key alone may share its bit with another and pass too: never the other way).
///
/// A key a leader gives twice marks itself: harmless, its entries fall out as a run of one.
struct SeenTwice {
    /// Word `2w` of the `once` bitmap, then word `2w` + 1 of `twice`: a key's two bits in
    /// one cache line, so that marking a key seen twice misses the cache once, not twice.
    words: Vec<AtomicU64>,
    shift: u32,
}

impl SeenTwice {
    /// Bits a leader of up to 64 keys gets: four or more a key, so that a key alone passes
    /// with a chance of a quarter at most (the share of bits set in `once`).
    const BITS_PER_LEADER: usize = 256;

    /// Marks the keys of `leaders` in bitmaps of about `bits` bits (a power of two from 2^16
    /// to 2^31); also returns the leaders with a key (one bit a document).
    fn mark<M: Method>(
        method: &M,
        sketches: &SketchStore<M::Sketch>,
        leaders: &[u32],
        bits: usize,
    ) -> Result<(SeenTwice, Keyed)> {
        let bits = bits.clamp(1 << 16, 1 << 31).next_power_of_two();
        let shift = 64 - bits.trailing_zeros();
        let words: Vec<AtomicU64> = (0..2 * (bits / 64)).map(|_| AtomicU64::new(0)).collect();
        let mut keyed = Keyed::new(sketches.len());
        // In chunks: a spilled store reads a chunk's sketches in blocks and holds what each
        // gives until the chunk is done.
        for chunk in leaders.chunks(KEY_CHUNK) {
            let found = sketches.flat_map_sorted(method, chunk, |leader, sketch, keys, out| {
                method.keys(sketch, keys);
                for &key in keys.iter() {
                    let bit = bit_of(key, shift);
                    let mask = 1u64 << (bit % 64);
                    if words[2 * (bit / 64)].fetch_or(mask, Ordering::Relaxed) & mask != 0 {
                        words[2 * (bit / 64) + 1].fetch_or(mask, Ordering::Relaxed);
                    }
                }
                if !keys.is_empty() {
                    out.push(leader);
                }
            })?;
            for leader in found {
                keyed.insert(leader);
            }
        }
        Ok((SeenTwice { words, shift }, keyed))
    }

    /// Whether `key` may be had by two leaders or more (true for every such key).
    fn may_share(&self, key: u64) -> bool {
        let bit = bit_of(key, self.shift);
        self.words[2 * (bit / 64) + 1].load(Ordering::Relaxed) & (1u64 << (bit % 64)) != 0
    }
}

/// The bit of `key` in a bitmap of `2^(64 - shift)` bits (keys of some methods are small
/// numbers: they are mixed first).
fn bit_of(key: u64, shift: u32) -> usize {
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::batch::testing::{word, Words};
    use crate::batch::Sketcher;
    use crate::NoProgress;
    use neardup_core::Join;

    /// No exact-only leaders: the flags of up to 64 documents, all false.
    const NONE_EXACT_ONLY: [bool; 64] = [false; 64];

    /// The leaders ranked by `rank`, none exact-only, a bucket cap of 100.
    fn ranked<'a>(leaders: &'a [u32], rank: &'a [u32]) -> Ranking<'a> {
        Ranking {
            leaders,
            rank,
            exact_only: &NONE_EXACT_ONLY[..rank.len()],
            bucket_cap: 100,
        }
    }

    /// The leaders ranked in their own order.
    fn plain(leaders: &[u32]) -> Ranking<'_> {
        ranked(leaders, leaders)
    }

    /// Twelve notices of one template (sharing `t`) and three ordinary texts.
    fn texts() -> Vec<String> {
        let mut texts: Vec<String> = (0..12).map(|i| format!("t n{i}")).collect();
        texts.extend(["a b", "b c", "c d"].map(String::from));
        texts
    }

    fn held(method: &Words) -> SketchStore<crate::batch::testing::WordSet> {
        SketchStore::Memory(texts().iter().map(|t| method.sketch(t)).collect())
    }

    #[test]
    fn the_prefix_index_finds_what_a_search_finds() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u32
        };
        for size in [0usize, 1, 2, 3, 17, 1000, 5000] {
            let mut keys: Vec<u32> = (0..size).map(|_| next()).collect();
            keys.extend([0, 1, u32::MAX].iter().take(size.min(3)));
            keys.sort_unstable();
            keys.dedup();
            let index = PrefixIndex::new(&keys);
            let probes: Vec<u32> = (0..2000)
                .map(|i| {
                    if i % 2 == 0 {
                        next()
                    } else {
                        keys.get(i % keys.len().max(1)).copied().unwrap_or(7)
                    }
                })
                .chain([0, 1, u32::MAX, u32::MAX - 1])
                .collect();
            for value in probes {
                assert_eq!(
                    index.find(&keys, value),
                    keys.binary_search(&value).ok(),
                    "{size} {value}"
                );
            }
        }
    }

    #[test]
    fn the_members_of_a_large_bucket_are_crowded() {
        let method = Words::default();
        let leaders: Vec<u32> = (0..15).collect();
        let (crowded, gathered) =
            crowded_documents(&method, &held(&method), None, plain(&leaders), CROWD).unwrap();
        let Some(GatheredKeys::Held { entries, keyed }) = gathered else {
            panic!("a held run gathers its entries in memory")
        };
        // The shared keys only: `t` in the twelve notices, `b` and `c` in two texts each.
        assert!(entries.is_sorted() && entries.len() == 12 + 2 + 2);
        assert_eq!(keyed.iter().collect::<Vec<u32>>(), leaders);
        assert_eq!(crowded, [vec![true; 12], vec![false; 3]].concat());
        let probe = Words {
            join: Join::Probe,
            ..Words::default()
        };
        let (crowded, _) =
            crowded_documents(&probe, &held(&probe), None, plain(&leaders), 10).unwrap();
        assert!(
            crowded.iter().all(|&c| c),
            "other joins check every document"
        );
    }

    #[test]
    fn the_template_word_is_marked_in_its_crowd() {
        let method = Words {
            common: Some(5),
            ..Words::default()
        };
        let mut sketches = held(&method);
        let leaders: Vec<u32> = (0..15).collect();
        let marks =
            mark_common_features(&method, &mut sketches, None, plain(&leaders), &NoProgress);
        let marks = marks.unwrap().unwrap();
        assert_eq!((marks.limit, marks.marked, marks.spilled), (5, 12, 0));
        let SketchStore::Memory(all) = &sketches else {
            unreachable!("held in memory")
        };
        assert!(all[..12].iter().all(|s| !s.words.contains(&word("t"))));
        assert_eq!(all[12], method.sketch("a b"));
        let mut stats = EngineStats::default();
        assert!(marks.record(&mut stats).is_none());
        assert_eq!(stats.boilerplate.discounted_features, 12);
        assert_eq!(stats.boilerplate.limits, vec![("max_df", 5)]);
    }

    #[test]
    fn a_method_without_a_limit_marks_nothing() {
        let method = Words::default();
        let marks =
            mark_common_features(&method, &mut held(&method), None, plain(&[0]), &NoProgress);
        assert!(marks.unwrap().is_none());
    }

    #[test]
    fn a_spilling_count_marks_what_the_held_count_marks() {
        let method = Words {
            common: Some(5),
            ..Words::default()
        };
        let spilling = Spilling {
            dir: Arc::new(crate::sketch_store::MemorySpillDir),
            budget: 64,
        };
        let mut sketcher =
            Sketcher::new(&method, None, Some(spilling.clone()), &NoProgress).unwrap();
        sketcher.push(&texts(), &NoProgress).unwrap();
        let (sketched, _) = sketcher.into_sketched().unwrap();
        let mut spilled = sketched.sketches;
        let leaders: Vec<u32> = (0..15).collect();
        // Ranks other than the documents' numbers: the spilled runs hold ranks.
        let rank: Vec<u32> = (0..15).rev().collect();
        let marks = mark_common_features(
            &method,
            &mut spilled,
            Some(&spilling),
            ranked(&leaders, &rank),
            &NoProgress,
        );
        let marks = marks.unwrap().unwrap();
        assert_eq!(marks.marked, 12);
        assert!(marks.gathered.is_some() && marks.spilled > 0);
        let mut expected = held(&method);
        mark_common_features(
            &method,
            &mut expected,
            None,
            ranked(&leaders, &rank),
            &NoProgress,
        )
        .unwrap();
        for document in 0..15 {
            let read = spilled.get(&method, document).unwrap();
            assert_eq!(*read, *expected.get(&method, document).unwrap());
        }
    }
}
