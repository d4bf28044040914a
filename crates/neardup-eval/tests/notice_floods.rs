//! Floods of template notices (`neardup synth-notices`) deduplicated by `minhash`, `simhash`
//! and the classic methods at the registry's defaults: copies of a notice are found, fillings of a template
//! are kept apart, dated headers and inline wrappers do not hide a copy (issue 43).

use std::collections::HashMap;

use neardup_core::methods::imatch::IMatch;
use neardup_core::methods::minhash::MinHash;
use neardup_core::methods::segments::Segments;
use neardup_core::methods::sentences::Sentences;
use neardup_core::methods::short::{NgramIndex, SimilarityJoin};
use neardup_core::methods::simhash::SimHash;
use neardup_core::methods::topn::TopN;
use neardup_core::params::{Params, Registered};
use neardup_core::Method;
use neardup_engine::batch::{dedup, EngineOptions, EngineStats, NoProgress};
use neardup_eval::synth::notices::{notice_flood, FloodDocument, FloodOptions, FloodShape};

/// The pairs inside groups of these sizes.
fn pairs<K>(counts: HashMap<K, u64>) -> u64 {
    counts.values().map(|n| n * (n - 1) / 2).sum()
}

/// Pairwise precision and recall of the engine's clusters against the notice truth.
fn precision_recall(shape: FloodShape, notices: usize) -> (f64, f64, u64) {
    against_truth::<MinHash>(shape, notices, &Params::new(), |d| &d.notice)
}

/// Pairwise precision and recall of method `M` with `params` against the truth `truth_of`
/// gives each document, and the budget hits.
fn against_truth<M: Method + Registered>(
    shape: FloodShape,
    notices: usize,
    params: &Params,
    truth_of: fn(&FloodDocument) -> &String,
) -> (f64, f64, u64) {
    let (precision, recall, (stats, _)) = measured::<M>(shape, notices, params, truth_of);
    (precision, recall, stats.budget_hits)
}

/// [`against_truth`], with the run's statistics and the number of documents.
fn measured<M: Method + Registered>(
    shape: FloodShape,
    notices: usize,
    params: &Params,
    truth_of: fn(&FloodDocument) -> &String,
) -> (f64, f64, (EngineStats, usize)) {
    let options = FloodOptions {
        shape,
        notices,
        ..FloodOptions::default()
    };
    let flood = notice_flood(&options, &[]);
    let texts: Vec<&str> = flood.iter().map(|d| d.text.as_str()).collect();
    let method = M::from_params(params).unwrap();
    let outcome = dedup(&method, &texts, EngineOptions::default(), &NoProgress).unwrap();
    let cluster: Vec<u32> = (0..texts.len() as u32)
        .map(|d| outcome.assignment.duplicate_of[d as usize].unwrap_or(d))
        .collect();
    let mut predicted = HashMap::new();
    let mut truth = HashMap::new();
    let mut both = HashMap::new();
    for (document, &representative) in flood.iter().zip(&cluster) {
        *predicted.entry(representative).or_insert(0u64) += 1;
        *truth.entry(truth_of(document).as_str()).or_insert(0u64) += 1;
        *both
            .entry((representative, truth_of(document).as_str()))
            .or_insert(0u64) += 1;
    }
    let (predicted, truth, common) = (pairs(predicted), pairs(truth), pairs(both));
    let precision = common as f64 / predicted.max(1) as f64;
    let recall = common as f64 / truth.max(1) as f64;
    (precision, recall, (outcome.stats, texts.len()))
}

#[test]
fn sms_notices_copies_are_found_and_fillings_kept_apart() {
    let (precision, recall, budget_hits) = precision_recall(FloodShape::Sms, 5000);
    assert!(
        precision >= 0.98 && recall >= 0.95,
        "P {precision} R {recall}"
    );
    // The fillings of a template crowd each notice's ordinary buckets, so the budget cuts
    // in; the copies, met under the filling's priority keys, are kept first.
    assert!(budget_hits > 1000, "budget hits {budget_hits}");
}

#[test]
fn dated_headers_and_inline_wrappers_do_not_hide_a_copy() {
    for shape in [FloodShape::Headers, FloodShape::Wrappers] {
        let (precision, recall, _) = precision_recall(shape, 2500);
        assert!(
            precision >= 0.98 && recall >= 0.95,
            "{shape:?}: P {precision} R {recall}"
        );
    }
}

