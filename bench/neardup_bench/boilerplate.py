"""Boilerplate-aware similarity (issue 9): quality before and after, and the cost of the pass.

Quality: every corpus of `bench/run quality` (the synthetic zh-wrapped and en-wrapped, whose
documents are wrapped in shared account headers and footers and include template notices,
and zh-titles, zh-news, en-news, sohu-dd, clough) is deduplicated by `neardup dedup` in four
configurations:

  off       --max-df off --boilerplate-df off   (neardup before issue 9)
  default   the defaults: boilerplate lines removed, common shingles checked
  drop      --common-shingles drop               (common shingles leave the set)
  idf       --weighting idf --max-df off         (IDF-weighted Jaccard and weighted MinHash)

each at the default threshold (0.4) and at thresholds 0.2-0.8 (step 0.05), scored with
`neardup eval` (pairwise precision, recall, F1; sohu-dd with --positive-label 5). The table
gives the default threshold's row and the best F1 over the sweep.

Cost: on the 100 MB Chinese corpus of `bench/run speed`, `off` and `default` (and `default`
with --corpus-memory 16M and 1M, which force the count-min table: wide enough, and too small
for the corpus) are run REPS times, interleaved,
each under measure.py (wall time, peak RSS); the stage times come from neardup's stats file.
Medians are reported.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess

from . import common, corpora, quality
from .common import log, measure

CORPORA = "zh-wrapped en-wrapped zh-titles zh-news en-news sohu-dd clough"
CONFIGS = {
    "off": ["--max-df", "off", "--boilerplate-df", "off"],
    "default": [],
    "drop": ["--common-shingles", "drop"],
    "idf": ["--weighting", "idf", "--max-df", "off"],
}
THRESHOLDS = [round(0.2 + 0.05 * i, 2) for i in range(13)]


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--reps", type=int, default=5, help="runs per configuration in the cost part (default 5)")
    ap.add_argument("--zh-mb", type=float, default=100, help="size of the Chinese corpus of the cost part")
    ap.add_argument("--corpora", default=CORPORA)
    ap.add_argument("--configs", default=" ".join(CONFIGS), help="quality configurations (default: all four)")
    ap.add_argument("--zh-titles-limit", type=int, default=20000)
    ap.add_argument("--en-limit", type=int, default=5000)
    ap.add_argument("--no-quality", action="store_true")
    ap.add_argument("--no-cost", action="store_true")
    ap.add_argument("--bin", help="neardup binary (default: cargo build, target/release/neardup)")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--data", help="shared data folder (default $NEARDUP_DATA or ../shared/data)")
    ap.add_argument("--out", default=os.path.join(common.DEFAULT_OUT, "boilerplate"),
                    help="output folder (corpora are kept and reused; runs are redone)")


def run_dedup(n: str, corpus: str, name: str, extra: list[str], workdir: str) -> dict:
    clusters = os.path.join(workdir, "clusters.jsonl")
    stats = os.path.join(workdir, "stats.json")
    idarg = [] if name == "sohu-dd" else ["--id-field", "id"]
    cmd = [n, "dedup", corpus, "-o", os.path.join(workdir, "kept.jsonl"), "--clusters", clusters,
           "--stats", stats, "--quiet", *idarg, *extra]
    subprocess.run(cmd, check=True)
    return {"clusters": clusters, "stats": stats}


def score(n: str, truth: str, clusters: str, name: str) -> dict:
    cmd = [n, "eval", "--truth", truth, "--predicted", clusters, "--json"]
    if name == "sohu-dd":
        cmd += ["--positive-label", "5"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    e = json.loads(out)
    return {"precision": e["precision"], "recall": e["recall"], "f1": e["f1"]}


def quality_part(n: str, args, data: str, out: str) -> dict:
    results: dict = {}
    for name in args.corpora.split():
        c = os.path.join(out, "corpora", name)
        if not os.path.exists(os.path.join(c, "truth.jsonl")):
            os.makedirs(c, exist_ok=True)
            quality.build_corpus(n, name, c, data, args.zh_titles_limit, args.en_limit)
        corpus, truth = os.path.join(c, "corpus.jsonl"), os.path.join(c, "truth.jsonl")
        results[name] = {}
        for config in args.configs.split():
            wd = os.path.join(out, "runs", name, config)
            os.makedirs(wd, exist_ok=True)
            rows = []
            for t in THRESHOLDS:
                files = run_dedup(n, corpus, name, CONFIGS[config] + ["--threshold", str(t)], wd)
                rows.append({"threshold": t, **score(n, truth, files["clusters"], name)})
            default = next(r for r in rows if r["threshold"] == 0.4)
            best = max(rows, key=lambda r: (r["f1"], -abs(r["threshold"] - 0.4)))
            results[name][config] = {"default": default, "best": best, "sweep": rows}
            log(f"{name} {config}: default P={default['precision']:.3f} R={default['recall']:.3f} "
                f"F1={default['f1']:.3f}; best F1={best['f1']:.3f} at {best['threshold']}")
    return results


def cost_part(n: str, args, data: str, out: str) -> dict:
    corpus, truth = corpora.zh_synth(n, data, os.path.join(out, "corpora"), args.zh_mb, 20240601)
    configs = {"off": CONFIGS["off"], "default": [], "default, --corpus-memory 16M": ["--corpus-memory", "16M"],
               "default, --corpus-memory 1M": ["--corpus-memory", "1M"]}
    runs: dict = {k: [] for k in configs}
    wd = os.path.join(out, "runs", "cost")
    os.makedirs(wd, exist_ok=True)
    for rep in range(args.reps):
        for config, extra in configs.items():
            stats = os.path.join(wd, "stats.json")
            clusters = os.path.join(wd, "clusters.jsonl")
            cmd = [n, "dedup", corpus, "-o", os.path.join(wd, "kept.jsonl"), "--stats", stats, "--quiet",
                   "--id-field", "id", "--clusters", clusters, *extra]
            rec = measure(cmd, None)
            with open(stats) as fh:
                s = json.load(fh)
            runs[config].append({"wall": rec["wall_seconds"], "rss": rec["peak_rss_bytes"],
                                 "seconds": s["seconds"], "boilerplate": s.get("boilerplate"),
                                 "quality": score(n, truth, clusters, "zh") if rep == 0 else None})
            log(f"cost rep{rep + 1} {config}: {rec['wall_seconds']:.2f} s, {rec['peak_rss_bytes'] / 2**20:.0f} MiB")
    return {"corpus": common.rel(corpus), "size": os.path.getsize(corpus), "runs": runs}


def median(values):
    return statistics.median(values) if values else float("nan")


def report(results: dict, cost: dict | None, args, out: str) -> str:
    m = common.machine()
    md = [f"- Date: {m['date']}; machine: {m['cpu']}, {m['nproc']} cores; {m['rustc']}; "
          f"neardup {common.git_describe()}",
          f"- Command: `bench/run boilerplate{' --no-quality' if args.no_quality else ''}"
          f"{' --no-cost' if args.no_cost else ''} --reps {args.reps}` (report: `{common.rel(out)}/report.md`)", ""]
    if results:
        configs = args.configs.split()
        md += ["Pairwise precision / recall / F1 at the default threshold 0.4, and the best F1 over thresholds "
               "0.2-0.8 (step 0.05) with its threshold:", ""]
        head = "| corpus | " + " | ".join(f"{c}: P / R / F1 at 0.4 | {c}: best F1 (t)" for c in configs) + " |"
        md += [head, "|" + "---|" * (1 + 2 * len(configs))]
        for name, by in results.items():
            cells = []
            for c in configs:
                d, b = by[c]["default"], by[c]["best"]
                cells += [f"{d['precision']:.3f} / {d['recall']:.3f} / {d['f1']:.3f}", f"{b['f1']:.3f} ({b['threshold']})"]
            md.append(f"| {name} | " + " | ".join(cells) + " |")
        md.append("")
    if cost:
        md += [f"Cost on `{cost['corpus']}` ({cost['size'] / 1e6:.1f} MB), medians of {args.reps} interleaved runs:", "",
               "| configuration | wall s | corpus pass s | sketch s | candidates s | total (stats) s | peak RSS MiB | table | P / R / F1 (synth truth) |",
               "|---|---|---|---|---|---|---|---|---|"]
        for config, runs in cost["runs"].items():
            sec = lambda k: median([r["seconds"].get(k, 0.0) for r in runs])  # noqa: E731
            b = runs[-1]["boilerplate"] or {}
            table = f"{b.get('table')} {b.get('table_bytes', 0) / 2**20:.1f} MiB" if b.get("table") else "none"
            if b.get("table_saturated"):
                table += " (saturated: no line removed)"
            q = runs[0]["quality"]
            md.append(f"| {config} | {median([r['wall'] for r in runs]):.2f} | {sec('corpus'):.2f} | {sec('sketch'):.2f} | "
                      f"{sec('candidates'):.2f} | {sec('total'):.2f} | {median([r['rss'] for r in runs]) / 2**20:.0f} | {table} | "
                      f"{q['precision']:.3f} / {q['recall']:.3f} / {q['f1']:.3f} |")
        md.append("")
    return "\n".join(md)


def main(args) -> int:
    data, out, n = common.start_run(args)
    results = {} if args.no_quality else quality_part(n, args, data, out)
    cost = None if args.no_cost else cost_part(n, args, data, out)
    return common.finish_run(out, results, cost, report(results, cost, args, out))
