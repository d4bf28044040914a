"""`speed`: neardup's MinHash-LSH vs datasketch and rensa (formerly bench/run.sh).

Runs every tool REPS times on each corpus (wall time and peak RSS of each run), computes the
exact truth, and writes OUT/results.md and OUT/results.json (OUT = bench/out by default).

Corpora: `reuters` (shared/data/reuters21578/bodies.jsonl, as is) and `zh` (about --zh-mb MB
of Chinese made by `neardup synth` from long documents joined from the Sohu and THUCNews
sentences; see corpora.zh_synth). --sample-mb caps every corpus to its first MB megabytes of
lines, for all tools equally. Reuters is scored against the exact all-pairs truth; the
Chinese corpus against the pooled within-family truth, and, unless --no-zh-exact, also
against the exact all-pairs truth (a prefix-filter join, about 7 min and 5.5 GB for 100 MB
in Python).

Settings of every tool: Jaccard 0.7, 128 permutations, 5-token shingles (neardup
`--tokenizer token --chinese-variant keep`), neardup with --threads 2.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import json
import os
import shutil
import time

from . import corpora, speed_report, truth
from .common import (DEFAULT_OUT, bench_python, find_data, git_describe, log, machine, measure,
                     neardup_binary, rel)

THRESHOLD = 0.7
NGRAM = 5
PERMS = 128


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--reps", type=int, default=3, help="runs per tool and corpus (default 3)")
    ap.add_argument("--zh-mb", type=float, default=100, help="size of the Chinese corpus in MB (default 100)")
    ap.add_argument("--zh-seed", type=int, default=20240601, help="seed of its sources and of synth")
    ap.add_argument("--sample-mb", type=float, help="cap every corpus to its first MB megabytes of lines")
    ap.add_argument("--tools", default="neardup datasketch rensa")
    ap.add_argument("--corpora", default="reuters zh")
    ap.add_argument("--no-zh-exact", action="store_true", help="skip the exact all-pairs truth of zh")
    ap.add_argument("--bin", help="neardup binary to use (default: cargo build, target/release/neardup; "
                                  "or $NEARDUP_BIN)")
    ap.add_argument("--no-build", action="store_true", help="use target/release/neardup as it is")
    ap.add_argument("--data", help="shared data folder (default $NEARDUP_DATA or ../shared/data)")
    ap.add_argument("--out", default=DEFAULT_OUT, help="output folder (default bench/out)")


def command_line(args) -> str:
    cmd = "bench/run speed"
    if args.reps != 3:
        cmd += f" --reps {args.reps}"
    if args.sample_mb:
        cmd += f" --sample-mb {args.sample_mb:g}"
    if args.zh_mb != 100:
        cmd += f" --zh-mb {args.zh_mb:g}"
    if args.corpora != "reuters zh":
        cmd += f" --corpora \"{args.corpora}\""
    if args.tools != "neardup datasketch rensa":
        cmd += f" --tools \"{args.tools}\""
    if args.no_zh_exact:
        cmd += " --no-zh-exact"
    return cmd


def corpus_paths(args, names: list[str], neardup: str | None, data: str, out: str) -> tuple[dict, dict]:
    """The corpus file of each name (made by synth for zh, then capped by --sample-mb), and
    the synth truth file of each synth corpus (its families)."""
    paths, families = {}, {}
    if "reuters" in names:
        paths["reuters"] = os.path.join(data, "reuters21578", "bodies.jsonl")
    if "zh" in names:
        paths["zh"], families["zh"] = corpora.zh_synth(neardup, data, out, args.zh_mb, args.zh_seed)
    if args.sample_mb:
        for n in names:
            paths[n] = corpora.sample(paths[n], os.path.join(out, f"sample_{n}_{args.sample_mb:g}mb.jsonl"),
                                      args.sample_mb)
    return paths, families


def run_tool(tool: str, name: str, path: str, d: str, neardup: str | None, py: list[str]) -> None:
    """One measured run of `tool` on corpus `name`, its outputs in `d`; a failed run ends the
    benchmark."""
    m = os.path.join(d, "measure.json")
    if tool == "neardup":
        rec = measure([neardup, "dedup", path, "-o", os.path.join(d, "out.jsonl"),
                       "--clusters", os.path.join(d, "clusters.jsonl"),
                       "--pairs", os.path.join(d, "pairs.jsonl"), "--stats", os.path.join(d, "stats.json"),
                       "--method", "minhash", "--threshold", str(THRESHOLD), "--ngram", str(NGRAM),
                       "--permutations", str(PERMS), "--tokenizer", "token", "--chinese-variant", "keep",
                       "--id-field", "id", "--quiet", "--threads", "2"], m)
        if rec["returncode"] != 0:
            raise SystemExit(f"neardup failed on {name} (rc {rec['returncode']})")
        speed_report.neardup_pairs(path, os.path.join(d, "pairs.jsonl"), os.path.join(d, "pairs.tsv"))
        os.remove(os.path.join(d, "out.jsonl"))  # the deduplicated copy is not needed
    elif tool in ("datasketch", "rensa"):
        rec = measure(py + ["neardup_bench.peers", path, "--tool", tool, "--threshold", str(THRESHOLD),
                            "--permutations", str(PERMS), "--ngram", str(NGRAM), "--id-field", "id",
                            "--text-field", "text", "--out-dir", d,
                            "--result", os.path.join(d, "result.json")], m)
        if rec["returncode"] != 0:
            raise SystemExit(f"{tool} failed on {name} (rc {rec['returncode']})")
    else:
        raise SystemExit(f"unknown tool {tool} (neardup, datasketch, rensa)")


def run_all(args, names: list[str], tools: list[str], paths: dict, neardup: str | None, runs: str) -> None:
    """Every tool on every corpus, --reps times, into RUNS/<corpus>/<tool>/rep<k>; the tools
    take turns within a rep rather than running their reps back to back."""
    py = bench_python()
    for name in names:
        path = paths[name]
        shutil.rmtree(os.path.join(runs, name), ignore_errors=True)
        for rep in range(1, args.reps + 1):
            for tool in tools:
                d = os.path.join(runs, name, tool, f"rep{rep}")
                os.makedirs(d, exist_ok=True)
                log(f"{name} rep{rep} {tool}")
                run_tool(tool, name, path, d, neardup, py)


def corpus_truth(args, name: str, path: str, families: dict, runs: str, out: str) -> dict:
    """The truth of one corpus (exact for reuters, pooled by family for zh, plus the exact
    join of zh for comparison unless --no-zh-exact) from every pair file the tools wrote;
    returns the corpus's manifest entry."""
    pool = sorted(glob.glob(os.path.join(runs, name, "*", "rep*", "*.candidates.tsv"))
                  + glob.glob(os.path.join(runs, name, "*", "rep*", "*.verified.tsv"))
                  + glob.glob(os.path.join(runs, name, "*", "rep*", "pairs.tsv")))
    mode = "exact" if name == "reuters" else "family"
    entry = {"name": name, "path": rel(path), "truth": rel(os.path.join(out, f"truth_{name}.tsv")),
             "truth_meta": rel(os.path.join(out, f"truth_{name}.json"))}
    log(f"truth {name} ({mode})")
    targs = [rel(path), "--mode", mode, "--threshold", str(THRESHOLD), "--ngram", str(NGRAM), "--pool", *pool,
             "--out", entry["truth"], "--meta", entry["truth_meta"]]
    if mode == "family":
        targs += ["--families", families[name]]
        entry["families"] = rel(families[name])
    run_truth(targs)
    for f in (f"truth_{name}_exact.tsv", f"truth_{name}_exact.json"):
        with contextlib.suppress(FileNotFoundError):
            os.remove(os.path.join(out, f))
    if mode == "family" and not args.no_zh_exact:
        log(f"truth {name} (exact all-pairs join, for comparison)")
        entry["truth_exact"] = rel(os.path.join(out, f"truth_{name}_exact.tsv"))
        entry["truth_exact_meta"] = rel(os.path.join(out, f"truth_{name}_exact.json"))
        run_truth([rel(path), "--mode", "exact", "--threshold", str(THRESHOLD), "--ngram", str(NGRAM),
                   "--pool", *pool, "--out", entry["truth_exact"], "--meta", entry["truth_exact_meta"]])
    return entry


