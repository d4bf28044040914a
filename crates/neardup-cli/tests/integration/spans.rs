//! `spans` and `dedup --spans`: repeated passages removed from inside documents, written back
//! in the input's format, reported; bad inputs give a bounded run or a clear error.

use std::fs;

use serde_json::{json, Value};

use crate::util::{json_lines, neardup, path, stderr};

const FOOTER: &str = "本文转载自新华网，版权归原作者所有，如有侵权请联系删除。";
const BANNER: &str = "We use cookies to improve your experience. By using this site you agree.";

/// Pages sharing a Chinese footer and an English banner, with an extra field each.
fn pages(dir: &std::path::Path) -> String {
    let rows = [
        json!({"id": "a", "lang": "zh", "text": format!("第一篇文章讲天气。{FOOTER}")}),
        json!({"id": "b", "lang": "en", "text": format!("{BANNER}\nFirst story 😀.")}),
        json!({"id": "c", "lang": "zh", "text": format!("第二条消息谈交通！{FOOTER}")}),
        json!({"id": "d", "lang": "en", "text": format!("{BANNER}\nSecond story.")}),
        json!({"id": "e", "lang": "zh", "text": "没有重复的内容。"}),
    ];
    let input = path(dir, "pages.jsonl");
    let lines: Vec<String> = rows.iter().map(Value::to_string).collect();
    fs::write(&input, lines.join("\n") + "\n").unwrap();
    input
}

fn texts(rows: &[Value]) -> Vec<&str> {
    rows.iter()
        .map(|row| row["text"].as_str().unwrap())
        .collect()
}

#[test]
fn spans_come_off_every_copy_but_the_first_and_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let input = pages(dir.path());
    let (out, report, ranges) = (
        path(dir.path(), "out.jsonl"),
        path(dir.path(), "spans.jsonl"),
        path(dir.path(), "ranges.jsonl"),
    );
    let run = neardup(&[
        "spans",
        &input,
        "-o",
        &out,
        "--min-length",
        "20",
        "--id-field",
        "id",
        "--report",
        &report,
        "--ranges",
        &ranges,
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert!(
        stderr(&run).contains("5 documents, 2 changed"),
        "{}",
        stderr(&run)
    );
    let kept = json_lines(&out);
    assert_eq!(
        texts(&kept),
        [
            format!("第一篇文章讲天气。{FOOTER}").as_str(),
            &format!("{BANNER}\nFirst story 😀."),
            "第二条消息谈交通！",
            "Second story.",
            "没有重复的内容。",
        ]
    );
    // Other fields untouched, in their order.
    assert_eq!(kept[2]["id"], "c");
    assert_eq!(kept[2]["lang"], "zh");
    // Most bytes first: the footer (84 bytes), then the banner with its line break (73).
    let rows = json_lines(&report);
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["text"], FOOTER);
    assert_eq!(rows[0]["documents"], json!(["c"]));
    let banner = format!("{BANNER}\n");
    assert_eq!(
        rows[1],
        json!({"text": banner, "count": 1, "occurrences": 1, "bytes_removed": banner.len(),
               "documents": ["d"], "more_documents": 0})
    );
    let ranges = json_lines(&ranges);
    assert_eq!(
        ranges[0],
        json!({"doc": 2, "id": "c", "ranges": [[27, 27 + FOOTER.len()]]})
    );
}

