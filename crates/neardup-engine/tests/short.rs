//! The short-text methods through the engine: `join` finds exactly the pairs that all pairs
//! find (every measure, thresholds 0.5-0.95, edit bounds 1-5, random and adversarial
//! corpora), online and in batch; `ngram` is a subset of them; `--against` checks new
//! documents against a reference corpus only.

use std::collections::BTreeMap;

use neardup_core::methods::short::{NgramIndex, SimilarityJoin};
use neardup_core::registry::{Params, Registered};
use neardup_core::{Method, Sketch};
use neardup_engine::collection_index::{verify, CollectionIndex, IndexEntry};
use neardup_engine::{dedup, EngineOptions, NoProgress};
use proptest::prelude::*;

fn join(params: &[(&str, String)]) -> SimilarityJoin {
    let mut p = Params::new();
    for (name, value) in params {
        p.insert(*name, value.clone());
    }
    SimilarityJoin::from_params(&p).unwrap()
}

/// The parameters that turn the template model off (boilerplate and common elements).
fn model_off() -> Vec<(&'static str, String)> {
    vec![
        ("max_df", "off".to_owned()),
        ("boilerplate_df", "off".to_owned()),
    ]
}

/// Every pair of distinct documents the measure accepts, by brute force.
fn all_pairs<M: Method>(method: &M, texts: &[String]) -> BTreeMap<(u32, u32), f64> {
    let sketches: Vec<M::Sketch> = texts.iter().map(|t| method.sketch(t)).collect();
    let mut pairs = BTreeMap::new();
    for a in 0..sketches.len() {
        for b in a + 1..sketches.len() {
            let (x, y) = (&sketches[a], &sketches[b]);
            if x.is_empty() || y.is_empty() {
                continue;
            }
            if let Some(similarity) = method.verify(x, y) {
                pairs.insert((a as u32, b as u32), similarity);
            }
        }
    }
    pairs
}

/// Every verified pair the engine reports.
fn engine_pairs<M: Method>(
    method: &M,
    texts: &[String],
    options: EngineOptions,
) -> BTreeMap<(u32, u32), f64> {
    let outcome = dedup(method, texts, options, &NoProgress).unwrap();
    outcome
        .all_pairs()
        .map(|pair| ((pair.a, pair.b), pair.similarity))
        .collect()
}

fn same(found: &BTreeMap<(u32, u32), f64>, expected: &BTreeMap<(u32, u32), f64>) -> bool {
    found.len() == expected.len()
        && found
            .iter()
            .zip(expected)
            .all(|((k, v), (l, w))| k == l && (v - w).abs() < 1e-9)
}

/// Short texts over a small alphabet (so that near pairs are common), with edited copies.
fn corpus() -> impl Strategy<Value = Vec<String>> {
    let alphabet: Vec<char> = "天气很好今北京a bcd".chars().collect();
    let text = prop::collection::vec(prop::sample::select(alphabet.clone()), 0..16)
        .prop_map(|chars| chars.into_iter().collect::<String>());
    (
        prop::collection::vec(text, 1..30),
        prop::collection::vec(
            (any::<prop::sample::Index>(), 0usize..3, any::<u8>()),
            0..30,
        ),
    )
        .prop_map(move |(mut texts, edits)| {
            for (which, kind, at) in edits {
                let mut chars: Vec<char> = which.get(&texts).chars().collect();
                let at = at as usize % (chars.len() + 1);
                match kind {
                    0 if at < chars.len() => {
                        chars.remove(at);
                    }
                    1 => chars.insert(at, '好'),
                    _ if at < chars.len() => chars[at] = 'x',
                    _ => {}
                }
                texts.push(chars.into_iter().collect());
            }
            texts
        })
}

