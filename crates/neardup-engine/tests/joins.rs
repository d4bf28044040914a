//! The engine with every candidate shape (`Join`): a toy method over word sets, whose
//! candidates come from each generator in turn, must give the clustering of comparing every
//! pair (each shape here is exact for Jaccard above 0 on these keys).

use neardup_core::cluster::{self, KeepPolicy, Pair};
use neardup_core::measure::jaccard;
use neardup_core::method::{SketchDecoder, SketchEncoder};
use neardup_core::{Join, Method, Result, Sketch};
use neardup_engine::{dedup, EngineOptions, NoProgress};
use proptest::prelude::*;

#[derive(Debug, Clone, PartialEq)]
struct Words(Vec<u32>);

impl Sketch for Words {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    fn identity(&self) -> u128 {
        self.0
            .iter()
            .fold(7u128, |h, &w| h.wrapping_mul(1_000_003) ^ u128::from(w))
    }
    fn encode(&self, out: &mut Vec<u8>) {
        SketchEncoder::new(out, 200).u32s(&self.0);
    }
    fn decode(bytes: &[u8]) -> Result<Words> {
        let mut decoder = SketchDecoder::new(bytes, 200, "words")?;
        let words = decoder.u32s()?;
        decoder.finish()?;
        Ok(Words(words))
    }
}

#[derive(Clone)]
struct WordSets {
    join: Join<WordSets>,
    threshold: f64,
}

impl Method for WordSets {
    type Sketch = Words;
    fn name(&self) -> &'static str {
        "words"
    }
    fn sketch(&self, text: &str) -> Words {
        let mut words: Vec<u32> = text.split(' ').filter_map(|w| w.parse().ok()).collect();
        words.sort_unstable();
        words.dedup();
        Words(words)
    }
    fn join(&self) -> Join<WordSets> {
        self.join
    }
    /// Every word is a key: two sets of Jaccard above 0 share one.
    fn keys(&self, sketch: &Words, keys: &mut Vec<u64>) {
        keys.extend(sketch.0.iter().map(|&w| u64::from(w)));
    }
    fn similarity(&self, a: &Words, b: &Words) -> f64 {
        jaccard(&a.0, &b.0)
    }
    fn threshold(&self) -> f64 {
        self.threshold
    }
}

fn texts() -> impl Strategy<Value = Vec<String>> {
    let words = prop::collection::vec(0u32..12, 0..6);
    let text = words.prop_map(|w| w.iter().map(u32::to_string).collect::<Vec<_>>().join(" "));
    prop::collection::vec(text, 0..40)
}

/// The clustering of comparing every pair.
fn reference(method: &WordSets, texts: &[String]) -> Vec<Option<u32>> {
    let sketches: Vec<Words> = texts.iter().map(|t| method.sketch(t)).collect();
    let mut pairs = Vec::new();
    for a in 0..sketches.len() {
        for b in a + 1..sketches.len() {
            if sketches[a].is_empty() || sketches[b].is_empty() {
                continue;
            }
            if let Some(similarity) = method.verify(&sketches[a], &sketches[b]) {
                pairs.push(Pair {
                    a: a as u32,
                    b: b as u32,
                    similarity,
                    distance: None,
                });
            }
        }
    }
    let lengths: Vec<usize> = texts.iter().map(|t| t.chars().count()).collect();
    let rank = cluster::ranks(&lengths, KeepPolicy::First);
    cluster::representative(&rank, &pairs).duplicate_of
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn every_join_shape_clusters_like_all_pairs(texts in texts(), threshold in 0.2f64..1.0) {
        let unlimited = EngineOptions {
            bucket_cap: usize::MAX,
            candidate_budget: usize::MAX,
            ..EngineOptions::default()
        };
        // The engine collapses exact copies (equal word sets) before candidates, and a copy
        // follows its leader's representative, which all-pairs clustering need not pick: the
        // reference is exact on inputs without copies, and every shape must agree on all.
        let method = WordSets { join: Join::SymmetricKeys, threshold };
        let mut sets: Vec<Words> = texts.iter().map(|t| method.sketch(t)).collect();
        sets.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let copies = sets.windows(2).any(|w| w[0] == w[1] && !w[0].is_empty());
        let expected = if copies {
            dedup(&method, &texts, unlimited, &NoProgress).unwrap().assignment.duplicate_of
        } else {
            reference(&method, &texts)
        };
        for join in [
            Join::SymmetricKeys,
            Join::Probe,
            Join::SharedKeys {
                min: 1,
                anchors: None,
                priority: None,
            },
            Join::Prefix { measure: neardup_core::JoinMeasure::Jaccard, threshold, rare: None },
        ] {
            let method = WordSets { join, threshold };
            let outcome = dedup(&method, &texts, unlimited, &NoProgress).unwrap();
            prop_assert_eq!(&outcome.assignment.duplicate_of, &expected, "{:?}", join);
        }
    }
}

#[test]
fn identity_join_finds_only_exact_copies() {
    let method = WordSets {
        join: Join::Identity,
        threshold: 0.1,
    };
    let texts = ["1 2 3", "1 2 4", "3 2 1"];
    let outcome = dedup(&method, &texts, EngineOptions::default(), &NoProgress).unwrap();
    assert_eq!(outcome.assignment.duplicate_of, vec![None, None, Some(0)]);
    assert_eq!(outcome.stats.candidate_pairs, 0);
}

#[test]
fn shared_keys_need_the_minimum_count() {
    let method = WordSets {
        join: Join::SharedKeys {
            min: 3,
            anchors: None,
            priority: None,
        },
        threshold: 0.1,
    };
    // 0 and 1 share two words (Jaccard 0.5 would pass the threshold): not candidates.
    let texts = ["1 2 3", "1 2 4", "1 2 3 5"];
    let outcome = dedup(&method, &texts, EngineOptions::default(), &NoProgress).unwrap();
    assert_eq!(outcome.assignment.duplicate_of, vec![None, None, Some(0)]);
    assert_eq!(outcome.stats.candidate_pairs, 1);
}