/// With `templates = duplicate`, the fillings of a template join one cluster. Measured
/// against the template truth from the command line: precision 1.000, recall 0.971 at 5,000
/// notices (F1 0.985; issue 43's target is 0.95). It was 0.872 before the template keys.
#[test]
fn templates_duplicate_joins_each_templates_fillings() {
    let mut params = Params::new();
    params.insert("templates", "duplicate");
    let template: fn(&FloodDocument) -> &String = |d| &d.template;
    let (precision, recall, _) = against_truth::<MinHash>(FloodShape::Sms, 5000, &params, template);
    assert!(
        precision >= 0.99 && recall >= 0.95,
        "P {precision} R {recall}"
    );
    // The notice truth is not what duplicate means: fillings merge.
    let (precision, _, _) = against_truth::<MinHash>(FloodShape::Sms, 5000, &params, |d| &d.notice);
    assert!(precision < 0.1, "P {precision}");
}

/// `--templates duplicate` on `simhash` and `join`: before, `simhash` merged only the fillings
/// its distance met (F1 0.095 against the template truth), and `join` refused the run (every
/// filling joined every other: the exact answer is quadratic). Now each templated text is
/// paired with the first texts sharing one of its template keys (`anchor_pairs`, a bounded
/// number per key), whatever their distance or tokens, and the check calls them duplicates.
#[test]
fn templates_duplicate_joins_the_fillings_on_simhash_and_join_in_bounded_work() {
    let mut params = Params::new();
    params.insert("templates", "duplicate");
    let template: fn(&FloodDocument) -> &String = |d| &d.template;
    for (name, (precision, recall, _)) in [
        (
            "simhash",
            against_truth::<SimHash>(FloodShape::Sms, 3000, &params, template),
        ),
        (
            "join",
            against_truth::<SimilarityJoin>(FloodShape::Sms, 3000, &params, template),
        ),
        // Pass-Join: recall was 0.670 at 5,000 notices (from the command line), as the
        // template's containment had to reach the edit threshold, 0.7; a parcel notice with
        // another courier, city and station shares less. It is now the bigram count filter
        // of that threshold, 0.4 (`ShortText::template_threshold`).
        (
            "join --measure edit",
            against_truth::<SimilarityJoin>(
                FloodShape::Sms,
                3000,
                &params.clone().set("measure", "edit"),
                template,
            ),
        ),
    ] {
        assert!(
            precision >= 0.99 && recall >= 0.95,
            "{name}: P {precision} R {recall}"
        );
    }
}

/// `simhash` at its defaults (the service's default method): issue 43's targets are
/// precision 0.95 and recall 0.90 on every flood. Before the template check every filling
/// of a template merged (precision 0.006 on `sms`), and the budget kept the best-ranked
/// fillings within the distance instead of a notice's nearest copies.
#[test]
fn simhash_keeps_fillings_apart_and_finds_copies() {
    for (shape, notices) in [
        (FloodShape::Sms, 5000),
        (FloodShape::Headers, 2500),
        (FloodShape::Wrappers, 2500),
    ] {
        let notice: fn(&FloodDocument) -> &String = |d| &d.notice;
        let (precision, recall, budget_hits) =
            against_truth::<SimHash>(shape, notices, &Params::new(), notice);
        assert!(
            precision >= 0.95 && recall >= 0.90,
            "{shape:?}: P {precision} R {recall} (budget hits {budget_hits})"
        );
    }
}

/// The classic methods share the template model: boilerplate (a dated header, a "转发：" prefix,
/// a "回T退订" suffix) leaves the text before their signatures are taken, and the template
/// check refuses two fillings of one template that their signatures and measure accept.
/// Before it, `segments` and `sentences` merged the fillings of `sms` (precision 0.006 and
/// 0.003), `imatch` 0.13; a dated header hid every copy from `imatch` (recall 0.12 on
/// `headers`). Their recall on `sms` stays what their signatures find: a code or an amount
/// moves a segment's boundary and a lexicon word, so no floor is set there.
#[test]
fn classic_methods_keep_fillings_apart_and_see_through_headers() {
    fn check<M: Method + Registered>(name: &str) {
        let notice: fn(&FloodDocument) -> &String = |d| &d.notice;
        for (shape, notices, least_recall) in [
            (FloodShape::Sms, 3000, 0.0),
            (FloodShape::Headers, 1500, 0.95),
            (FloodShape::Wrappers, 1500, 0.75),
        ] {
            let (precision, recall, _) = against_truth::<M>(shape, notices, &Params::new(), notice);
            assert!(
                precision >= 0.98 && recall >= least_recall,
                "{name} on {shape:?}: P {precision} R {recall}"
            );
        }
    }
    check::<IMatch>("imatch");
    check::<TopN>("topn");
    check::<Segments>("segments");
    check::<Sentences>("sentences");
}