fn measure() -> impl Strategy<Value = Vec<(&'static str, String)>> {
    prop_oneof![
        (
            prop::sample::select(vec!["jaccard", "cosine", "containment"]),
            50u32..=95,
            1usize..=3
        )
            .prop_map(|(m, t, n)| vec![
                ("measure", m.to_owned()),
                ("threshold", format!("0.{t:02}")),
                ("ngram", n.to_string()),
            ]),
        (50u32..=95).prop_map(|t| vec![
            ("measure", "edit".to_owned()),
            ("threshold", format!("0.{t:02}")),
        ]),
        (1u32..=5).prop_map(|k| vec![("max_edits", k.to_string())]),
        // Thresholds by length: the join is cut for the rule's least value and each pair
        // verified at the value of its shorter document.
        (
            prop::sample::select(vec!["jaccard", "cosine", "containment", "edit"]),
            2usize..12,
            50u32..=95,
            50u32..=95
        )
            .prop_map(|(m, below, short, long)| vec![
                ("measure", m.to_owned()),
                ("threshold", format!("<{below}:0.{short:02},0.{long:02}")),
            ]),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn the_join_equals_all_pairs(texts in corpus(), params in measure()) {
        let method = join(&params);
        let expected = all_pairs(&method, &texts);
        let found = engine_pairs(&method, &texts, EngineOptions::default());
        prop_assert!(same(&found, &expected), "{params:?}\nfound {found:?}\nexpected {expected:?}");
    }

    #[test]
    fn the_online_join_finds_every_stored_match(texts in corpus(), params in measure()) {
        let method = join(&params);
        let sketches: Vec<_> = texts.iter().map(|t| method.sketch(t)).collect();
        let entries: Vec<IndexEntry> = sketches.iter().map(|s| IndexEntry::of(&method, s)).collect();
        let mut index = CollectionIndex::new(&method, 0).unwrap();
        let mut candidates = Vec::new();
        for (seq, (sketch, entry)) in sketches.iter().zip(&entries).enumerate() {
            index.candidates(entry, &mut candidates);
            let found: Vec<u64> = candidates
                .iter()
                .filter(|&&(stored, _)| {
                    let s = stored as usize;
                    verify(&method, sketch, entry, stored, &sketches[s], &entries[s]).is_some()
                })
                .map(|&(stored, _)| stored)
                .collect();
            let copy = |s: usize| sketches[s].identity() == sketch.identity();
            // Every near match (the index keeps the latest of exact copies only: one is
            // enough), and nothing else.
            let near: Vec<u64> = found.iter().copied().filter(|&s| !copy(s as usize)).collect();
            let expected: Vec<u64> = (0..seq)
                .filter(|&s| {
                    let (x, y) = (&sketches[s], sketch);
                    !copy(s) && !x.is_empty() && !y.is_empty() && method.verify(x, y).is_some()
                })
                .map(|s| s as u64)
                .collect();
            prop_assert_eq!(&near, &expected, "{:?} text {}", params, seq);
            // An empty text is never a copy of another (as in batch runs).
            prop_assert_eq!(
                found.iter().any(|&s| copy(s as usize)),
                !sketch.is_empty() && (0..seq).any(copy),
                "{:?} text {}", params, seq
            );
            index.insert(seq as u64, entry);
        }
    }

    #[test]
    fn the_ngram_reference_finds_only_true_pairs(texts in corpus(), params in measure()) {
        let mut p = Params::new();
        for (name, value) in &params {
            p.insert(*name, value.clone());
        }
        let method = NgramIndex::from_params(&p.set("bucket_ngram", "2")).unwrap();
        let expected = all_pairs(&method, &texts);
        let found = engine_pairs(&method, &texts, EngineOptions::default());
        for (pair, similarity) in &found {
            prop_assert_eq!(expected.get(pair), Some(similarity));
        }
    }
}

#[test]
fn adversarial_corpora_equal_all_pairs() {
    let mut corpora: Vec<Vec<String>> = vec![
        // Many identical texts, and their near copies.
        std::iter::repeat_n("今天天气很好".to_owned(), 40)
            .chain(std::iter::repeat_n("今天天气真好".to_owned(), 20))
            .collect(),
        // One token in every document.
        (0..60).map(|i| format!("的{i:03}号文件")).collect(),
        // Texts of one or two characters, and empty ones.
        [
            "", "a", "ab", "b", "ba", "好", "好的", "的好", "", "，", "aa",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
    ];
    // A common bigram in 10% of the documents, the rest random.
    corpora.push(
        (0..300u32)
            .map(|i| {
                let x = i.wrapping_mul(2_654_435_761);
                let body: String = (0..8)
                    .map(|k| char::from_u32(0x4E00 + (x >> (k * 3)) % 40).unwrap())
                    .collect();
                if i % 10 == 0 {
                    format!("新闻{body}")
                } else {
                    body
                }
            })
            .collect(),
    );
    for texts in &corpora {
        for params in [
            vec![("threshold", "0.5".to_owned())],
            vec![
                ("threshold", "0.95".to_owned()),
                ("measure", "cosine".into()),
            ],
            vec![
                ("threshold", "0.8".to_owned()),
                ("measure", "containment".into()),
            ],
            vec![("threshold", "0.8".to_owned()), ("measure", "edit".into())],
            vec![("max_edits", "1".to_owned())],
            vec![("max_edits", "5".to_owned())],
        ] {
            // The measure alone: the brute force neither learns boilerplate nor marks
            // template elements (the join of rare elements is checked against all pairs in
            // the index crate).
            let mut params = params;
            params.extend(model_off());
            let method = join(&params);
            let expected = all_pairs(&method, texts);
            let found = engine_pairs(&method, texts, EngineOptions::default());
            assert!(same(&found, &expected), "{params:?} on {:?}", &texts[..3]);
        }
    }
}

#[test]
fn the_join_is_the_same_for_one_and_two_threads() {
    let texts: Vec<String> = (0..400u32)
        .map(|i| {
            let x = i.wrapping_mul(2_654_435_761) % 97;
            format!("第{x}号通知：今天天气很好{}", x % 7)
        })
        .collect();
    for params in [vec![], vec![("measure", "edit".to_owned())]] {
        let method = join(&params);
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                // Near-identical notices: a budget that holds their (quadratic) answer.
                let roomy = EngineOptions {
                    candidate_budget: 400,
                    ..EngineOptions::default()
                };
                let outcome = dedup(&method, &texts, roomy, &NoProgress).unwrap();
                (outcome.assignment, outcome.leader_pairs)
            })
        };
        let (one, two) = (run(1), run(2));
        assert_eq!(one.0, two.0);
        assert_eq!(one.1, two.1);
    }
}

