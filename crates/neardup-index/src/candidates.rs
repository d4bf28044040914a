//! One factory from a method's [`Join`] to its candidate generator. The batch engine asks it for
//! the candidate pairs of its leaders ([`ranked_candidates`]), the online index for the structure a
//! partition holds ([`online_form`], [`hamming_key`]), the Spark path for the form it runs
//! ([`spark_form`]); none of them matches on the join itself, so a new join shape is added here
//! and in its generator's module.
//!
//! The generators are monomorphised over the method and over what holds the sketches
//! ([`RankedSketches`]): no dynamic dispatch in the loops over documents or pairs.

use neardup_core::method::{HammingHook, RareHook, SequenceHook};
use neardup_core::{EditLimit, Join, JoinMeasure, JoinShape, Method, RareJoin, Result};
use rayon::prelude::*;

use crate::generators::{
    anchor_pairs, CandidateGenerator, EditJoin, NgramBuckets, PrefixJoin, ProbeTable, TemplatedJoin,
};
use crate::hamming_join::HammingJoin;
use crate::key_table::{BucketStats, CandidateLimits, KeyTable};
use crate::pass_join::EditBound;
use crate::set_join::SetMeasure;
use crate::shared_keys::SharedKeyTable;

/// What an online index holds for a join shape (see [`online_form`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnlineForm {
    /// Exact identities only.
    Identity,
    /// A key index: documents stored under their keys ([`Method::keys`]); a query looks up
    /// its probe keys ([`Method::probe_keys`]) when `probe_side`, else its own keys.
    Keys {
        /// Whether a query looks up its probe keys (the exact joins).
        probe_side: bool,
    },
    /// A Hamming index of fingerprints (the hook of [`Join::Hamming`]).
    Hamming,
}

/// What an online index holds for a join of `shape`; `None` for a shape without an online
/// form (the n-gram reference index, the shared-key count, multi-index probing).
pub fn online_form(shape: JoinShape) -> Option<OnlineForm> {
    match shape {
        JoinShape::Identity => Some(OnlineForm::Identity),
        JoinShape::SymmetricKeys => Some(OnlineForm::Keys { probe_side: false }),
        // Every stored document within the threshold shares a key with the text.
        JoinShape::Prefix | JoinShape::Edit => Some(OnlineForm::Keys { probe_side: true }),
        JoinShape::Hamming => Some(OnlineForm::Hamming),
        JoinShape::Probe | JoinShape::SharedKeys | JoinShape::NgramBuckets => None,
    }
}

/// The fingerprint and radius of `sketch` under `join`'s Hamming hook, for the online index;
/// `None` for other joins.
pub fn hamming_key<M: Method>(
    method: &M,
    join: &Join<M>,
    sketch: &M::Sketch,
) -> Option<(u64, u32)> {
    match join {
        Join::Hamming { key, .. } => key(method, sketch),
        _ => None,
    }
}

/// The template-key hook of `join` (templates duplicate): the anchors of a
/// [`Join::AnchoredKeys`], a [`Join::SharedKeys`], a [`Join::Hamming`], or the [`RareJoin`]
/// of a [`Join::Prefix`], a [`Join::Edit`] or a [`Join::NgramBuckets`]; `None` for any other
/// join, or without templates duplicate.
pub fn template_anchors<M: Method>(join: &Join<M>) -> Option<RareHook<M>> {
    match join {
        Join::AnchoredKeys { anchors } => Some(*anchors),
        Join::SharedKeys { anchors, .. } | Join::Hamming { anchors, .. } => *anchors,
        _ => rare_join(join)?.anchors,
    }
}

/// The [`RareJoin`] of a [`Join::Prefix`], a [`Join::Edit`] or a [`Join::NgramBuckets`].
fn rare_join<M: Method>(join: &Join<M>) -> Option<&RareJoin<M>> {
    match join {
        Join::Prefix { rare, .. } | Join::Edit { rare, .. } | Join::NgramBuckets { rare, .. } => {
            rare.as_ref()
        }
        _ => None,
    }
}

/// The template-key hook of a join that takes templated sketches apart to join them on their
/// rare elements ([`RareJoin::templates`]: a [`Join::Prefix`], [`Join::Edit`] or
/// [`Join::NgramBuckets`] with a template check), whatever the policy: the stats group those
/// sketches by it. `None` for any other join.
pub fn rare_join_templates<M: Method>(join: &Join<M>) -> Option<RareHook<M>> {
    Some(rare_join(join)?.templates)
}

