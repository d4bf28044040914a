//! Boilerplate-aware similarity end to end: shared wrappers and templates do not make
//! different texts duplicates, a re-wrapped text is still found, a document that is nothing
//! but boilerplate is matched with its exact copies only, and the results do not depend on
//! the thread count or on whether the line counts are exact or a count-min sketch.

use neardup_core::boilerplate::DfLimit;
use neardup_core::methods::minhash::{MinHash, MinHashBuilder};
use neardup_engine::{dedup, EngineOptions, NoProgress, Outcome};

const HEADER: &str = "本文来源于网络，版权归原作者所有，如有侵权请联系删除。\n\
    点击上方蓝字“晨读时光”关注我们，每天为你推送最美的诗词与散文！\n\
    编辑：晨读时光编辑部 转载请注明出处，商务合作请联系后台。";
const FOOTER: &str = "觉得好看，请点“在看”，分享给更多喜欢诗词的朋友！\n\
    声明：本文仅代表作者观点，不代表本平台立场，图片来自网络。\n\
    扫描下方二维码，加入晨读时光读者交流群，每天一起读一首好诗。";
const OTHER_HEADER: &str = "来源：江南文艺速递（ID：jiangnan2019）\n\
    作者：李华　编辑：王强　审核：张伟\n\
    关注江南文艺速递公众号，获取每日最新的文学资讯与名家名作。";

/// Thirty short texts, each different from the others: 28 characters drawn (seeded) from
/// a pool of common ones, in four lines of seven.
fn bodies() -> Vec<String> {
    let pool: Vec<char> = "春夏秋冬山水风云花草树木日月星辰江河湖海天地人和東西南北高低长短远近\
        来去出入上下左右前后里外大小多少新旧明暗冷暖轻重快慢早晚古今歌舞诗书画琴棋酒茶"
        .chars()
        .collect();
    let mut state: u64 = 7;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as usize
    };
    (0..30)
        .map(|_| {
            let mut body = String::new();
            for line in 0..4 {
                for _ in 0..7 {
                    body.push(pool[next() % pool.len()]);
                }
                body.push(if line % 2 == 0 { '，' } else { '。' });
            }
            body
        })
        .collect()
}

fn wrapped(body: &str, header: &str) -> String {
    format!("{header}\n{body}\n{FOOTER}")
}

/// Thirty wrapped poems (documents 0-29), twenty-five other posts of the second account
/// (30-54, so that its header is boilerplate too), the first poem re-wrapped by it (55), two
/// posts that are only the wrapper (56, 57), sixty template notices (58-117: more than the
/// 50 documents of the default `max_df`) and an exact repeat of the first notice (118).
fn corpus() -> Vec<String> {
    let bodies = bodies();
    let mut texts: Vec<String> = bodies.iter().map(|b| wrapped(b, HEADER)).collect();
    for i in 0..25 {
        texts.push(format!(
            "{OTHER_HEADER}\n今日推荐第{i}篇：{}读书笔记，关于阅读的{i}点体会。",
            ["周末", "秋日", "冬夜", "清晨", "午后"][i % 5]
        ));
    }
    texts.push(format!("{OTHER_HEADER}\n{}", bodies[0]));
    texts.push(format!("{HEADER}\n{FOOTER}"));
    texts.push(format!("{HEADER}\n{FOOTER}"));
    for i in 0..60u32 {
        texts.push(format!(
            "【工商银行】您尾号{:04}的储蓄卡于{}月{}日{:02}:{:02}支出人民币{}.{:02}元，当前余额{}.{:02}元。",
            (i * 7919) % 10000,
            i % 12 + 1,
            i % 28 + 1,
            (i * 5) % 24,
            (i * 13) % 60,
            100 + i * 37,
            i * 3 % 100,
            5000 + i * 911,
            i * 7 % 100
        ));
    }
    texts.push(texts[58].clone());
    texts
}

fn method(boilerplate: bool) -> MinHash {
    let builder = MinHashBuilder::new();
    let builder = if boilerplate {
        builder
    } else {
        builder.max_df(DfLimit::Off).boilerplate_df(DfLimit::Off)
    };
    builder.build().unwrap()
}

fn run(method: &MinHash, texts: &[String], options: EngineOptions) -> Outcome {
    dedup(method, texts, options, &NoProgress).unwrap()
}

fn same_cluster(outcome: &Outcome, a: u32, b: u32) -> bool {
    outcome.assignment.cluster_of(a) == outcome.assignment.cluster_of(b)
}

