//! Engine tests: the conformance cases run against every method, determinism across thread
//! counts, and MinHash-LSH against a brute-force exact Jaccard reference.

use neardup_core::measure::jaccard;
use neardup_core::methods::minhash::{MinHash, MinHashBuilder, Slots};
use neardup_core::registry::{self, MethodVisitor, Params, Registered};
use neardup_core::Method;
use neardup_engine::{dedup, dedup_owned, EngineOptions, NoProgress, Outcome};
use proptest::prelude::Rng;
use proptest::test_runner::{RngAlgorithm, TestRng};
use serde_json::Value;

fn cases() -> Vec<Value> {
    let text = include_str!("data/conformance.json");
    serde_json::from_str::<Value>(text)
        .expect("conformance.json is valid JSON")
        .as_array()
        .unwrap()
        .clone()
}

fn expected(case: &Value, method: &str) -> Vec<Option<u32>> {
    case["expect"][method]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().map(|x| x as u32))
        .collect()
}

fn docs(case: &Value) -> Vec<String> {
    case["docs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap().to_owned())
        .collect()
}

/// MinHash without boilerplate handling: these tests check the LSH and the engine against
/// brute force on the documents' full shingle sets (tests/boilerplate.rs covers the rest).
fn plain_minhash() -> MinHashBuilder {
    MinHashBuilder::new()
        .max_df(neardup_core::boilerplate::DfLimit::Off)
        .boilerplate_df(neardup_core::boilerplate::DfLimit::Off)
}

/// The registry's `minhash` for a case, by the builder: the builder's defaults plus what the
/// registry adds by default (the slot check).
fn minhash_for(case: &Value) -> MinHash {
    MinHashBuilder::new()
        .threshold(case["threshold"].as_f64().unwrap_or(0.7))
        .ngram(case["ngram"].as_u64().unwrap_or(5) as usize)
        .slots(Slots::Numbers, neardup_core::slots::DEFAULT_SLOT_AGREEMENT)
        .build()
        .unwrap()
}

/// Runs one case with the method the registry built.
struct Check<'a>(&'a Value);

impl MethodVisitor for Check<'_> {
    type Output = ();
    fn visit<M: Registered>(self, method: M) {
        check(&method, self.0);
    }
}

fn check<M: Method>(method: &M, case: &Value) {
    // A pre-check never refuses a pair that verification confirms.
    let sketches: Vec<M::Sketch> = docs(case).iter().map(|d| method.sketch(d)).collect();
    if let Some(check) = method.pair_precheck() {
        let prechecks: Vec<Vec<u8>> = (sketches.iter())
            .map(|sketch| {
                let mut out = vec![0u8; check.width];
                (check.write)(method, sketch, &mut out);
                out
            })
            .collect();
        for (a, sa) in sketches.iter().enumerate() {
            for (b, sb) in sketches.iter().enumerate() {
                if method.verify(sa, sb).is_some() {
                    assert!(
                        (check.may_agree)(method, &prechecks[a], &prechecks[b]),
                        "case {:?}, method {}: documents {a} and {b} are verified, refused by the pre-check",
                        case["name"],
                        method.name()
                    );
                }
            }
        }
    }
    let outcome = dedup(method, &docs(case), EngineOptions::default(), &NoProgress).unwrap();
    assert_eq!(
        outcome.assignment.duplicate_of,
        expected(case, method.name()),
        "case {:?}, method {}",
        case["name"],
        method.name()
    );
    for (document, duplicate_of) in outcome.assignment.duplicate_of.iter().enumerate() {
        if duplicate_of.is_some() {
            let similarity = outcome.assignment.similarity.get(document).unwrap();
            assert!(
                method.is_duplicate(similarity),
                "{:?}: {similarity}",
                case["name"]
            );
        }
    }
}

/// Every registered method runs every case: a new method must add its expectations to
/// `data/conformance.json` (the test fails until it does).
#[test]
fn conformance_cases_pass_for_every_method() {
    for spec in registry::methods() {
        for case in cases() {
            let mut params = Params::new();
            let given = [("threshold", 0.7), ("ngram", 5.0)];
            for (name, default) in given {
                if spec.param(name).is_some() {
                    params.insert(name, case[name].as_f64().unwrap_or(default).to_string());
                }
            }
            registry::with_method(spec.name, &params, Check(&case)).unwrap();
        }
    }
}

#[test]
fn the_registry_builds_what_the_builder_builds() {
    for case in cases() {
        let by_builder = minhash_for(&case);
        let params = Params::new()
            .set(
                "threshold",
                case["threshold"].as_f64().unwrap_or(0.7).to_string(),
            )
            .set("ngram", case["ngram"].as_u64().unwrap_or(5).to_string());
        let by_registry = <MinHash as Registered>::from_params(&params).unwrap();
        assert_eq!(by_builder.settings(), by_registry.settings());
    }
}