def header(args, names: list[str], families: dict) -> str:
    """The report's header: machine, date, commit, versions, command and settings."""
    mach = machine()
    lines = [
        f"- Machine: {mach['cpu']}, nproc {mach['nproc']}",
        "- Memory (free -g):",
        "```",
        mach["free_g"],
        "```",
        f"- Date: {mach['date']}",
        f"- Git commit: {git_describe()}",
        f"- Versions: {speed_report.versions()}, {mach['rustc']}",
        f"- Command: `{command_line(args)}`, {args.reps} runs per tool and corpus, threshold {THRESHOLD}, "
        f"{PERMS} permutations, {NGRAM}-token shingles",
    ]
    if args.sample_mb:
        lines.append(f"- **Corpora capped to their first {args.sample_mb:g} MB for every tool (--sample-mb).**")
    if "zh" in names:
        cmd_file = families["zh"].replace(".truth.jsonl", ".jsonl") + ".synth.cmd"
        with contextlib.suppress(OSError), open(cmd_file) as fh:
            lines.append(f"- zh corpus: `{fh.read().strip()}` on sources joined from the Sohu and THUCNews "
                         f"sentences (seed {args.zh_seed})")
    return "\n".join(lines) + "\n"


def main(args) -> int:
    t_all = time.time()
    data = find_data(args.data)
    tools = args.tools.split()
    names = args.corpora.split()
    for n in names:
        if n not in ("reuters", "zh"):
            raise SystemExit(f"unknown corpus {n} (reuters, zh)")
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    need_bin = "neardup" in tools or "zh" in names
    neardup = neardup_binary(args.bin, build=not args.no_build) if need_bin else None

    paths, families = corpus_paths(args, names, neardup, data, out)
    runs = os.path.join(out, "runs")
    run_all(args, names, tools, paths, neardup, runs)

    manifest = {"runs_dir": rel(runs), "reps": args.reps, "tools": tools, "corpora": []}
    for name in names:
        manifest["corpora"].append(corpus_truth(args, name, paths[name], families, runs, out))
    manifest["header"] = header(args, names, families)
    with open(os.path.join(out, "machine.md"), "w") as fh:
        fh.write(manifest["header"])
    man_path = os.path.join(out, "manifest.json")
    with open(man_path, "w") as fh:
        json.dump(manifest, fh, indent=2)
    text = speed_report.report(man_path, os.path.join(out, "results.md"), os.path.join(out, "results.json"))
    print(text)
    log(f"done in {time.time() - t_all:.0f} s; results in {rel(os.path.join(out, 'results.md'))}")
    return 0


def run_truth(argv: list[str]) -> None:
    with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
        truth.main(argv)
