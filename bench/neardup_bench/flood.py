"""`flood`: the template-flood benchmark (issue 6; formerly bench/flood.sh).

Wall time and peak RSS of `neardup dedup` on N one-line documents "document number {i} about
topic {i % 1000} with words", the shape of verification codes and notices, where almost every
pair is a near-duplicate. Generates OUT/flood_N.jsonl once (OUT = bench/out/flood). Runs
`BIN dedup FLOOD -o OUT --stats STATS --quiet [EXTRA]` REPS times per size under a memory cap
(RLIMIT_AS, default 8 GB) and a timeout (default 120 s), so that a quadratic binary fails
instead of eating the machine. The median run by wall time is reported, one Markdown table
row per size on stdout (and in OUT/results.md): documents, input MB, seconds, peak RSS MB,
candidate pairs, budget hits, kept (the last three from --stats; "-" when the binary does not
report them). A failed run reads "killed at the G GB cap after S s" or "timed out after S s".
BIN defaults to target/release/neardup (no build is done).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import tempfile

from . import common, corpora
from .common import ROOT, log, measure


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--bin", help="neardup binary (default target/release/neardup)")
    ap.add_argument("--sizes", default="10000 100000 1000000")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--mem-gb", type=int, default=8)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--label", help="the binary column (default: the binary's path)")
    ap.add_argument("--out", default=os.path.join(common.DEFAULT_OUT, "flood"))
    ap.add_argument("extra", nargs="*", help="after --: extra dedup arguments")


def stat_field(stats: dict | None, name: str) -> str:
    v = (stats or {}).get(name, "-")
    return "-" if v is None else str(v)


def main(args) -> int:
    binary = args.bin or os.path.join(os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target"),
                                      "release", "neardup")
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        raise SystemExit(f"no binary at {binary} (give --bin)")
    label = args.label or binary
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    cap = args.mem_gb << 30

    lines = ["| binary | documents | input MB | seconds | peak RSS MB | candidate pairs | budget hits | kept |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for ln in lines:
        print(ln, flush=True)
    for n in (int(x) for x in args.sizes.split()):
        corpus = corpora.flood(out, n)
        mb = f"{os.path.getsize(corpus) / 1e6:.1f}"
        d = tempfile.mkdtemp(prefix="run.", dir=out)
        results, failure, stats = [], "", None
        for _ in range(args.reps):
            log(f"{label}: {n} documents")
            stats_path = os.path.join(d, "stats.json")
            if os.path.exists(stats_path):
                os.remove(stats_path)
            with open(os.path.join(d, "stderr"), "w") as err:
                rec = measure([binary, "dedup", corpus, "-o", os.path.join(d, "out.jsonl"), "--stats", stats_path,
                               "--quiet", *args.extra], None, stderr=err, timeout=args.timeout, max_as=cap)
            if rec.get("timed_out"):
                failure = f"timed out after {args.timeout:g} s"
                break
            if rec["returncode"] != 0:
                with open(os.path.join(d, "stderr"), errors="replace") as fh:
                    text = fh.read()
                m = re.search(r"memory allocation of [0-9]* bytes failed", text)
                failure = (f"killed at the {args.mem_gb} GB cap after {rec['wall_seconds']:.0f} s "
                           f"({m.group(0) if m else text[:100]})")
                break
            results.append((round(rec["wall_seconds"], 2), rec["peak_rss_bytes"] // 1024))
            with open(stats_path) as fh:
                stats = json.load(fh)
        if failure:
            row = f"| {label} | {n} | {mb} | {failure} | | | | |"
        else:
            # the median run by wall time (the stats are those of the last run: counts are deterministic)
            seconds, rss_kb = sorted(results)[(len(results) + 1) // 2 - 1]
            row = (f"| {label} | {n} | {mb} | {seconds:.2f} | {rss_kb // 1024} | {stat_field(stats, 'candidate_pairs')} | "
                   f"{stat_field(stats, 'budget_hits')} | {stat_field(stats, 'kept')} |")
        print(row, flush=True)
        lines.append(row)
        shutil.rmtree(d)
    with open(os.path.join(out, "results.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    return 0