#[test]
fn without_boilerplate_handling_the_wrapper_merges_different_poems() {
    let outcome = run(&method(false), &corpus(), EngineOptions::default());
    let merged = (1..30).filter(|&i| same_cluster(&outcome, 0, i)).count();
    assert!(merged > 20, "{merged} poems in the first poem's cluster");
}

#[test]
fn wrappers_and_templates_no_longer_make_duplicates() {
    let texts = corpus();
    let outcome = run(&method(true), &texts, EngineOptions::default());
    // Different poems in one wrapper stay apart.
    for a in 0..30 {
        for b in a + 1..30 {
            assert!(!same_cluster(&outcome, a, b), "poems {a} and {b} merged");
        }
    }
    // The re-wrapped poem is found.
    assert!(same_cluster(&outcome, 0, 55));
    // The wrapper-only posts are copies of each other, of nothing else.
    assert!(same_cluster(&outcome, 56, 57));
    for other in (0..56).chain(58..texts.len() as u32) {
        assert!(
            !same_cluster(&outcome, 56, other),
            "wrapper-only post merged with {other}"
        );
    }
    assert!(outcome.stats.exact_only_documents >= 2);
    // Notices of one template with other numbers are different; an exact repeat is not.
    for a in 58..118 {
        for b in a + 1..118 {
            assert!(!same_cluster(&outcome, a, b), "notices {a} and {b} merged");
        }
    }
    assert!(same_cluster(&outcome, 58, 118));
    // What was found is reported.
    let found = &outcome.stats.boilerplate;
    assert_eq!(found.table.map(|t| t.0), Some("exact"));
    let top: Vec<&str> = found.lines.iter().map(|l| l.text.as_str()).collect();
    assert!(
        top.contains(&"本文来源于网络，版权归原作者所有，如有侵权请联系删除。"),
        "{top:?}"
    );
    assert!(found.documents >= 57, "{found:?}");
    assert!(found.discounted_features > 0, "{found:?}");
    assert!(found.limits.contains(&("boilerplate_df", 20)), "{found:?}");
    assert!(found.limits.contains(&("max_df", 50)), "{found:?}");
}

#[test]
fn count_min_lines_and_any_thread_count_give_the_same_result() {
    let texts = corpus();
    let method = method(true);
    let reference = run(&method, &texts, EngineOptions::default());
    // 1,024 cells a row: count-min, still wide enough for this corpus.
    let tiny = EngineOptions {
        corpus_memory: 8 << 10,
        ..EngineOptions::default()
    };
    let sketched = run(&method, &texts, tiny);
    assert_eq!(
        sketched.stats.boilerplate.table.map(|t| t.0),
        Some("count-min")
    );
    assert_eq!(sketched.assignment, reference.assignment);
    for threads in [1, 2, 3] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let outcome = pool.install(|| run(&method, &texts, EngineOptions::default()));
        assert_eq!(
            outcome.assignment, reference.assignment,
            "{threads} threads"
        );
        assert_eq!(outcome.stats.boilerplate, reference.stats.boilerplate);
    }
}

#[test]
fn a_count_min_table_too_small_to_tell_removes_no_line() {
    let mut texts = corpus();
    // Five hundred more documents of ten lines of their own: about 10,000 line and pair
    // keys over the 1,024 cells of the smallest table.
    texts.extend((0..500).map(|d| {
        (0..10)
            .map(|l| format!("Document {d} has its own line number {l} here."))
            .collect::<Vec<_>>()
            .join("\n")
    }));
    let tiny = EngineOptions {
        corpus_memory: 1,
        ..EngineOptions::default()
    };
    let method = method(true);
    let outcome = run(&method, &texts, tiny);
    let found = &outcome.stats.boilerplate;
    assert_eq!(found.table.map(|t| t.0), Some("count-min"));
    assert!(found.limits.contains(&("table_saturated", 1)), "{found:?}");
    assert!(found.lines.is_empty(), "{found:?}");
    assert_eq!(outcome.stats.exact_only_documents, 0);
}

#[test]
fn a_listed_line_is_removed_without_a_corpus_pass() {
    let texts = corpus();
    let listed = format!("{HEADER}\n{FOOTER}");
    let method = MinHashBuilder::new()
        .max_df(DfLimit::Off)
        .boilerplate_df(DfLimit::Off)
        .boilerplate_lines(listed)
        .build()
        .unwrap();
    let outcome = run(&method, &texts[..30], EngineOptions::default());
    assert!(outcome.stats.boilerplate.table.is_none());
    assert_eq!(outcome.assignment.kept(), 30);
    assert_eq!(outcome.stats.boilerplate.documents, 30);
}
