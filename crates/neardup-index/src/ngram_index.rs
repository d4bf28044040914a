//! The all-m-gram inverted index for deduplicating massive short texts, as published:
//! the reference the exact joins are measured against.
//!
//! Every `m`-gram of a text is a key (a text shorter than `m` is keyed whole). Each bucket, in
//! text order, is deduplicated by a greedy pass: a text is compared with the bucket's
//! representatives so far; similar to one (by the caller's measure) makes a pair, otherwise
//! it becomes a representative. The pairs of all buckets are merged by id. Buckets larger than
//! `cap` keep their first `cap` texts; the others are counted, not silently dropped. Two
//! similar short texts share some substring, which is why this finds them; its cost is the
//! square of the largest buckets, which is why the cap exists and why the joins replace it.

use hashbrown::HashMap;

use rayon::prelude::*;
use xxhash_rust::xxh3::xxh3_64;

/// What the greedy pass found, and what the cap left out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NgramResult {
    /// `(a, b, similarity)` with `a < b`, each pair once, sorted.
    pub pairs: Vec<(u32, u32, f64)>,
    /// Buckets (keys) with more texts than the cap.
    pub capped_buckets: u64,
    /// Texts left out of capped buckets, summed over those buckets.
    pub capped_texts: u64,
    /// Comparisons made.
    pub comparisons: u64,
}

fn key(items: &[u32]) -> u64 {
    let bytes: Vec<u8> = items.iter().flat_map(|c| c.to_le_bytes()).collect();
    xxh3_64(&bytes)
}

/// Runs the all-m-gram algorithm over `texts` (characters as items) with `m`-gram keys;
/// `similar` returns the similarity of two texts when they are duplicates.
pub fn ngram_dedup(
    texts: &[Vec<u32>],
    m: usize,
    cap: usize,
    similar: impl Fn(u32, u32) -> Option<f64> + Sync,
) -> NgramResult {
    let m = m.max(1);
    // key -> texts, in text order.
    let mut buckets: HashMap<u64, Vec<u32>> = HashMap::new();
    for (id, text) in texts.iter().enumerate() {
        let mut keys: Vec<u64> = if text.len() < m {
            vec![key(text)]
        } else {
            text.windows(m).map(key).collect()
        };
        keys.sort_unstable();
        keys.dedup();
        for k in keys {
            buckets.entry(k).or_default().push(id as u32);
        }
    }
    let mut buckets: Vec<(u64, Vec<u32>)> =
        buckets.into_iter().filter(|(_, b)| b.len() > 1).collect();
    buckets.sort_unstable_by_key(|(k, _)| *k);
    let per_bucket: Vec<NgramResult> = buckets
        .par_iter()
        .map(|(_, members)| {
            let (kept, left_out) = if members.len() > cap {
                (&members[..cap], (members.len() - cap) as u64)
            } else {
                (&members[..], 0)
            };
            let mut representatives: Vec<u32> = Vec::new();
            let mut pairs = Vec::new();
            let mut comparisons = 0u64;
            for &text in kept {
                let mut matched = None;
                for &rep in &representatives {
                    comparisons += 1;
                    if let Some(s) = similar(rep, text) {
                        matched = Some((rep, s));
                        break;
                    }
                }
                match matched {
                    Some((rep, s)) => pairs.push((rep.min(text), rep.max(text), s)),
                    None => representatives.push(text),
                }
            }
            NgramResult {
                pairs,
                capped_buckets: u64::from(left_out > 0),
                capped_texts: left_out,
                comparisons,
            }
        })
        .collect();
    let mut result = NgramResult::default();
    for bucket in per_bucket {
        result.pairs.extend(bucket.pairs);
        result.capped_buckets += bucket.capped_buckets;
        result.capped_texts += bucket.capped_texts;
        result.comparisons += bucket.comparisons;
    }
    result.pairs.sort_by_key(|p| (p.0, p.1));
    result.pairs.dedup_by_key(|p| (p.0, p.1));
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edit_distance_within;

    fn chars(s: &str) -> Vec<u32> {
        s.chars().map(u32::from).collect()
    }

    fn by_edits(texts: &[Vec<u32>], max: u32) -> impl Fn(u32, u32) -> Option<f64> + Sync + '_ {
        move |a, b| {
            let (x, y) = (&texts[a as usize], &texts[b as usize]);
            let d = edit_distance_within(x, y, max)?;
            Some(1.0 - f64::from(d) / x.len().max(y.len()).max(1) as f64)
        }
    }

    #[test]
    fn near_copies_sharing_a_substring_are_paired_and_others_not() {
        let texts: Vec<Vec<u32>> = [
            "今天天气很好适合出门",
            "今天天气真好适合出门",
            "明日股市大涨三个百分点",
            "今天天气很好适合出门!",
            "好",
        ]
        .iter()
        .map(|s| chars(s))
        .collect();
        let result = ngram_dedup(&texts, 4, 100, by_edits(&texts, 2));
        let pairs: Vec<(u32, u32)> = result.pairs.iter().map(|p| (p.0, p.1)).collect();
        assert_eq!(pairs, vec![(0, 1), (0, 3)]);
        assert_eq!(result.capped_buckets, 0);
    }

    #[test]
    fn the_cap_is_counted_and_the_result_is_the_same_for_any_thread_count() {
        // Every text shares the m-gram "共同前缀": one big bucket.
        let texts: Vec<Vec<u32>> = (0..300)
            .map(|i| chars(&format!("共同前缀{}", i % 37)))
            .collect();
        let result = ngram_dedup(&texts, 4, 100, by_edits(&texts, 0));
        assert_eq!(result.capped_buckets, 1);
        assert_eq!(result.capped_texts, 200);
        let single = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
            .install(|| ngram_dedup(&texts, 4, 100, by_edits(&texts, 0)));
        assert_eq!(single, result);
        // Every repeat pairs with its first occurrence, through the smaller buckets of its
        // number (the capped bucket alone would pair only the first 100).
        assert!(result
            .pairs
            .iter()
            .all(|p| p.0 < 37 && p.0 % 37 == p.1 % 37 && p.2 == 1.0));
        assert_eq!(result.pairs.len(), 300 - 37);
    }
}
