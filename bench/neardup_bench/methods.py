"""`methods`: every neardup method at its defaults on the same corpora: precision, recall, F1,
wall time and peak memory, for the method guide (docs/methods.md).

The corpora are those of `quality` (built the same way, by the same code): `neardup synth`
edits of Chinese headlines (short), of Sohu articles and of Reuters bodies (long), the
labelled Sohu pairs and the Clough-Stevenson answers. Every method runs with no parameter but
`--method` (and `--sentence-signature longest` for `sentences-longest`); each run is timed
(`--reps`, medians) and must give the same clusters every time; `neardup eval` scores the
clusters (pairwise precision, recall, F1). Writes OUT/results.md and OUT/results.json, and
replaces the section "## Measured: every method on the same data" of docs/methods.md unless
--no-docs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import time

from . import common, corpora
from .common import ROOT, find_data, git_describe, log, machine, measure, neardup_binary
from .quality import build_corpus

CORPORA = "zh-titles zh-news en-news sohu-dd clough zh-50mb"
# Entries of --methods that are not a method name at its defaults; by default each runs after its
# method (the method the binary lists, see `default_methods`).
VARIANTS = {
    "sentences-longest": ["--method", "sentences", "--sentence-signature", "longest"],
    "imatch-wide": ["--method", "imatch", "--extra-lexicons", "32", "--lexicon-drop", "0.7",
                    "--lexicon-low", "0.4", "--lexicon-high", "0.95"],
    "topn-3": ["--method", "topn", "--top-n", "3"],
}
SECTION = "## Measured: every method on the same data"
LABELS = {
    "zh-titles": "zh-titles: synth edits of 20-character Chinese headlines",
    "zh-news": "zh-news: synth edits of 1,000-character Chinese articles",
    "en-news": "en-news: synth edits of 800-character Reuters stories",
    "sohu-dd": "sohu-dd: labelled Sohu pairs (same event = duplicate)",
    "clough": "clough: Clough-Stevenson answers (cut and light revisions = duplicates)",
    "zh-50mb": "zh-50mb: the Chinese corpus of `bench/run speed` at 50 MB (synth edits of 600-2,000-character "
               "documents)",
}


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--reps", type=int, default=3, help="runs per method and corpus (default 3)")
    ap.add_argument("--methods", help="methods and variants to run, space-separated (default: every method the "
                    "binary lists, each followed by its variants: " + " ".join(VARIANTS) + ")")
    ap.add_argument("--corpora", default=CORPORA)
    ap.add_argument("--zh-titles-limit", type=int, default=20000, help="THUCNews headlines used as sources")
    ap.add_argument("--en-limit", type=int, default=5000, help="Reuters bodies used as sources")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per run (default 300)")
    ap.add_argument("--bin", help="neardup binary (default: cargo build, target/release/neardup; or $NEARDUP_BIN)")
    ap.add_argument("--no-build", action="store_true", help="use target/release/neardup as it is")
    ap.add_argument("--data", help="shared data folder (default $NEARDUP_DATA or ../shared/data)")
    ap.add_argument("--out", default=os.path.join(common.DEFAULT_OUT, "methods"),
                    help="output folder, emptied first (default bench/out/methods)")
    ap.add_argument("--no-docs", action="store_true", help="do not write the section into docs/methods.md")


def default_methods(listed: list[str]) -> str:
    """Every method of `listed` (what the binary offers), each followed by its VARIANTS."""
    out = []
    for method in listed:
        out.append(method)
        out.extend(name for name, args in VARIANTS.items() if args[1] == method)
    return " ".join(out)


def method_args(method: str) -> list[str]:
    return VARIANTS.get(method, ["--method", method])


def build(n: str, name: str, c: str, data: str, args) -> None:
    """The corpora of `quality`, and zh-50mb: the `speed` corpus at 50 MB."""
    if name == "zh-50mb":
        corpus, truth = corpora.zh_synth(n, data, os.path.join(common.DEFAULT_OUT, "corpora"), 50, 7)
        shutil.copy(corpus, os.path.join(c, "corpus.jsonl"))
        shutil.copy(truth, os.path.join(c, "truth.jsonl"))
    else:
        build_corpus(n, name, c, data, args.zh_titles_limit, args.en_limit)


def run_one(n: str, corpus_dir: str, name: str, method: str, d: str, reps: int, timeout: float) -> dict:
    """`reps` timed runs of one method on one corpus, then `neardup eval`: a result row."""
    corpus = os.path.join(corpus_dir, "corpus.jsonl")
    idarg = [] if name == "sohu-dd" else ["--id-field", "id"]
    clusters = os.path.join(d, "clusters.jsonl")
    cmd = [n, "dedup", corpus, "-o", os.path.join(d, "kept.jsonl"), "--clusters", clusters,
           "--stats", os.path.join(d, "stats.json"), *idarg, "--quiet", "--threads", "2", *method_args(method)]
    row: dict = {"corpus": name, "method": method, "command": " ".join(["neardup", *cmd[1:]])}
    walls, rss, digests = [], [], set()
    for rep in range(1, reps + 1):
        rec = measure(cmd, os.path.join(d, f"measure_rep{rep}.json"), timeout=timeout,
                      stderr=open(os.path.join(d, f"stderr_rep{rep}.txt"), "w"))
        if rec.get("timed_out"):
            row["status"] = f"timeout ({timeout:.0f} s)"
            return row
        if rec["returncode"] != 0:
            with open(os.path.join(d, f"stderr_rep{rep}.txt")) as fh:
                err = fh.read().strip().splitlines()
            row["status"] = "failed: " + (err[-1] if err else f"exit {rec['returncode']}")
            return row
        walls.append(rec["wall_seconds"])
        rss.append(rec["peak_rss_bytes"])
        with open(clusters, "rb") as fh:
            digests.add(hashlib.sha256(fh.read()).hexdigest())
        os.remove(os.path.join(d, "kept.jsonl"))
    ev_cmd = [n, "eval", "--truth", os.path.join(corpus_dir, "truth.jsonl"), "--predicted", clusters, "--json"]
    if name == "sohu-dd":
        ev_cmd += ["--positive-label", "5"]
    ev = json.loads(subprocess.run(ev_cmd, capture_output=True, text=True, check=True).stdout)
    with open(os.path.join(d, "stats.json")) as fh:
        stats = json.load(fh)
    row.update(status="ok", precision=ev.get("precision"), recall=ev.get("recall"), f1=ev.get("f1"),
               seconds=statistics.median(walls), peak_mb=statistics.median(rss) / 2**20,
               identical=len(digests) == 1, documents=stats.get("documents_in"), kept=stats.get("kept"))
    return row


def fmt(x, digits=3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def report(rows: list[dict], meta: dict) -> str:
    lines = [SECTION, "",
             f"`{meta['command']}` on {meta['date']} ({meta['cpu']}, {meta['nproc']} cores), neardup "
             f"{meta['git']}: every method at its defaults (`--method` only), `--threads 2`; time and peak "
             f"memory are medians of {meta['reps']} runs, and every run gave the same clusters"
             + ("" if all(r.get("identical", True) for r in rows) else " EXCEPT those marked *") +
             ". P, R and F1 are pairwise, from `neardup eval`. The best F1 of each corpus is in bold.", ""]
    for corpus in meta["corpora"].split():
        rs = [r for r in rows if r["corpus"] == corpus]
        if not rs:
            continue
        ok = [r for r in rs if r.get("f1") is not None]
        best = max((r["f1"] for r in ok), default=None)
        docs = next((r["documents"] for r in ok), None)
        lines += [f"**{LABELS.get(corpus, corpus)}**" + (f" ({docs:,} documents)" if docs else ""), "",
                  "| method | P | R | F1 | time (s) | peak (MB) |", "|---|---|---|---|---|---|"]
        for r in rs:
            if r["status"] != "ok":
                lines.append(f"| {r['method']} | {r['status']} | | | | |")
                continue
            f1 = fmt(r["f1"])
            if best is not None and abs(r["f1"] - best) < 1e-12:
                f1 = f"**{f1}**"
            mark = "" if r["identical"] else " *"
            lines.append(f"| {r['method']}{mark} | {fmt(r['precision'])} | {fmt(r['recall'])} | {f1} | "
                         f"{r['seconds']:.2f} | {r['peak_mb']:.0f} |")
        lines.append("")
    used = [m for m in meta["methods"].split() if m in VARIANTS]
    if used:
        lines += ["Variants: " + "; ".join(f"`{m}` is `{' '.join(VARIANTS[m])}`" for m in used) + ".", ""]
    return "\n".join(lines)


def replace_section(path: str, text: str) -> None:
    with open(path, encoding="utf-8") as fh:
        doc = fh.read()
    start = doc.find(SECTION)
    if start < 0:
        doc = doc.rstrip("\n") + "\n\n" + text
    else:
        end = doc.find("\n## ", start + len(SECTION))
        doc = doc[:start] + text.rstrip("\n") + "\n" + ("" if end < 0 else doc[end:])
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(doc if doc.endswith("\n") else doc + "\n")


def main(args, argv: list[str]) -> int:
    t_all = time.time()
    data = find_data(args.data)
    out = os.path.abspath(args.out)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(os.path.join(out, "corpora"))
    common.LOG_FILE = os.path.join(out, "run.log")
    n = common.private_copy(neardup_binary(args.bin, build=not args.no_build), os.path.join(out, "env"))
    if not args.methods:
        args.methods = default_methods(common.listed_methods(n))
    names = args.corpora.split()
    for name in names:
        c = os.path.join(out, "corpora", name)
        os.makedirs(c, exist_ok=True)
        build(n, name, c, data, args)
    rows = []
    for name in names:
        for method in args.methods.split():
            d = os.path.join(out, "runs", name, method)
            os.makedirs(d, exist_ok=True)
            log(f"{name} {method}")
            row = run_one(n, os.path.join(out, "corpora", name), name, method, d, args.reps, args.timeout)
            log(f"  {row['status']} F1 {fmt(row.get('f1'))} {row.get('seconds', 0):.2f} s")
            rows.append(row)
    mach = machine()
    meta = {"date": mach["date"], "cpu": mach["cpu"], "nproc": mach["nproc"], "git": git_describe(),
            "command": "bench/run methods" + (" " + " ".join(argv) if argv else ""), "reps": args.reps,
            "corpora": args.corpora, "methods": args.methods, "seconds": round(time.time() - t_all)}
    text = report(rows, meta)
    with open(os.path.join(out, "results.json"), "w") as fh:
        json.dump({"meta": meta, "rows": rows}, fh, indent=2)
    with open(os.path.join(out, "results.md"), "w") as fh:
        fh.write(text + "\n")
    if not args.no_docs:
        replace_section(os.path.join(ROOT, "docs", "methods.md"), text)
    log(f"done in {time.time() - t_all:.0f} s; results in {common.rel(os.path.join(out, 'results.md'))}")
    return 0