#[test]
fn against_checks_new_documents_against_the_reference_only() {
    let method = join(&[("threshold", "0.6".to_owned())]);
    let texts: Vec<String> = [
        "今天北京天气很好",   // 0 reference
        "今天北京天气很好",   // 1 reference, a copy of 0: never removed
        "明天上海有大雨",     // 2 reference
        "今天北京天气很好！", // 3 new: a copy of 0
        "明天上海有大雨啊",   // 4 new: near 2
        "周末去公园散步吧",   // 5 new
        "周末去公园散步吧",   // 6 new: a copy of 5, kept unless within
        "周末去公园散步呀",   // 7 new: near 5
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let options = EngineOptions {
        reference: 3,
        within: false,
        ..EngineOptions::default()
    };
    let outcome = dedup(&method, &texts, options, &NoProgress).unwrap();
    let d = &outcome.assignment.duplicate_of;
    assert_eq!(&d[..3], &[None, Some(0), None][..]);
    assert_eq!(&d[3..], &[Some(0), Some(2), None, None, None][..]);
    let within = dedup(
        &method,
        &texts,
        EngineOptions {
            within: true,
            ..options
        },
        &NoProgress,
    )
    .unwrap();
    let d = &within.assignment.duplicate_of;
    assert_eq!(&d[3..], &[Some(0), Some(2), None, Some(5), Some(5)][..]);
    // The reference ranks first whatever the keep policy: a longer new text never replaces
    // a reference document.
    let longest = dedup(
        &method,
        &texts,
        EngineOptions {
            keep: neardup_core::cluster::KeepPolicy::Longest,
            ..options
        },
        &NoProgress,
    )
    .unwrap();
    assert_eq!(longest.assignment.duplicate_of[3], Some(0));
    assert_eq!(longest.assignment.duplicate_of[4], Some(2));
}

#[test]
fn the_ngram_reference_counts_what_its_cap_leaves_out() {
    let method = NgramIndex::from_params(&Params::new()).unwrap();
    let texts: Vec<String> = (0..50).map(|i| format!("公告公告{i:02}")).collect();
    let options = EngineOptions {
        bucket_cap: 10,
        ..EngineOptions::default()
    };
    let outcome = dedup(&method, &texts, options, &NoProgress).unwrap();
    assert!(outcome.stats.capped_buckets >= 1);
    assert!(outcome.stats.capped_out >= 40, "{:?}", outcome.stats);
    assert!(outcome.stats.candidate_comparisons > 0);
}

#[test]
fn a_template_flood_stops_the_join_with_an_error_not_a_quadratic_answer() {
    let texts: Vec<String> = (0..3000u32)
        .map(|i| {
            format!(
                "您的验证码是{:06}，请勿泄露给他人。",
                i.wrapping_mul(7919) % 1_000_000
            )
        })
        .collect();
    // Without the template model: with it (the default), templated codes are joined on their
    // rare elements and the answer stays linear.
    for params in [
        model_off(),
        [model_off(), vec![("measure", "edit".to_owned())]].concat(),
    ] {
        let method = join(&params);
        let error = dedup(&method, &texts, EngineOptions::default(), &NoProgress).unwrap_err();
        assert_eq!(error.parameter(), "candidate_budget", "{params:?}");
        assert!(error.to_string().contains("minhash"), "{error}");
        // With a budget that holds the answer, the join is exact again.
        let roomy = EngineOptions {
            candidate_budget: 3000,
            ..EngineOptions::default()
        };
        let outcome = dedup(&method, &texts[..200], roomy, &NoProgress).unwrap();
        let expected = all_pairs(&method, &texts[..200]);
        assert_eq!(outcome.all_pairs().count(), expected.len(), "{params:?}");
    }
}

/// Issue 28, item 7: `dedup --method join --measure edit` on one 50 MB document aborted at
/// 3.9 GB (and probing it alone would have looked up about 2 x 10^14 substrings). A text
/// whose edit bound needs `MAX_JOIN_EDITS` edits or more is left out of the edit join and
/// counted in `budget_hits`: it is still grouped with its exact copies, never compared
/// otherwise; shorter texts are joined as before, and `--max-edits` keeps any length.
#[test]
fn join_edit_leaves_out_texts_too_long_to_probe() {
    use neardup_index::MAX_JOIN_EDITS;
    // Over MAX_JOIN_EDITS edits at 0.7 (3/7 of the length): about 2,400 characters.
    let words: Vec<String> = (0..700u32)
        .map(|i| format!("w{}", i.wrapping_mul(2_654_435_761) % 9973))
        .collect();
    let long = words.join(" ");
    let long_chars = long.chars().count();
    assert!(long_chars * 3 / 7 > MAX_JOIN_EDITS, "{long_chars}");
    let edited = long.replacen("w", "v", 3);
    let short = "今天北京天气晴朗，适合出门散步。".to_owned();
    let short_edited = "今天北京天气晴朗,适合出门散步!".to_owned();
    let texts = vec![long.clone(), long.clone(), edited, short, short_edited];
    let method = join(&[("measure", "edit".to_owned())]);
    let outcome = dedup(&method, &texts, EngineOptions::default(), &NoProgress).unwrap();
    // The copy follows its exact leader; the edited text is not compared with it.
    assert_eq!(
        outcome.assignment.duplicate_of,
        vec![None, Some(0), None, None, Some(3)]
    );
    // The long leader and the edited text, counted.
    assert_eq!(outcome.stats.budget_hits, 2, "{:?}", outcome.stats);
    // Under an absolute bound the long texts are joined.
    let absolute = join(&[("max_edits", "3".to_owned())]);
    let outcome = dedup(&absolute, &texts, EngineOptions::default(), &NoProgress).unwrap();
    assert_eq!(outcome.assignment.duplicate_of[2], Some(0));
    assert_eq!(outcome.stats.budget_hits, 0);
}