/// Appends the template keys of `sketch` under `join` to `out` ([`template_anchors`]), for
/// the Spark path's pairs of them; nothing for any other join or a sketch that is not
/// templated.
pub fn template_keys<M: Method>(
    method: &M,
    join: &Join<M>,
    sketch: &M::Sketch,
    out: &mut Vec<u64>,
) {
    if let Some(keys) = template_anchors(join) {
        keys(method, sketch, out);
    }
}

/// How the Spark path finds the candidates of a join shape (see [`spark_form`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SparkForm {
    /// Exact identities only: the leaders are the clusters.
    Identity,
    /// Banded buckets: the symmetric keys, grouped by a shuffle.
    Keys,
    /// Hamming block tables in distributed passes ([`crate::distributed_passes`]).
    Hamming,
    /// The exact set join: prefixes under a global order of tokens, rarer first (PPJoin).
    SetJoin,
}

impl SparkForm {
    /// Its name on the Python side: `identity`, `keys`, `hamming` or `set_join`.
    pub fn name(self) -> &'static str {
        match self {
            SparkForm::Identity => "identity",
            SparkForm::Keys => "keys",
            SparkForm::Hamming => "hamming",
            SparkForm::SetJoin => "set_join",
        }
    }
}

/// Why the Spark path has no form for a join shape (see [`spark_form`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SparkGap {
    /// The edit-distance join: Pass-Join's distributed form looks up every substring where a
    /// partner's segment can be, for every partner length.
    Edit,
    /// A join that finds candidates in one global index; the words name it.
    GlobalIndex(&'static str),
}

/// The form the Spark path runs a join of `shape` in, or why it has none.
pub fn spark_form(shape: JoinShape) -> std::result::Result<SparkForm, SparkGap> {
    match shape {
        JoinShape::Identity => Ok(SparkForm::Identity),
        JoinShape::SymmetricKeys => Ok(SparkForm::Keys),
        JoinShape::Hamming => Ok(SparkForm::Hamming),
        JoinShape::Prefix => Ok(SparkForm::SetJoin),
        JoinShape::Edit => Err(SparkGap::Edit),
        JoinShape::Probe => Err(SparkGap::GlobalIndex("multi-index probing")),
        JoinShape::SharedKeys => Err(SparkGap::GlobalIndex("a count of shared keys")),
        JoinShape::NgramBuckets => Err(SparkGap::GlobalIndex("n-gram buckets")),
    }
}

/// `limits` for `join`'s generator: [`CandidateLimits::priority_keys`] set for
/// [`Join::PriorityKeys`] and for a [`Join::Prefix`] with a join of rare elements (whose
/// online keys have the two classes: a templated text's rare elements are priority keys),
/// cleared for any other join. The engine walks the keys of
/// symmetric joins itself when it spills, and asks here what they mean.
pub fn join_limits<M: Method>(join: &Join<M>, limits: CandidateLimits) -> CandidateLimits {
    CandidateLimits {
        priority_keys: matches!(
            join,
            Join::PriorityKeys | Join::Prefix { rare: Some(_), .. }
        ),
        ..limits
    }
}

/// What a batch generator reads of the documents entering candidate generation (the
/// engine's *leaders*): each numbered by its rank (lower is better), with its sketch.
pub trait RankedSketches<M: Method>: Sync {
    /// `f(rank, sketch)` of every leader, in leader order.
    ///
    /// # Errors
    /// A sketch that cannot be read (the engine's spill).
    fn map<R, F>(&self, f: F) -> Result<Vec<R>>
    where
        R: Send,
        F: Fn(u32, &M::Sketch) -> R + Sync;

    /// The similarity of the leaders ranked `x` and `y` when they are duplicates
    /// ([`Method::verify`]), for the n-gram index's greedy pass. A sketch that cannot be read
    /// is kept by the implementation, to report once generation is over, and gives `None`.
    fn verify(&self, x: u32, y: u32) -> Option<f64>;
}

