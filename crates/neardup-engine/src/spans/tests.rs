//! Span removal against the brute-force reference, on corpora that repeat themselves.

use proptest::prelude::*;

use super::reference::reference_spans;
use super::*;

/// Pieces mixing Chinese, English, emoji, full-width punctuation and line breaks.
const PIECES: &[&str] = &[
    "a",
    "b",
    "ab",
    "中",
    "文",
    "中文",
    "😀",
    "🇨🇳",
    "。",
    "！",
    "？",
    " ",
    "\n",
    ". ",
    "版权所有",
    "Copyright 2024.",
    "本文转载自新华网。",
    "aaaa",
    "😀😀",
];

fn corpus() -> impl Strategy<Value = Vec<String>> {
    let document = prop::collection::vec(prop::sample::select(PIECES), 0..14)
        .prop_map(|pieces| pieces.concat());
    prop::collection::vec(document, 0..7)
}

fn options() -> impl Strategy<Value = SpanOptions> {
    (
        prop::sample::select(vec![
            SpanLevel::Substring,
            SpanLevel::Line,
            SpanLevel::Sentence,
        ]),
        1usize..9,
        2usize..4,
        prop::sample::select(vec![SpanCount::Documents, SpanCount::Occurrences]),
        prop::sample::select(vec![SpanRemoval::Later, SpanRemoval::All]),
    )
        .prop_map(
            |(level, min_length, min_count, count, remove)| SpanOptions {
                level,
                min_length,
                min_count,
                count,
                remove,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn spans_are_exactly_the_brute_force_ones(texts in corpus(), options in options()) {
        let found = find_spans(&texts, &options).unwrap();
        let reference = reference_spans(&texts, &options);
        prop_assert_eq!(found.removals(), reference.removals());
        for (doc, text) in texts.iter().enumerate() {
            // Never a cut character: every range is on character boundaries.
            for range in found.ranges(doc) {
                prop_assert!(text.is_char_boundary(range.start as usize));
                prop_assert!(text.is_char_boundary(range.end as usize));
            }
        }
    }

    #[test]
    fn long_windows_match_the_reference(texts in corpus(), n in 9usize..60) {
        let options = SpanOptions { min_length: n, ..SpanOptions::default() };
        let found = find_spans(&texts, &options).unwrap();
        let reference = reference_spans(&texts, &options);
        prop_assert_eq!(found.removals(), reference.removals());
    }
}

#[test]
fn a_footer_is_removed_from_every_copy_but_the_first() {
    let footer = "本文转载自新华网，版权归原作者所有，如有侵权请联系删除。";
    let texts = [
        format!("第一篇文章。{footer}"),
        format!("第二条消息！{footer}"),
        "无关。".into(),
    ];
    let options = SpanOptions {
        min_length: 10,
        ..SpanOptions::default()
    };
    let found = find_spans(&texts, &options).unwrap();
    assert_eq!(found.apply(0, &texts[0]), texts[0]);
    assert_eq!(found.apply(1, &texts[1]), "第二条消息！");
    assert_eq!(found.removed_bytes(), footer.len() as u64);
    let all = SpanOptions {
        remove: SpanRemoval::All,
        ..options
    };
    let found = find_spans(&texts, &all).unwrap();
    assert_eq!(found.apply(0, &texts[0]), "第一篇文章。");
}

#[test]
fn a_run_of_one_character_keeps_one_window() {
    let texts = ["x".to_owned() + &"a".repeat(200), "a".repeat(20)];
    let options = SpanOptions {
        min_length: 20,
        ..SpanOptions::default()
    };
    let found = find_spans(&texts, &options).unwrap();
    assert_eq!(found.apply(0, &texts[0]), "x".to_owned() + &"a".repeat(20));
    assert_eq!(found.apply(1, &texts[1]), "");
}

#[test]
fn options_out_of_range_are_refused_with_what_is_accepted() {
    let texts = ["a"];
    let zero = SpanOptions {
        min_length: 0,
        ..SpanOptions::default()
    };
    assert!(find_spans(&texts, &zero)
        .unwrap_err()
        .to_string()
        .contains("at least 1"));
    let once = SpanOptions {
        min_count: 1,
        ..SpanOptions::default()
    };
    assert!(find_spans(&texts, &once)
        .unwrap_err()
        .to_string()
        .contains("at least 2"));
    assert_eq!(
        "sentence".parse::<SpanLevel>().unwrap(),
        SpanLevel::Sentence
    );
    assert!("word".parse::<SpanLevel>().is_err());
}

#[test]
fn an_empty_corpus_finds_nothing() {
    let texts: [&str; 0] = [];
    let found = find_spans(&texts, &SpanOptions::default()).unwrap();
    assert!(found.removals().is_empty());
}

/// The distributed steps, run by hand as Spark runs them: anchors with contexts per
/// document, grouped by key, each group walked, marks brought back per document.
fn distributed_spans(texts: &[String], options: &SpanOptions) -> FoundSpans {
    use std::collections::BTreeMap;

    use super::distributed::{context_anchors, document_ranges, group_marks, GroupMember};

    let mut groups: BTreeMap<u64, Vec<GroupMember<'_>>> = BTreeMap::new();
    for (doc, text) in texts.iter().enumerate() {
        for anchor in context_anchors(text, options).unwrap() {
            let context = &text[anchor.start as usize..anchor.end as usize];
            groups.entry(anchor.key).or_default().push(GroupMember {
                doc: doc as u32,
                context,
                anchor,
            });
        }
    }
    let mut removed: BTreeMap<u32, (Vec<Removal>, Vec<Removal>)> = BTreeMap::new();
    for members in groups.values() {
        let (group_removed, group_kept) = group_marks(members, options);
        for mark in group_removed {
            removed.entry(mark.doc).or_default().0.push(mark);
        }
        for mark in group_kept {
            removed.entry(mark.doc).or_default().1.push(mark);
        }
    }
    let mut all = Vec::new();
    for (doc, (marks, kept)) in removed {
        let ranges = document_ranges(marks, kept);
        all.extend(
            ranges
                .into_iter()
                .map(|(start, end)| Removal { doc, start, end }),
        );
    }
    FoundSpans::new(all, Vec::new(), texts.len())
}

proptest! {
    #[test]
    fn the_distributed_steps_give_the_same_spans(
        texts in corpus(),
        n in 1usize..30,
        count in prop::sample::select(vec![SpanCount::Documents, SpanCount::Occurrences]),
        remove in prop::sample::select(vec![SpanRemoval::Later, SpanRemoval::All]),
    ) {
        let options = SpanOptions { min_length: n, count, remove, ..SpanOptions::default() };
        let found = find_spans(&texts, &options).unwrap();
        let distributed = distributed_spans(&texts, &options);
        prop_assert_eq!(found.removals(), distributed.removals());
    }
}

proptest! {
    #[test]
    fn spilled_runs_give_the_same_spans(texts in corpus(), n in 1usize..30, budget in 0usize..2000) {
        let options = SpanOptions { min_length: n, ..SpanOptions::default() };
        let found = find_spans(&texts, &options).unwrap();
        let dir = neardup_index::spill_dir::MemorySpillDir;
        let spilled = find_spans_spilling(&texts, &options, &dir, budget).unwrap();
        prop_assert_eq!(found.removals(), spilled.removals());
    }
}
