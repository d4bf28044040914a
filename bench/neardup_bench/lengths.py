"""Defaults by length (issue 31): shingle sizes and thresholds that depend on the length.

Every corpus of `bench/run quality` plus `en-short` (Reuters headlines, median 44
characters, edited by `neardup synth`) is deduplicated by `neardup dedup` in each
configuration of CONFIGS (`minhash`; the defaults, the fixed defaults before issue 31, and
the rules around the chosen one) and scored with `neardup eval` (pairwise precision,
recall, F1; sohu-dd with --positive-label 5). The table has a row per configuration and a
column per corpus: the chosen default is the rule that meets the short-text targets (zh-titles:
recall 0.95 or more with precision 0.98 or more) without losing F1 anywhere else.

Template notices (the slot check, issue 31): `en-notices` and `zh-notices` are corpora made of
nothing but notices of `neardup synth --templates` (3,000 of 7 families a language), each
notice then a source of `neardup synth --wrappers 40 --rewrap 0.3`: its copies are edited,
re-wrapped or spliced, and every other notice of its family is a refilling of the same
template. The configurations `--slots off` and `--slot-agreement X` show what the check of
the numbers does there and everywhere else.

The cost part times the old and new defaults on the 94 MB Chinese corpus of `bench/run speed`
(REPS runs each, alternating) and reports the median wall time, peak memory and candidate
pairs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics

from . import boilerplate, common, corpora, quality
from .common import log, measure

CORPORA = "zh-titles zh-wrapped zh-news sohu-dd en-short en-wrapped en-news clough zh-notices en-notices"
FIXED = ["--ngram", "3", "--threshold", "0.4", "--slots", "off"]
CONFIGS = {
    "defaults": [],
    "fixed (before issue 31)": FIXED,
    "--threshold 0.3 (fixed 3-grams)": ["--ngram", "3", "--threshold", "0.3"],
    "--threshold \"<20:0.3,<60:0.35,0.4\" (3-grams)": ["--ngram", "3", "--threshold", "<20:0.3,<60:0.35,0.4"],
    "--ngram 2 --threshold 0.4": ["--ngram", "2", "--threshold", "0.4"],
    "--ngram \"<24:2,3\" --threshold 0.4": ["--ngram", "<24:2,3", "--threshold", "0.4"],
    "--ngram \"<20:2,3\"": ["--ngram", "<20:2,3", "--threshold", "<25:0.43,0.4"],
    "--ngram \"<30:2,3\"": ["--ngram", "<30:2,3", "--threshold", "<25:0.43,0.4"],
    "--threshold \"<25:0.45,0.4\"": ["--ngram", "<24:2,3", "--threshold", "<25:0.45,0.4"],
    "--threshold \"<30:0.42,0.4\"": ["--ngram", "<24:2,3", "--threshold", "<30:0.42,0.4"],
    "--slots off": ["--slots", "off"],
    "--slot-agreement 0.34": ["--slot-agreement", "0.34"],
    "--slot-agreement 0.1": ["--slot-agreement", "0.1"],
    "--rare-threshold 0.6": ["--rare-threshold", "0.6"],
    "unbounded candidates (budget and cap 100000)": ["--candidate-budget", "100000", "--bucket-cap", "100000"],
}


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--corpora", default=CORPORA)
    ap.add_argument("--reps", type=int, default=3, help="runs per configuration in the cost part (default 3)")
    ap.add_argument("--zh-mb", type=float, default=94, help="size of the Chinese corpus of the cost part")
    ap.add_argument("--zh-titles-limit", type=int, default=20000)
    ap.add_argument("--en-limit", type=int, default=5000)
    ap.add_argument("--no-cost", action="store_true")
    ap.add_argument("--bin", help="neardup binary (default: cargo build, target/release/neardup)")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--data", help="shared data folder (default $NEARDUP_DATA or ../shared/data)")
    ap.add_argument("--out", default=os.path.join(common.DEFAULT_OUT, "lengths"),
                    help="output folder (corpora are kept and reused; runs are redone)")


def headline_sources(src: str, out: str) -> None:
    """`out`: the Reuters records with their headline as the text (those that have one)."""
    with open(src, encoding="utf-8") as fi, open(out, "w", encoding="utf-8") as fo:
        for line in fi:
            record = json.loads(line)
            title = (record.get("title") or "").strip()
            if title:
                fo.write(json.dumps({"id": record["id"], "text": title}, ensure_ascii=False) + "\n")


def notices(n: str, wrapped_sources: str, c: str) -> str:
    """c/notices.jsonl: the 3,000 template notices `neardup synth --templates` draws for the
    language of `wrapped_sources` (ids `n1`...), without anything else of that run."""
    scratch, path = os.path.join(c, "drawn.jsonl"), os.path.join(c, "notices.jsonl")
    corpora.run_synth(n, wrapped_sources, scratch, scratch + ".truth", 7,
                      ("--id-field", "id", "--templates", "3000", "--duplicate-rate", "0", "--hard-negatives", "0"))
    with open(scratch, encoding="utf-8") as fi, open(path, "w", encoding="utf-8") as fo:
        for line in fi:
            record = json.loads(line)
            if record["id"].startswith("t"):
                fo.write(json.dumps({"id": "n" + record["id"][1:], "text": record["text"]}, ensure_ascii=False) + "\n")
    return path


def corpus(n: str, name: str, out: str, data: str, args) -> tuple[str, str]:
    """The corpus and truth files of `name`, built once."""
    c = os.path.join(out, "corpora", name)
    if not os.path.exists(os.path.join(c, "truth.jsonl")):
        os.makedirs(c, exist_ok=True)
        if name.endswith("-notices"):
            wrapped = name.replace("-notices", "-wrapped")
            corpus(n, wrapped, out, data, args)
            sources = notices(n, os.path.join(out, "corpora", wrapped, "sources.jsonl"), c)
            corpora.synth(n, c, sources, 11, "--id-field", "id", "--wrappers", "40", "--rewrap", "0.3")
        elif name == "en-short":
            titles = os.path.join(c, "headlines.jsonl")
            headline_sources(os.path.join(data, "reuters21578", "bodies.jsonl"), titles)
            corpora.distinct_sources(n, c, titles, args.en_limit)
            corpora.synth(n, c, os.path.join(c, "sources.jsonl"), 107, "--id-field", "id")
        else:
            quality.build_corpus(n, name, c, data, args.zh_titles_limit, args.en_limit)
    return os.path.join(c, "corpus.jsonl"), os.path.join(c, "truth.jsonl")


def quality_part(n: str, args, data: str, out: str) -> dict:
    results: dict = {}
    for name in args.corpora.split():
        path, truth = corpus(n, name, out, data, args)
        results[name] = {}
        for config, extra in CONFIGS.items():
            wd = os.path.join(out, "runs", name)
            os.makedirs(wd, exist_ok=True)
            files = boilerplate.run_dedup(n, path, name, extra, wd)
            results[name][config] = boilerplate.score(n, truth, files["clusters"], name)
        best = results[name]["defaults"]
        log(f"{name}: defaults P={best['precision']:.3f} R={best['recall']:.3f} F1={best['f1']:.4f}")
    return results


def cost_part(n: str, args, data: str, out: str) -> dict:
    path, truth = corpora.zh_synth(n, data, os.path.join(common.DEFAULT_OUT, "corpora"), args.zh_mb, 20240601,
                                   short=True)
    configs = {"defaults": [], "--slots off": ["--slots", "off"], "fixed (before issue 31)": FIXED}
    runs: dict = {k: [] for k in configs}
    wd = os.path.join(out, "runs", "cost")
    os.makedirs(wd, exist_ok=True)
    for rep in range(args.reps):
        for config, extra in configs.items():
            stats, clusters = os.path.join(wd, "stats.json"), os.path.join(wd, "clusters.jsonl")
            cmd = [n, "dedup", path, "-o", os.path.join(wd, "kept.jsonl"), "--stats", stats, "--quiet",
                   "--id-field", "id", "--clusters", clusters, *extra]
            rec = measure(cmd, None)
            with open(stats) as fh:
                s = json.load(fh)
            runs[config].append({"wall": rec["wall_seconds"], "rss": rec["peak_rss_bytes"],
                                 "candidates": s["candidate_pairs"], "seconds": s["seconds"],
                                 "quality": boilerplate.score(n, truth, clusters, "zh") if rep == 0 else None})
            log(f"cost rep{rep + 1} {config}: {rec['wall_seconds']:.2f} s, {rec['peak_rss_bytes'] / 2**20:.0f} MiB")
    return {"corpus": common.rel(path), "size": os.path.getsize(path), "runs": runs}


def report(results: dict, cost: dict | None, args) -> str:
    names = list(results)
    m = common.machine()
    lines = [f"- Date: {m['date']}; machine: {m['cpu']}, {m['nproc']} cores; {m['rustc']}; "
             f"neardup {common.git_describe()}",
             f"- Command: `bench/run lengths{' --no-cost' if args.no_cost else ''} --reps {args.reps}`",
             "", "Pairwise F1 (precision / recall) by configuration and corpus:", "",
             "| configuration | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for config in CONFIGS:
        cells = [f"{results[n][config]['f1']:.4f} ({results[n][config]['precision']:.3f} / "
                 f"{results[n][config]['recall']:.3f})" for n in names]
        lines.append(f"| {config} | " + " | ".join(cells) + " |")
    if cost:
        lines += ["", f"Cost on {cost['corpus']} ({cost['size'] / 1e6:.0f} MB), medians of {args.reps}:", "",
                  "| configuration | wall (s) | peak (MiB) | candidate pairs | sketch (s) | candidates (s) | verify (s) | F1 |",
                  "|---|---|---|---|---|---|---|---|"]
        for config, runs in cost["runs"].items():
            med = lambda f: statistics.median(f(r) for r in runs)  # noqa: E731
            q = runs[0]["quality"]
            lines.append(f"| {config} | {med(lambda r: r['wall']):.2f} | {med(lambda r: r['rss']) / 2**20:.0f} | "
                         f"{runs[0]['candidates']:,} | {med(lambda r: r['seconds']['sketch']):.2f} | "
                         f"{med(lambda r: r['seconds']['candidates']):.2f} | {med(lambda r: r['seconds']['verify']):.2f} | "
                         f"{q['f1']:.4f} |")
    return "\n".join(lines)


def main(args) -> int:
    data, out, n = common.start_run(args)
    results = quality_part(n, args, data, out)
    cost = None if args.no_cost else cost_part(n, args, data, out)
    return common.finish_run(out, results, cost, report(results, cost, args))