/// The candidate pairs `(x, y)` of ranks, `x < y`, sorted, without repeats, and the
/// generator's statistics, from the generator `method`'s [`Join`] names, in memory.
///
/// # Errors
/// A sketch that cannot be read.
pub fn ranked_candidates<M, L>(
    method: &M,
    leaders: &L,
    limits: CandidateLimits,
) -> Result<(Vec<(u32, u32)>, BucketStats)>
where
    M: Method,
    L: RankedSketches<M>,
{
    Ok(match method.join() {
        Join::Identity => {
            let none = BucketStats {
                partner_limit: u64::MAX,
                ..BucketStats::default()
            };
            (Vec::new(), none)
        }
        Join::SymmetricKeys => CandidateGenerator::candidate_pairs(
            KeyTable::from_entries(entries(method, leaders, M::keys)?),
            limits,
        ),
        Join::PriorityKeys => CandidateGenerator::candidate_pairs(
            KeyTable::from_entries(entries(method, leaders, M::keys)?),
            join_limits(&method.join(), limits),
        ),
        Join::AnchoredKeys { anchors } => {
            let found = CandidateGenerator::candidate_pairs(
                KeyTable::from_entries(entries(method, leaders, M::keys)?),
                limits,
            );
            with_anchors(method, leaders, Some(anchors), found)?
        }
        Join::Probe => ProbeTable::new(
            entries(method, leaders, M::keys)?,
            entries(method, leaders, M::probe_keys)?,
        )
        .candidate_pairs(limits),
        Join::SharedKeys {
            min,
            anchors,
            priority,
        } => {
            let found =
                with_filling_keys(method, leaders, limits, priority, |limits, templated| {
                    // A templated text meets its copies through its filling keys; in the
                    // merge it reads at most the cap in all (a flood fills its buckets to the
                    // cap with its template's other fillings).
                    let keyed = entries(method, leaders, M::keys)?;
                    let table = SharedKeyTable::new(keyed, min).bounded(templated.to_vec());
                    Ok(table.candidate_pairs(limits))
                })?;
            with_anchors(method, leaders, anchors, found)?
        }
        Join::Prefix {
            measure,
            threshold,
            rare,
        } => {
            let measure = match measure {
                JoinMeasure::Jaccard => SetMeasure::Jaccard,
                JoinMeasure::Cosine => SetMeasure::Cosine,
                JoinMeasure::Containment => SetMeasure::Overlap,
            };
            match rare {
                None => PrefixJoin::new(token_sets(method, leaders)?, measure, threshold)
                    .candidate_pairs(limits),
                Some(rare) => templated_join(method, leaders, rare, join_tokens, |plain| {
                    PrefixJoin::new(plain, measure, threshold)
                })?
                .candidate_pairs(limits),
            }
        }
        Join::Edit {
            limit,
            sequence,
            rare,
        } => {
            let bound = match limit {
                EditLimit::Absolute(edits) => EditBound::Absolute(edits),
                EditLimit::Normalized(threshold) => EditBound::Normalized(threshold),
            };
            let join = |plain| EditJoin::new(plain, bound);
            sequence_join(method, leaders, (sequence, rare), join)?.candidate_pairs(limits)
        }
        Join::NgramBuckets { m, sequence, rare } => {
            let similar = |x: u32, y: u32| leaders.verify(x, y);
            let join = |plain| NgramBuckets::new(plain, m as usize, similar);
            sequence_join(method, leaders, (sequence, rare), join)?.candidate_pairs(limits)
        }
        Join::Hamming {
            key,
            priority,
            anchors,
            ..
        } => hamming_candidates(method, leaders, limits, key, (priority, anchors))?,
    })
}

/// The candidates of a [`Join::Hamming`]: the fingerprints within the radius, and with its
/// hooks the pairs of a templated text's filling keys (`priority`) and template keys
/// (`anchors`).
fn hamming_candidates<M: Method, L: RankedSketches<M>>(
    method: &M,
    leaders: &L,
    limits: CandidateLimits,
    key: HammingHook<M>,
    (priority, anchors): (Option<RareHook<M>>, Option<RareHook<M>>),
) -> Result<(Vec<(u32, u32)>, BucketStats)> {
    let found = HammingJoin::new(fingerprints(method, leaders, key)?);
    let found = with_filling_keys(method, leaders, limits, priority, |limits, _| {
        Ok(found.candidate_pairs(limits))
    })?;
    with_anchors(method, leaders, anchors, found)
}