/// `segments` meets a notice's copies through its filling keys (its rare elements, its
/// digits in order), and a templated text reads at most the bucket cap in the shared-key
/// merge: its signatures alone found 0.47 of the `sms` flood's copies at 3,000 notices (an
/// amount or a code moves a segment's boundary; 0.947 with the filling keys), and the budget
/// kept its template's other fillings.
#[test]
fn segments_finds_a_notices_copies_through_its_filling_keys() {
    let notice: fn(&FloodDocument) -> &String = |d| &d.notice;
    let (precision, recall, budget_hits) =
        against_truth::<Segments>(FloodShape::Sms, 3000, &Params::new(), notice);
    assert!(
        precision >= 0.98 && recall >= 0.9,
        "segments on Sms: P {precision} R {recall} (budget hits {budget_hits})"
    );
}

/// `ngram` joins a templated text on its rare elements, as `join` does, instead of walking it
/// through the greedy pass of its template's n-grams: there it met every other filling of the
/// template (each bucket of a template's n-gram fills to the bucket cap, and a greedy pass over
/// fillings that are all distinct compares each with all before it). Before, the `sms` flood
/// at 5,000 notices took 60 million comparisons (4,750 a document, 15 s); 10,000 notices of one
/// template took 12.5 s at precision 0.82.
#[test]
fn ngram_joins_a_templated_notice_on_its_rare_elements_not_its_templates_crowd() {
    let notice: fn(&FloodDocument) -> &String = |d| &d.notice;
    let (precision, recall, (stats, documents)) =
        measured::<NgramIndex>(FloodShape::Sms, 3000, &Params::new(), notice);
    assert!(
        precision >= 0.98 && recall >= 0.95,
        "ngram on Sms: P {precision} R {recall}"
    );
    let per_document = stats.candidate_comparisons as f64 / documents as f64;
    assert!(
        per_document <= 10.0,
        "{per_document:.1} comparisons a document"
    );
}

/// `--templates duplicate` on the classic methods: their signatures of two fillings differ (a
/// number moves a segment's boundary, a name changes the lexicon words), so nothing paired
/// the fillings that the check would call duplicates. F1 against the template truth was
/// 0.14 (`segments`), 0.48 (`sentences`), 0.019 (`imatch`) and 0.001 (`topn`) on the `sms`
/// flood at 5,000 notices. Each templated text now meets the first texts sharing one of its
/// template keys (`anchor_pairs`), as on `simhash` and `join`.
#[test]
fn templates_duplicate_joins_the_fillings_on_the_classic_methods() {
    let mut params = Params::new();
    params.insert("templates", "duplicate");
    let template: fn(&FloodDocument) -> &String = |d| &d.template;
    let flood = FloodShape::Sms;
    for (name, (precision, recall, _), least_recall) in [
        (
            "segments",
            against_truth::<Segments>(flood, 3000, &params, template),
            0.95,
        ),
        (
            "imatch",
            against_truth::<IMatch>(flood, 3000, &params, template),
            0.95,
        ),
        (
            "topn",
            against_truth::<TopN>(flood, 3000, &params, template),
            0.95,
        ),
        // It was 0.889 at 5,000 notices: a text whose other sentences left as boilerplate
        // (an English code notice: "It expires in 7 minutes." and "Do not share it with
        // anyone." are frequent lines) had too few sentence marks and was exact-only, so no
        // template key paired it. With the policy, a text with a template set is joined
        // through its template keys, whatever signatures it has.
        (
            "sentences",
            against_truth::<Sentences>(flood, 3000, &params, template),
            0.95,
        ),
    ] {
        assert!(
            precision >= 0.99 && recall >= least_recall,
            "{name}: P {precision} R {recall}"
        );
    }
}

/// `join --measure edit` (Pass-Join) joins a templated text on its rare elements too: every
/// filling of a template is within the edit bound of the others, and the exact answer passed
/// the join's pair limit, so the run refused the `sms` flood ("the run reached its candidate
/// budget"). Now it answers, as the set join does.
#[test]
fn pass_join_answers_a_flood_and_finds_the_copies() {
    let mut params = Params::new();
    params.insert("measure", "edit");
    let notice: fn(&FloodDocument) -> &String = |d| &d.notice;
    let (precision, recall, _) =
        against_truth::<SimilarityJoin>(FloodShape::Sms, 3000, &params, notice);
    assert!(
        precision >= 0.98 && recall >= 0.95,
        "join --measure edit on Sms: P {precision} R {recall}"
    );
}