#[test]
fn remove_all_and_occurrences_follow_exactsubstr() {
    let dir = tempfile::tempdir().unwrap();
    let input = pages(dir.path());
    let out = path(dir.path(), "out.jsonl");
    let run = neardup(&[
        "spans",
        &input,
        "-o",
        &out,
        "--min-length",
        "20",
        "--remove",
        "all",
        "--count",
        "occurrences",
        "--quiet",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let kept = json_lines(&out);
    assert_eq!(texts(&kept)[0], "第一篇文章讲天气。");
    assert_eq!(texts(&kept)[1], "First story 😀.");
}

#[test]
fn lines_and_sentences_are_levels() {
    let dir = tempfile::tempdir().unwrap();
    let input = path(dir.path(), "in.txt");
    // Text input: one document a line; sentences repeat across documents.
    let lines = [
        "今天下雨了。记得带伞！欢迎关注我们的公众号。",
        "明天放晴。欢迎关注我们的公众号。",
        "Subscribe to our newsletter today. Rain is coming.",
        "Sun is out. Subscribe to our newsletter today.",
    ];
    fs::write(&input, lines.join("\n") + "\n").unwrap();
    let out = path(dir.path(), "out.txt");
    let run = neardup(&[
        "spans",
        &input,
        "-o",
        &out,
        "--level",
        "sentence",
        "--min-length",
        "5",
        "--quiet",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let written = fs::read_to_string(&out).unwrap();
    assert_eq!(
        written,
        "今天下雨了。记得带伞！欢迎关注我们的公众号。\n明天放晴。\nSubscribe to our newsletter \
         today. Rain is coming.\nSun is out. \n"
    );
}

#[test]
fn a_csv_input_has_its_text_column_shortened() {
    let dir = tempfile::tempdir().unwrap();
    let input = path(dir.path(), "in.csv");
    let body = format!("id,text,n\n1,\"甲{FOOTER}\",7\n2,\"乙{FOOTER}\",8\n");
    fs::write(&input, body).unwrap();
    let out = path(dir.path(), "out.csv");
    let run = neardup(&["spans", &input, "-o", &out, "--min-length", "10", "--quiet"]);
    assert!(run.status.success(), "{}", stderr(&run));
    let written = fs::read_to_string(&out).unwrap();
    assert_eq!(written, format!("id,text,n\n1,甲{FOOTER},7\n2,乙,8\n"));
}

#[test]
fn dedup_with_spans_removes_copies_then_spans_of_the_kept() {
    let dir = tempfile::tempdir().unwrap();
    let input = pages(dir.path());
    // An exact copy of "c": removed by the dedup, so not counted among the span's copies.
    let copy = json!({"id": "c2", "lang": "zh", "text": format!("第二条消息谈交通！{FOOTER}")});
    let mut body = fs::read_to_string(&input).unwrap();
    body.push_str(&format!("{copy}\n"));
    fs::write(&input, body).unwrap();
    let (out, report) = (
        path(dir.path(), "out.jsonl"),
        path(dir.path(), "spans.jsonl"),
    );
    let run = neardup(&[
        "dedup",
        &input,
        "-o",
        &out,
        "--method",
        "exact",
        "--id-field",
        "id",
        "--spans",
        "substring",
        "--span-min-length",
        "20",
        "--span-report",
        &report,
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let kept = json_lines(&out);
    let ids: Vec<&str> = kept.iter().map(|row| row["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["a", "b", "c", "d", "e"]);
    assert_eq!(texts(&kept)[2], "第二条消息谈交通！");
    assert!(
        stderr(&run).contains("5 documents, 2 changed"),
        "{}",
        stderr(&run)
    );
    assert_eq!(json_lines(&report).len(), 2);
}

#[test]
fn bad_inputs_give_a_bounded_run_or_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = path(dir.path(), "out.jsonl");
    // An empty corpus: an empty output.
    let empty = path(dir.path(), "empty.jsonl");
    fs::write(&empty, "").unwrap();
    let run = neardup(&["spans", &empty, "-o", &out]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert_eq!(fs::read_to_string(&out).unwrap(), "");
    // One repeated line: every copy but the first loses it all.
    let flood = path(dir.path(), "flood.jsonl");
    let row = json!({"text": FOOTER}).to_string() + "\n";
    fs::write(&flood, row.repeat(3000)).unwrap();
    let run = neardup(&["spans", &flood, "-o", &out, "--min-length", "10", "--quiet"]);
    assert!(run.status.success(), "{}", stderr(&run));
    let kept = json_lines(&out);
    assert_eq!(kept.len(), 3000);
    assert_eq!(texts(&kept)[0], FOOTER);
    assert!(texts(&kept)[1..].iter().all(|text| text.is_empty()));
    // A pattern repeating inside one document: its first windows ("abab..." and "baba...")
    // stay whole, 31 characters.
    let run_of = path(dir.path(), "run.txt");
    fs::write(&run_of, "ab".repeat(100_000) + "\n").unwrap();
    let out_text = path(dir.path(), "out.txt");
    let run = neardup(&[
        "spans",
        &run_of,
        "-o",
        &out_text,
        "--count",
        "occurrences",
        "--min-length",
        "30",
        "--quiet",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert_eq!(
        fs::read_to_string(&out_text).unwrap(),
        "ab".repeat(15) + "a\n"
    );
    // Options out of range, and an output that is the input: refused, nothing written.
    let run = neardup(&["spans", &flood, "-o", &out, "--min-count", "1"]);
    assert!(!run.status.success());
    assert!(stderr(&run).contains("--min-count"), "{}", stderr(&run));
    let run = neardup(&["spans", &flood, "-o", &flood]);
    assert!(!run.status.success());
    assert!(stderr(&run).contains("output"), "{}", stderr(&run));
    // A memory limit the corpus cannot fit under: refused before any work, saying why.
    let run = neardup(&["spans", &flood, "-o", &out, "--memory-limit", "10K"]);
    assert!(!run.status.success());
    assert!(stderr(&run).contains("--memory-limit"), "{}", stderr(&run));
}

#[test]
fn past_the_memory_limit_the_anchors_spill_and_the_output_is_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let input = path(dir.path(), "pages.jsonl");
    // 20,000 pages of about 300 bytes: a shared footer, the rest their own.
    let mut body = String::new();
    for page in 0..20_000u32 {
        let own: String = (0..40)
            .map(|i| char::from_u32(0x4e00 + (page * 41 + i * 7) % 20_000).unwrap())
            .collect();
        body.push_str(&json!({"text": format!("{own}。{FOOTER}{page}")}).to_string());
        body.push('\n');
    }
    fs::write(&input, body).unwrap();
    let (free, bounded) = (
        path(dir.path(), "free.jsonl"),
        path(dir.path(), "bounded.jsonl"),
    );
    let run = neardup(&["spans", &input, "-o", &free, "--min-length", "20"]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert!(!stderr(&run).contains("spilled"), "{}", stderr(&run));
    let temp = tempfile::tempdir().unwrap();
    let run = neardup(&[
        "spans",
        &input,
        "-o",
        &bounded,
        "--min-length",
        "20",
        "--memory-limit",
        "16M",
        "--temp-dir",
        &temp.path().to_string_lossy(),
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert!(
        stderr(&run).contains("of anchors spilled"),
        "{}",
        stderr(&run)
    );
    assert_eq!(fs::read(&free).unwrap(), fs::read(&bounded).unwrap());
    let rows = json_lines(&free);
    assert!(rows[0]["text"].as_str().unwrap().contains(FOOTER));
    assert!(!rows[1]["text"].as_str().unwrap().contains(FOOTER));
    // The temporary directory is gone.
    assert_eq!(fs::read_dir(temp.path()).unwrap().count(), 0);
}