/// `found`, and with `anchors` (templates duplicate) the pairs of each templated text with
/// the first texts sharing one of its template keys ([`anchor_pairs`]: a bounded number per
/// key, whatever the text's distance or signatures).
fn with_anchors<M: Method, L: RankedSketches<M>>(
    method: &M,
    leaders: &L,
    anchors: Option<RareHook<M>>,
    (mut pairs, mut stats): (Vec<(u32, u32)>, BucketStats),
) -> Result<(Vec<(u32, u32)>, BucketStats)> {
    let Some(anchors) = anchors else {
        return Ok((pairs, stats));
    };
    let anchored = anchor_pairs(hooked_entries(method, leaders, anchors)?);
    if !anchored.is_empty() {
        stats.raw_pairs += anchored.len() as u64;
        pairs.extend(anchored);
        pairs.par_sort_unstable();
        pairs.dedup();
    }
    Ok((pairs, stats))
}

/// The pairs `generate` gives, and with `priority` those of a key table over the templated
/// texts' filling keys (rare elements, digits in order; what the online index reads first):
/// in a flood of one template every filling is near every other, and the partners the
/// candidate budget keeps (the nearest, the best-ranked) need not include a notice's own
/// copies, which share its filling keys. The two share the budget when some text has
/// filling keys; `generate` alone otherwise.
fn with_filling_keys<M: Method, L: RankedSketches<M>>(
    method: &M,
    leaders: &L,
    limits: CandidateLimits,
    priority: Option<RareHook<M>>,
    generate: impl FnOnce(CandidateLimits, &[u32]) -> Result<(Vec<(u32, u32)>, BucketStats)>,
) -> Result<(Vec<(u32, u32)>, BucketStats)> {
    let filling_keys = match priority {
        Some(priority) => hooked_entries(method, leaders, priority)?,
        None => Vec::new(),
    };
    if filling_keys.is_empty() {
        return generate(limits, &[]);
    }
    let mut templated: Vec<u32> = filling_keys.iter().map(|&(_, ranked)| ranked).collect();
    templated.sort_unstable();
    templated.dedup();
    let limits = CandidateLimits {
        candidate_budget: (limits.candidate_budget / 2).max(1),
        ..limits
    };
    let (mut pairs, mut stats) = generate(limits, &templated)?;
    let table = KeyTable::from_entries(filling_keys);
    let (filled, filling) = table.candidate_pairs_with_stats(limits);
    stats.raw_pairs += filling.raw_pairs;
    stats.budget_hits += filling.budget_hits;
    stats.capped_buckets += filling.capped_buckets;
    stats.largest_bucket = stats.largest_bucket.max(filling.largest_bucket);
    pairs.extend(filled);
    pairs.par_sort_unstable();
    pairs.dedup();
    Ok((pairs, stats))
}

/// `(key, rank)` of every key a hook gives for every leader (none where it returns false).
fn hooked_entries<M: Method, L: RankedSketches<M>>(
    method: &M,
    leaders: &L,
    hook: RareHook<M>,
) -> Result<Vec<(u64, u32)>> {
    entries(method, leaders, |method, sketch, keys| {
        hook(method, sketch, keys);
    })
}

/// `(key, rank)` of every key `emit` gives for every leader.
fn entries<M: Method, L: RankedSketches<M>>(
    method: &M,
    leaders: &L,
    emit: impl Fn(&M, &M::Sketch, &mut Vec<u64>) + Sync,
) -> Result<Vec<(u64, u32)>> {
    let keyed = leaders.map(|ranked, sketch| {
        let mut keys = Vec::new();
        emit(method, sketch, &mut keys);
        keys.into_iter()
            .map(|key| (key, ranked))
            .collect::<Vec<_>>()
    })?;
    Ok(keyed.concat())
}

/// `(rank, join tokens)` of every leader, for the prefix join.
fn token_sets<M: Method, L: RankedSketches<M>>(
    method: &M,
    leaders: &L,
) -> Result<Vec<(u32, Vec<u64>)>> {
    leaders.map(|ranked, sketch| (ranked, join_tokens(method, sketch)))
}

