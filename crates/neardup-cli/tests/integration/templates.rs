//! The templates a run found, in the stats file and the report: the methods whose template
//! check refuses pairs name the template of a flood of exam notices, its fixed text and each
//! filling's slots, and keep the fillings apart while they remove their copies.

use std::path::Path;

use serde_json::Value;

use crate::util::{json_lines, neardup, path, stderr};

/// 120 fillings of an exam notice (a city, a name, four numbers), every tenth sent again
/// with a "转发：" prefix.
fn flood(dir: &Path) -> String {
    let cities = ["广州", "深圳", "杭州"];
    let names = ["王伟", "李娜", "张敏", "刘洋", "陈静"];
    let mut lines = Vec::new();
    for i in 0..120usize {
        let text = format!(
            "【{}教育考试院】{}同学您好，您报名的考试将于5月{}日{}点开始，考场为第{}考场，座位号{}，\
             请携带身份证和准考证提前三十分钟到达。",
            cities[i % 3],
            names[i % 5],
            10 + i % 7,
            8 + i % 9,
            20 + i,
            200 + 3 * i
        );
        lines.push(serde_json::json!({"id": format!("n{i}"), "text": text}).to_string());
        if i % 10 == 0 {
            let copy = format!("转发：{text}");
            lines.push(serde_json::json!({"id": format!("c{i}"), "text": copy}).to_string());
        }
    }
    let input = path(dir, "flood.jsonl");
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    input
}

/// Runs `neardup dedup INPUT` with a kept, a clusters and a stats file in `dir` (their paths
/// returned) and `extra` options, `--max-df 10` and `--id-field id`; it must succeed.
fn dedup(dir: &Path, input: &str, extra: &[&str]) -> (String, String, String) {
    let (kept, clusters, stats) = (
        path(dir, "kept.jsonl"),
        path(dir, "clusters.jsonl"),
        path(dir, "stats.json"),
    );
    let mut args = vec![
        "dedup",
        input,
        "-o",
        &kept,
        "--clusters",
        &clusters,
        "--stats",
        &stats,
    ];
    args.extend(["--id-field", "id", "--max-df", "10", "--quiet"]);
    args.extend(extra);
    let output = neardup(&args);
    assert!(output.status.success(), "{extra:?}: {}", stderr(&output));
    (kept, clusters, stats)
}

#[test]
fn the_stats_name_the_template_its_fixed_text_and_slots_on_every_templated_method() {
    let dir = tempfile::tempdir().unwrap();
    let input = flood(dir.path());
    // `join` and `ngram` join templated texts on their rare elements, which pairs only what
    // the template check can accept: they refuse few pairs, and find their templates by the
    // template keys of those texts instead (docs/methods.md). Before, they found none.
    for method in ["minhash", "simhash", "join", "ngram"] {
        let (kept, _, stats) = dedup(dir.path(), &input, &["--method", method]);
        // The copies go, the fillings stay.
        assert_eq!(json_lines(&kept).len(), 120, "{method}");
        let stats: Value = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
        let templates = &stats["templates"];
        let refused = templates["refused_pairs"].as_u64().unwrap();
        assert!(
            refused > 0 || matches!(method, "join" | "ngram"),
            "{method}: {templates}"
        );
        assert!(
            templates["found"].as_u64().unwrap() >= 1,
            "{method}: {templates}"
        );
        let top = &templates["top"][0];
        let fixed = top["fixed"].as_str().unwrap();
        assert!(
            fixed.contains("教育考试院】{}同学您好") && fixed.contains("考场，座位号"),
            "{method}: {fixed}"
        );
        let ids = top["ids"].as_array().unwrap();
        let slots = top["slots"].as_array().unwrap();
        assert_eq!(ids.len(), slots.len(), "{method}: {top}");
        assert!(ids.len() > 1 && ids.len() <= 8, "{method}: {top}");
        let slot_count = fixed.matches("{}").count();
        assert!(
            slots
                .iter()
                .all(|s| s.as_array().unwrap().len() == slot_count),
            "{method}: {top}"
        );
    }
}

#[test]
fn the_report_shows_the_templates() {
    let dir = tempfile::tempdir().unwrap();
    let input = flood(dir.path());
    let (_, clusters, stats) = dedup(dir.path(), &input, &[]);
    let page = path(dir.path(), "report.html");
    let report = [
        "report",
        &input,
        "--clusters",
        &clusters,
        "--stats",
        &stats,
        "-o",
        &page,
    ];
    let output = neardup(&[&report[..], &["--id-field", "id", "--quiet"][..]].concat());
    assert!(output.status.success(), "{}", stderr(&output));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<h3>Templates</h3>"), "no templates section");
    assert!(html.contains("教育考试院】{}同学您好"), "no fixed text");
}

/// The templates section of `args`' run (a stats file written to `dir`).
fn templates_of(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Value {
    let stats = path(dir, "stats.json");
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_neardup"));
    command
        .args(args)
        .args(["--stats", &stats, "--max-df", "10", "--quiet"]);
    command.stdin(std::process::Stdio::piped());
    let mut child = command.spawn().unwrap();
    let mut pipe = child.stdin.take().unwrap();
    std::io::Write::write_all(&mut pipe, stdin.unwrap_or_default()).unwrap();
    drop(pipe);
    assert!(child.wait().unwrap().success(), "{args:?}");
    let stats: Value = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    stats["templates"].clone()
}

#[test]
fn every_path_and_format_lists_the_same_templates() {
    let dir = tempfile::tempdir().unwrap();
    let input = flood(dir.path());
    let kept = path(dir.path(), "kept.jsonl");
    let base = ["dedup", &input, "-o", &kept, "--id-field", "id"];
    // In memory, the texts are taken from the records' places in the file.
    let expected = templates_of(dir.path(), &base, None);
    assert!(expected["top"][0]["fixed"].is_string(), "{expected}");
    // Spilled, as the inputs are read again to write the kept records.
    let spilled = [&base[..], &["--memory-limit", "1"][..]].concat();
    assert_eq!(templates_of(dir.path(), &spilled, None), expected);
    // `join` finds its templates by their template keys, the same spilled.
    let join = [&base[..], &["--method", "join"][..]].concat();
    let joined = templates_of(dir.path(), &join, None);
    assert!(joined["found"].as_u64().unwrap() >= 1, "{joined}");
    let join_spilled = [&join[..], &["--memory-limit", "1"][..]].concat();
    assert_eq!(templates_of(dir.path(), &join_spilled, None), joined);
    // From standard input, from the lines held.
    let text = std::fs::read(&input).unwrap();
    let piped = [
        "dedup",
        "-",
        "-o",
        &kept,
        "--id-field",
        "id",
        "--format",
        "jsonl",
    ];
    assert_eq!(templates_of(dir.path(), &piped, Some(&text)), expected);
    // CSV in memory: its rows are read again from the whole file.
    let csv = path(dir.path(), "flood.csv");
    let mut rows = String::from("id,text\n");
    for row in json_lines(&input) {
        let text = row["text"].as_str().unwrap();
        rows.push_str(&format!(
            "{},{}\n",
            row["id"].as_str().unwrap(),
            text.replace(',', "，")
        ));
    }
    std::fs::write(&csv, rows).unwrap();
    let kept_csv = path(dir.path(), "kept.csv");
    let from_csv = templates_of(
        dir.path(),
        &["dedup", &csv, "-o", &kept_csv, "--id-field", "id"],
        None,
    );
    assert!(
        from_csv["top"][0]["fixed"]
            .as_str()
            .unwrap()
            .contains("同学您好"),
        "{from_csv}"
    );
}
