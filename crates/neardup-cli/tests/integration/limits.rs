//! Issue 44, memory limits that hold: the estimate counts documents as well as bytes, the
//! in-memory read switches to the streamed path when what it holds passes the limit, and a
//! document whose sketching alone passes the limit is refused as it is read. Each test
//! failed on the code before (tiny documents and gzip bombs took the in-memory path and
//! peaked at many times the limit; a large document was sketched whatever the limit).

use std::io::Write;

use serde_json::Value;

use crate::util::{files_in, json_file, neardup, path, stderr};

/// `{"text":"hi"}` lines.
fn tiny(count: usize) -> Vec<u8> {
    b"{\"text\":\"hi\"}\n".repeat(count)
}

/// Runs `dedup input -o out --stats stats` with `args`; the stats.
fn stats_of(dir: &std::path::Path, input: &str, args: &[&str]) -> Value {
    let out = path(dir, "out.jsonl");
    let stats = path(dir, "stats.json");
    let mut all = vec!["dedup", input, "-o", &out, "--stats", &stats, "-q"];
    all.extend_from_slice(args);
    let run = neardup(&all);
    assert!(run.status.success(), "{args:?}: {}", stderr(&run));
    json_file(&stats)
}

/// The peak resident memory the stats file reports, in bytes.
fn peak(stats: &Value) -> u64 {
    stats["peak_rss_bytes"].as_u64().unwrap_or(0)
}

const LIMIT: u64 = 100 << 20;

#[test]
fn tiny_documents_are_streamed_under_the_limit() {
    // 28 bytes an input line estimated the run at 10 times its bytes: 300,000 documents
    // (4.2 MB) took the in-memory path under 100M and held about 300 MB.
    let dir = tempfile::tempdir().unwrap();
    let input = path(dir.path(), "tiny.jsonl");
    std::fs::write(&input, tiny(300_000)).unwrap();
    let stats = stats_of(dir.path(), &input, &["--memory-limit", "100M"]);
    assert_eq!(stats["memory_path"], "spill", "{}", stats["memory_reason"]);
    assert_eq!(stats["documents_in"], 300_000);
    assert!(peak(&stats) < LIMIT, "peak {} over {LIMIT}", peak(&stats));
}

#[test]
fn a_gzip_bomb_is_streamed_under_the_limit() {
    // 300,000 documents in 8 KB of gzip: counted 40 times 8 KB before.
    let dir = tempfile::tempdir().unwrap();
    let input = path(dir.path(), "bomb.jsonl.gz");
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(&tiny(300_000)).unwrap();
    std::fs::write(&input, encoder.finish().unwrap()).unwrap();
    let stats = stats_of(dir.path(), &input, &["--memory-limit", "100M"]);
    assert_eq!(stats["memory_path"], "spill", "{}", stats["memory_reason"]);
    assert!(peak(&stats) < LIMIT, "peak {} over {LIMIT}", peak(&stats));
}

#[test]
fn the_in_memory_read_switches_to_streaming_when_it_passes_the_limit() {
    // The head (long lines) makes the estimate fit; the tail of tiny documents does not.
    let dir = tempfile::tempdir().unwrap();
    let input = path(dir.path(), "mixed.jsonl");
    let mut bytes = Vec::new();
    for i in 0..150 {
        let text = format!("{i} {}", "long text ".repeat(2_000));
        bytes.extend(format!("{{\"text\":\"{text}\"}}\n").into_bytes());
    }
    bytes.extend(tiny(300_000));
    std::fs::write(&input, &bytes).unwrap();
    let stats = stats_of(dir.path(), &input, &["--memory-limit", "100M"]);
    assert_eq!(stats["memory_path"], "spill", "{stats}");
    let reason = stats["memory_reason"].as_str().unwrap();
    assert!(reason.contains("streamed instead"), "{reason}");
    assert!(peak(&stats) < LIMIT, "peak {} over {LIMIT}", peak(&stats));
    // The same outputs as a run streamed from the start.
    let kept = std::fs::read(path(dir.path(), "out.jsonl")).unwrap();
    stats_of(dir.path(), &input, &["--memory-limit", "1"]);
    assert!(kept == std::fs::read(path(dir.path(), "out.jsonl")).unwrap());
}

#[test]
fn a_document_whose_sketching_passes_the_limit_is_refused_up_front() {
    // An 8 MB document under 128M: minhash takes about 20 bytes a byte of text.
    let dir = tempfile::tempdir().unwrap();
    let input = path(dir.path(), "large.jsonl");
    let large = "word ".repeat(1_600_000);
    let lines = format!("{{\"text\":\"small one\"}}\n{{\"text\":\"{large}\"}}\n");
    std::fs::write(&input, lines).unwrap();
    let out = path(dir.path(), "out.jsonl");
    for limit in [&["--memory-limit", "128M"][..], &["--memory-limit", "1"]] {
        let mut args = vec!["dedup", &input, "-o", &out];
        args.extend_from_slice(limit);
        let run = neardup(&args);
        assert!(!run.status.success(), "{limit:?}");
        let message = stderr(&run);
        assert!(
            message.contains("large.jsonl:2: record of 8000000 bytes"),
            "{message}"
        );
        assert!(message.contains("memory limit of"), "{message}");
    }
    assert_eq!(files_in(dir.path()), ["large.jsonl"]);
    // Skipped and counted with --on-error skip; kept with a limit that holds it.
    let stats = stats_of(
        dir.path(),
        &input,
        &["--memory-limit", "128M", "--on-error", "skip"],
    );
    assert_eq!(stats["skipped"], 1, "{stats}");
    assert_eq!(stats["documents_in"], 1);
    let stats = stats_of(dir.path(), &input, &["--memory-limit", "1G"]);
    assert_eq!(stats["documents_in"], 2);
}

#[test]
fn a_streamed_run_whose_documents_alone_pass_the_limit_is_refused() {
    // 2,000,000 documents need about 144 MB even streamed: more than 128M.
    let dir = tempfile::tempdir().unwrap();
    let input = path(dir.path(), "many.jsonl");
    std::fs::write(&input, tiny(2_000_000)).unwrap();
    let out = path(dir.path(), "out.jsonl");
    let run = neardup(&["dedup", &input, "-o", &out, "--memory-limit", "128M"]);
    assert!(!run.status.success());
    let message = stderr(&run);
    assert!(message.contains("documents need at least"), "{message}");
    assert!(message.contains("give --memory-limit"), "{message}");
    assert_eq!(files_in(dir.path()), ["many.jsonl"]);
}