/// The join tokens of a sketch ([`Method::join_tokens`]).
fn join_tokens<M: Method>(method: &M, sketch: &M::Sketch) -> Vec<u64> {
    let mut tokens = Vec::new();
    method.join_tokens(sketch, &mut tokens);
    tokens
}

/// The two joins of a [`Join::Prefix`], a [`Join::Edit`] or a [`Join::NgramBuckets`] with a
/// [`RareJoin`]: the
/// join `plain` builds over what `item` gives of the leaders that are not templated (their
/// tokens, their characters), and the join of rare elements in Jaccard at the rare threshold,
/// which keeps only the pairs with a templated side. A plain leader takes part in the second
/// only when it shares a rare element with a templated one (else it can reach no templated
/// partner), so that a corpus with a few templated texts does not join all of its texts
/// twice. When no leader is templated, the first alone (the plain join, at its plain cost).
/// With templates duplicate, also the template keys of the templated leaders
/// ([`RareJoin::anchors`]).
fn templated_join<M, L, T, P>(
    method: &M,
    leaders: &L,
    rare: RareJoin<M>,
    item: impl Fn(&M, &M::Sketch) -> T + Sync,
    plain: impl FnOnce(Vec<(u32, T)>) -> P,
) -> Result<TemplatedJoin<P>>
where
    M: Method,
    L: RankedSketches<M>,
    T: Send,
{
    let sets = leaders.map(|ranked, sketch| {
        let mut elements = Vec::new();
        let templated = (rare.elements)(method, sketch, &mut elements);
        let mut anchors = Vec::new();
        let own = match (templated, rare.anchors) {
            (false, _) => Some(item(method, sketch)),
            (true, Some(keys)) => {
                keys(method, sketch, &mut anchors);
                None
            }
            (true, None) => None,
        };
        let anchors: Vec<(u64, u32)> = anchors.into_iter().map(|key| (key, ranked)).collect();
        ((ranked, templated, own, elements), anchors)
    })?;
    let (sets, anchors): (Vec<_>, Vec<_>) = sets.into_iter().unzip();
    let anchors: Vec<(u64, u32)> = anchors.concat();
    let mut templated: Vec<u32> = (sets.iter()).filter(|set| set.1).map(|set| set.0).collect();
    templated.sort_unstable();
    let templated_elements: hashbrown::HashSet<u64> = (sets.iter())
        .filter(|set| set.1)
        .flat_map(|set| set.3.iter().copied())
        .collect();
    let mut plain_items = Vec::with_capacity(sets.len() - templated.len());
    let mut elements = Vec::new();
    for (ranked, is_templated, own, rare_elements) in sets {
        let meets_a_templated = is_templated
            || (rare_elements.iter()).any(|element| templated_elements.contains(element));
        if let Some(own) = own {
            plain_items.push((ranked, own));
        }
        if meets_a_templated && !rare_elements.is_empty() {
            elements.push((ranked, rare_elements));
        }
    }
    Ok(TemplatedJoin {
        plain: plain(plain_items),
        rare: (!templated.is_empty())
            .then(|| PrefixJoin::new(elements, SetMeasure::Jaccard, rare.threshold)),
        templated,
        anchors,
    })
}

/// The join `plain` builds over the leaders' sequences (Pass-Join, the n-gram index), and with
/// `rare` the [`TemplatedJoin`] of it: a templated text is joined on its rare elements instead,
/// as the set join does. Within the edit bound of every other filling of its template (or in
/// the greedy pass of its template's n-grams, beside every other filling), a flood's text
/// would pass Pass-Join's pair limit or cost the square of its template's buckets.
fn sequence_join<M, L, P>(
    method: &M,
    leaders: &L,
    (sequence, rare): (SequenceHook<M>, Option<RareJoin<M>>),
    plain: impl FnOnce(Vec<(u32, Vec<u32>)>) -> P,
) -> Result<TemplatedJoin<P>>
where
    M: Method,
    L: RankedSketches<M>,
{
    match rare {
        None => Ok(TemplatedJoin {
            plain: plain(sequences(method, leaders, sequence)?),
            rare: None,
            templated: Vec::new(),
            anchors: Vec::new(),
        }),
        Some(rare) => templated_join(
            method,
            leaders,
            rare,
            |method, sketch| sequence(method, sketch).to_vec(),
            plain,
        ),
    }
}