/// A deterministic corpus of news-like texts with near-duplicates made by light edits.
fn edited_corpus() -> Vec<String> {
    let base = include_str!("../../../examples/news.jsonl");
    let mut texts: Vec<String> = base
        .lines()
        .map(|line| {
            serde_json::from_str::<Value>(line).unwrap()["text"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    let mut rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
    let mut next = move |bound: usize| (rng.next_u64() % bound.max(1) as u64) as usize;
    let originals = texts.clone();
    for original in originals.iter().chain(&originals) {
        let mut chars: Vec<char> = original.chars().collect();
        let edits = 1 + next(chars.len() / 40 + 1);
        for _ in 0..edits {
            let at = next(chars.len());
            match next(3) {
                0 if !chars.is_empty() => {
                    chars.remove(at);
                }
                1 => chars.insert(at, '某'),
                _ if !chars.is_empty() => chars[at] = 'x',
                _ => {}
            }
        }
        texts.push(chars.into_iter().collect());
    }
    texts
}

fn brute_force_pairs(method: &MinHash, texts: &[String]) -> Vec<(u32, u32, f64)> {
    let sets: Vec<_> = texts.iter().map(|t| method.shingles(t)).collect();
    let mut pairs = Vec::new();
    for a in 0..sets.len() {
        for b in a + 1..sets.len() {
            let similarity = jaccard(sets[a].hashes(), sets[b].hashes());
            if similarity > 0.0 {
                pairs.push((a as u32, b as u32, similarity));
            }
        }
    }
    pairs
}

fn reported_pairs(outcome: &Outcome) -> std::collections::HashMap<(u32, u32), f64> {
    outcome
        .all_pairs()
        .map(|p| ((p.a, p.b), p.similarity))
        .collect()
}

#[test]
fn lsh_recall_and_precision_against_brute_force_jaccard() {
    let texts = edited_corpus();
    for threshold in [0.5, 0.7, 0.8] {
        let method = plain_minhash().threshold(threshold).build().unwrap();
        let truth = brute_force_pairs(&method, &texts);
        let outcome = dedup(&method, &texts, EngineOptions::default(), &NoProgress).unwrap();
        let reported = reported_pairs(&outcome);
        // Precision 1.0: every reported pair is at or above the threshold by exact Jaccard.
        let exact: std::collections::HashMap<(u32, u32), f64> =
            truth.iter().map(|&(a, b, s)| ((a, b), s)).collect();
        for (pair, similarity) in &reported {
            let true_similarity = exact.get(pair).copied().unwrap_or(0.0);
            assert!((true_similarity - similarity).abs() < 1e-12);
            assert!(
                true_similarity >= threshold - 1e-9,
                "{pair:?}: {true_similarity}"
            );
        }
        // Recall >= 0.98 for pairs at or above threshold + 0.05.
        let strong: Vec<_> = truth.iter().filter(|p| p.2 >= threshold + 0.05).collect();
        let found = strong
            .iter()
            .filter(|p| reported.contains_key(&(p.0, p.1)))
            .count();
        let recall = found as f64 / strong.len() as f64;
        eprintln!(
            "threshold {threshold}: {} strong pairs, recall {recall:.4}",
            strong.len()
        );
        assert!(
            strong.len() >= 100,
            "too few pairs to measure: {}",
            strong.len()
        );
        assert!(recall >= 0.98, "threshold {threshold}: recall {recall}");
    }
}

#[test]
fn results_are_identical_for_one_and_two_threads() {
    let texts = edited_corpus();
    let method = plain_minhash().threshold(0.6).build().unwrap();
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let borrowed =
            pool.install(|| dedup(&method, &texts, EngineOptions::default(), &NoProgress).unwrap());
        let owned = pool.install(|| {
            dedup_owned(
                &method,
                texts.clone(),
                EngineOptions::default(),
                &NoProgress,
            )
            .unwrap()
        });
        let pairs = |outcome: &Outcome| -> Vec<_> {
            outcome
                .all_pairs()
                .map(|p| (p.a, p.b, p.similarity.to_bits()))
                .collect()
        };
        // Owned texts (dropped once sketched) give exactly what borrowed ones give.
        assert_eq!(borrowed.assignment, owned.assignment);
        assert_eq!(pairs(&borrowed), pairs(&owned));
        (pairs(&borrowed), borrowed.assignment)
    };
    assert_eq!(run(1), run(2));
}

#[test]
fn connected_mode_chains_and_exact_copies_follow_their_leader() {
    use neardup_core::cluster::ClusterMode;
    let texts = [
        "a b c d e f g h i j k l m n o p",
        "a b c d e f g h i j k l m n o p q r s t u v w",
        "h i j k l m n o p q r s t u v w",
        "h i j k l m n o p q r s t u v w",
    ];
    let method = plain_minhash()
        .tokenizer(neardup_core::tokenize::Tokenizer::Token)
        .threshold(0.6)
        .ngram(1)
        .build()
        .unwrap();
    let options = EngineOptions {
        cluster: ClusterMode::Connected,
        ..EngineOptions::default()
    };
    let outcome = dedup(&method, &texts, options, &NoProgress).unwrap();
    assert_eq!(
        outcome.assignment.duplicate_of,
        vec![None, Some(0), Some(0), Some(0)]
    );
    // 0 and 2 share 9 of 23 tokens: the chain merged them below the threshold.
    assert_eq!(outcome.assignment.similarity.get(2), Some(9.0 / 23.0));
    assert_eq!(outcome.stats.exact_copies, 1);
    let representative = dedup(&method, &texts, EngineOptions::default(), &NoProgress).unwrap();
    assert_eq!(
        representative.assignment.duplicate_of,
        vec![None, Some(0), None, Some(2)]
    );
}

#[test]
fn template_floods_stay_linear_with_the_bucket_cap() {
    let texts: Vec<String> = (0..3000)
        .map(|i| {
            format!(
                "【某某银行】您的验证码是{:06}，请在五分钟内完成验证，切勿告知他人，谨防诈骗。",
                i * 7919 % 1_000_000
            )
        })
        .collect();
    // Two messages share 22 of 32 shingles: Jaccard 0.69.
    let method = plain_minhash().threshold(0.6).build().unwrap();
    let run = |bucket_cap| {
        let options = EngineOptions {
            bucket_cap,
            candidate_budget: usize::MAX,
            ..EngineOptions::default()
        };
        dedup(&method, &texts, options, &NoProgress).unwrap()
    };
    let outcome = run(100);
    let uncapped = run(usize::MAX);
    assert!(outcome.stats.capped_buckets > 0);
    assert_eq!(uncapped.stats.capped_buckets, 0);
    // Against the uncapped run on the same input (a bound computed from the cap alone could
    // not fail): the cap must remove most of the flood's pairs.
    assert!(
        outcome.stats.candidate_pairs * 4 < uncapped.stats.candidate_pairs,
        "capped {:?}, uncapped {:?}",
        outcome.stats,
        uncapped.stats
    );
    let kept = outcome.assignment.kept();
    assert!(
        kept < 30,
        "the flood collapses to a few representatives: {kept}"
    );
}

#[test]
fn capped_buckets_anchor_on_the_documents_the_keep_policy_keeps() {
    use neardup_core::cluster::KeepPolicy;
    // 500 template messages and, last, the longest one: with `--keep longest` it must be
    // kept, and it can only absorb the others if it is an anchor of the capped buckets.
    let mut texts: Vec<String> = (0..500)
        .map(|i| {
            format!(
                "【某某银行】您的验证码是{:06}，请在五分钟内完成验证，切勿告知他人，谨防诈骗。",
                i * 7919 % 1_000_000
            )
        })
        .collect();
    texts.push(
        "【某某银行】您的验证码是424242，请在五分钟内完成验证，切勿告知他人，谨防诈骗！！谢谢"
            .to_owned(),
    );
    let longest = (texts.len() - 1) as u32;
    let method = plain_minhash().threshold(0.6).build().unwrap();
    let options = EngineOptions {
        bucket_cap: 10,
        keep: KeepPolicy::Longest,
        ..EngineOptions::default()
    };
    let outcome = dedup(&method, &texts, options, &NoProgress).unwrap();
    assert!(outcome.stats.capped_buckets > 0);
    assert_eq!(outcome.assignment.duplicate_of[longest as usize], None);
    let absorbed = (0..longest)
        .filter(|&d| outcome.assignment.duplicate_of[d as usize] == Some(longest))
        .count();
    assert!(
        absorbed >= 490,
        "only {absorbed} of 500 joined the kept one"
    );
}

/// The template flood of issue 6: `document number {i} about topic {i % 1000} with words`.
fn template_flood(documents: usize) -> Vec<String> {
    (0..documents)
        .map(|i| format!("document number {i} about topic {} with words", i % 1000))
        .collect()
}

#[test]
fn template_flood_candidates_are_bounded_by_the_budget() {
    // Before the budget: 77 million candidate pairs for these 20,000 documents.
    let documents = 20_000;
    let texts = template_flood(documents);
    let method = plain_minhash().build().unwrap();
    let options = EngineOptions::default();
    let outcome = dedup_owned(&method, texts, options, &NoProgress).unwrap();
    let stats = &outcome.stats;
    let budget = (documents * options.candidate_budget) as u64;
    assert!(stats.candidate_pairs <= budget, "{stats:?}");
    assert!(stats.verified_pairs <= budget, "{stats:?}");
    assert!(stats.budget_hits > 19_000, "{stats:?}");
    assert!(stats.partner_limit.is_some(), "{stats:?}");
    let kept = outcome.assignment.kept();
    assert!(
        kept < 100,
        "the flood collapses to a few representatives: {kept}"
    );
}

#[test]
fn ordinary_inputs_are_not_touched_by_the_budget() {
    let texts: Vec<String> = include_str!("../../../examples/news.jsonl")
        .lines()
        .map(|line| {
            serde_json::from_str::<Value>(line).unwrap()["text"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    let method = plain_minhash().build().unwrap();
    let limited = dedup(&method, &texts, EngineOptions::default(), &NoProgress).unwrap();
    assert_eq!(
        (limited.stats.budget_hits, limited.stats.partner_limit),
        (0, None)
    );
    let unlimited = EngineOptions {
        bucket_cap: usize::MAX,
        candidate_budget: usize::MAX,
        ..EngineOptions::default()
    };
    let all = dedup(&method, &texts, unlimited, &NoProgress).unwrap();
    assert_eq!(limited.assignment, all.assignment);
    assert_eq!(limited.stats.candidate_pairs, all.stats.candidate_pairs);
}

#[test]
fn bucket_cap_zero_is_refused_not_read_as_one() {
    let options = EngineOptions {
        bucket_cap: 0,
        ..EngineOptions::default()
    };
    let message = options.validate().unwrap_err().to_string();
    assert!(message.starts_with("invalid `bucket_cap`: 0"), "{message}");
    let options = EngineOptions {
        candidate_budget: 0,
        ..EngineOptions::default()
    };
    let message = options.validate().unwrap_err().to_string();
    assert!(
        message.starts_with("invalid `candidate_budget`: 0"),
        "{message}"
    );
    assert!(EngineOptions::default().validate().is_ok());
}

/// SimHash through the engine's exact Hamming join: with the distance deciding, the verified
/// pairs are exactly the pairs a brute-force scan finds (distance at most the smaller of the
/// two documents' limits, or equal features), for fixed and length-aware limits, and the
/// result does not depend on the thread count.
#[test]
fn simhash_pairs_equal_brute_force() {
    use neardup_core::methods::simhash::SimHash;
    use neardup_core::Sketch;
    let texts = edited_corpus();
    for rule in ["0", "3", "9", "<60:14,<200:9,5", "24"] {
        // The join alone: what the corpus pass learns (boilerplate, the template check's
        // marks) is off, so that the reference sketches as the engine does.
        let params = Params::new()
            .set("max_distance", rule)
            .set("verify", "none")
            .set("max_df", "off")
            .set("boilerplate_df", "off");
        let method = <SimHash as Registered>::from_params(&params).unwrap();
        let sketches: Vec<_> = texts.iter().map(|t| method.sketch(t)).collect();
        let mut expected = Vec::new();
        for a in 0..texts.len() {
            for b in a + 1..texts.len() {
                let (x, y) = (&sketches[a], &sketches[b]);
                if x.is_empty() || y.is_empty() {
                    continue;
                }
                let within = !x.exact_only() && !y.exact_only() && method.verify(x, y).is_some();
                if x.identity() == y.identity() || within {
                    expected.push((a as u32, b as u32));
                }
            }
        }
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| dedup(&method, &texts, EngineOptions::default(), &NoProgress))
                .unwrap()
        };
        let outcome = run(2);
        let mut found: Vec<(u32, u32)> = outcome.all_pairs().map(|p| (p.a, p.b)).collect();
        found.sort_unstable();
        assert_eq!(found, expected, "rule {rule}");
        assert!(outcome.all_pairs().all(|p| p.distance.is_some()));
        assert_eq!(
            run(1).assignment.duplicate_of,
            outcome.assignment.duplicate_of,
            "rule {rule}"
        );
        if rule == "9" {
            assert!(
                expected.len() > 100,
                "the corpus has near-duplicates: {}",
                expected.len()
            );
        }
    }
}

#[test]
fn groups_give_back_what_was_pushed() {
    let lists: Vec<Vec<u32>> = vec![vec![3, 1], vec![7, 8, 9], vec![2, 5]];
    let groups = neardup_engine::Groups::from(lists.clone());
    assert_eq!(groups.len(), 3);
    assert!(!groups.is_empty());
    assert_eq!(groups.get(1), [7, 8, 9]);
    let back: Vec<Vec<u32>> = groups.iter().map(<[u32]>::to_vec).collect();
    assert_eq!(back, lists);
    assert!(neardup_engine::Groups::default().is_empty());
}