/// `(rank, join sequence)` of every leader, for the edit join and the n-gram index.
fn sequences<M: Method, L: RankedSketches<M>>(
    method: &M,
    leaders: &L,
    sequence: SequenceHook<M>,
) -> Result<Vec<(u32, Vec<u32>)>> {
    leaders.map(|ranked, sketch| (ranked, sequence(method, sketch).to_vec()))
}

/// `(rank, fingerprint, radius)` of every leader with a fingerprint, for the Hamming join.
fn fingerprints<M: Method, L: RankedSketches<M>>(
    method: &M,
    leaders: &L,
    key: HammingHook<M>,
) -> Result<Vec<(u32, u64, u32)>> {
    Ok(leaders
        .map(|ranked, sketch| {
            let (fingerprint, radius) = key(method, sketch)?;
            Some((ranked, fingerprint, radius))
        })?
        .into_iter()
        .flatten()
        .collect())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use neardup_core::methods::short::SimilarityJoin;
    use neardup_core::registry::{self, MethodVisitor, Params, Registered};
    use neardup_core::CorpusStats;

    use super::*;

    /// Sketches held in memory, ranked by position.
    struct Held<M: Method> {
        method: M,
        sketches: Vec<M::Sketch>,
    }

    impl<M: Method> RankedSketches<M> for Held<M> {
        fn map<R, F>(&self, f: F) -> Result<Vec<R>>
        where
            R: Send,
            F: Fn(u32, &M::Sketch) -> R + Sync,
        {
            let ranked = self.sketches.iter().enumerate();
            Ok(ranked
                .map(|(rank, sketch)| f(rank as u32, sketch))
                .collect())
        }
        fn verify(&self, x: u32, y: u32) -> Option<f64> {
            let (a, b) = (&self.sketches[x as usize], &self.sketches[y as usize]);
            self.method.verify(a, b)
        }
    }

    const TEXT: &str = "The committee met on Tuesday to review the budget of the harbour \
        authority, and after a long debate about dredging, wages and the new ferry terminal \
        it agreed to publish the accounts of the last three years before the winter session.";

    /// The candidates of two copies of [`TEXT`] under a method, and its join's shape.
    struct TwoCopies;

    impl MethodVisitor for TwoCopies {
        type Output = (JoinShape, Vec<(u32, u32)>);
        fn visit<M: Registered>(self, mut method: M) -> Self::Output {
            if method.learns_from_corpus() {
                let mut features = Vec::new();
                method.corpus_features(TEXT, &mut features);
                features.sort_unstable();
                features.dedup();
                let mut stats = CorpusStats::exact();
                stats.add_document(&features);
                method.learn(&Arc::new(stats));
            }
            let held = Held {
                sketches: vec![method.sketch(TEXT), method.sketch(TEXT)],
                method,
            };
            let limits = CandidateLimits::default();
            let (pairs, _) = ranked_candidates(&held.method, &held, limits).unwrap();
            (held.method.join().shape(), pairs)
        }
    }

    /// A flood of exam notices (a name, a city, five small numbers), every third one with an
    /// edited copy, and a few ordinary texts, as `join` sketches them, marked as the engine
    /// marks them (template elements in more than `limit` of the sketches are common).
    fn marked_flood(params: &Params, limit: usize) -> Held<SimilarityJoin> {
        let method = SimilarityJoin::from_params(params).unwrap();
        let notice = neardup_core::testing::exam_notice;
        let mut texts: Vec<String> = Vec::new();
        for i in 0..240 {
            texts.push(notice(i));
            if i % 3 == 0 {
                texts.push(notice(i).replace("，", ", ").replace("您", "你"));
            }
        }
        texts.push("今天北京的天气非常好，适合出门散步和跑步。".to_owned());
        texts.push("今天北京的天气非常好！适合出门散步。".to_owned());
        texts.push("明天上海有大雨，出门请带伞。".to_owned());
        let mut sketches: Vec<_> = texts.iter().map(|t| method.sketch(t)).collect();
        neardup_core::testing::mark_by_count(&method, &mut sketches, limit);
        Held { method, sketches }
    }

    /// The pairs the method accepts, comparing every pair.
    fn accepted<M: Method>(held: &Held<M>) -> Vec<(u32, u32)> {
        let n = held.sketches.len() as u32;
        (0..n)
            .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
            .filter(|&(a, b)| held.verify(a, b).is_some())
            .collect()
    }

    #[test]
    fn the_join_of_rare_elements_finds_every_accepted_pair_of_a_flood_without_its_square() {
        let unlimited = CandidateLimits {
            candidate_budget: usize::MAX / 4,
            ..CandidateLimits::default()
        };
        let held = marked_flood(&Params::new(), 20);
        assert!(matches!(
            held.method.join(),
            Join::Prefix { rare: Some(_), .. }
        ));
        let (pairs, _) = ranked_candidates(&held.method, &held, unlimited).unwrap();
        let found = accepted(&held);
        // Every copy, and the two ordinary near-copies.
        assert_eq!(found.len(), 80 + 1, "{found:?}");
        let missing: Vec<_> = (found.iter())
            .filter(|pair| pairs.binary_search(pair).is_err())
            .collect();
        assert!(missing.is_empty(), "{missing:?}");
        let n = held.sketches.len();
        assert!(
            pairs.len() < 4 * n,
            "{} candidates of {n} texts",
            pairs.len()
        );
        // Without the template check, the exact join pairs the fillings (its answer is the
        // square of the flood) and verification accepts them.
        let plain = marked_flood(&Params::new().set("max_df", "off"), 20);
        let (pairs, _) = ranked_candidates(&plain.method, &plain, unlimited).unwrap();
        assert!(
            pairs.len() > n * n / 8,
            "{} candidates of {n} texts",
            pairs.len()
        );
        assert!(accepted(&plain).len() > n * n / 8);
    }

    #[test]
    fn every_registered_methods_join_pairs_two_identical_documents() {
        for spec in registry::methods() {
            let (shape, pairs) =
                registry::with_method(spec.name, &Params::new(), TwoCopies).unwrap();
            // Exact hashing finds copies by identity, before candidates.
            let expected = match shape {
                JoinShape::Identity => vec![],
                _ => vec![(0, 1)],
            };
            assert_eq!(pairs, expected, "{} ({shape:?})", spec.name);
        }
    }

    #[test]
    fn every_shape_has_its_online_form_or_none() {
        let forms = [
            (JoinShape::Identity, Some(OnlineForm::Identity)),
            (
                JoinShape::SymmetricKeys,
                Some(OnlineForm::Keys { probe_side: false }),
            ),
            (JoinShape::Probe, None),
            (JoinShape::SharedKeys, None),
            (
                JoinShape::Prefix,
                Some(OnlineForm::Keys { probe_side: true }),
            ),
            (JoinShape::Edit, Some(OnlineForm::Keys { probe_side: true })),
            (JoinShape::NgramBuckets, None),
            (JoinShape::Hamming, Some(OnlineForm::Hamming)),
        ];
        for (shape, form) in forms {
            assert_eq!(online_form(shape), form, "{shape:?}");
        }
    }

    /// The join shape of a registered method.
    struct Shaped;

    impl MethodVisitor for Shaped {
        type Output = JoinShape;
        fn visit<M: Registered>(self, method: M) -> JoinShape {
            method.join().shape()
        }
    }

    #[test]
    fn the_spark_forms_of_joins() {
        let form = |method: &str, params: &[(&str, &str)]| {
            let mut given = Params::new();
            for (key, value) in params {
                given.insert(*key, *value);
            }
            spark_form(registry::with_method(method, &given, Shaped).unwrap())
        };
        assert_eq!(form("exact", &[]), Ok(SparkForm::Identity));
        assert_eq!(form("minhash", &[]), Ok(SparkForm::Keys));
        assert_eq!(form("simhash", &[]), Ok(SparkForm::Hamming));
        assert_eq!(form("join", &[]), Ok(SparkForm::SetJoin));
        assert_eq!(form("join", &[("max_edits", "2")]), Err(SparkGap::Edit));
        assert_eq!(
            form("ngram", &[("bucket_ngram", "3")]),
            Err(SparkGap::GlobalIndex("n-gram buckets"))
        );
        let names: Vec<&str> = [
            SparkForm::Identity,
            SparkForm::Keys,
            SparkForm::Hamming,
            SparkForm::SetJoin,
        ]
        .map(SparkForm::name)
        .to_vec();
        assert_eq!(names, ["identity", "keys", "hamming", "set_join"]);
    }
}
