"""`scale`: time and peak memory of `neardup dedup` as the corpus grows (issue 14), with and
without extra dedup options (such as `--memory-limit 1G`), beside datasketch and rensa at the
sizes they can hold.

Corpora: Chinese synth corpora (corpora.zh_synth: `neardup synth` edits of documents joined
from the Sohu and THUCNews sentences; `--docs short`, the default, 40-130 characters as the
issue's 94 MB / 333k-document set, joined from 6-12-character fragments of those sentences so
that unrelated documents stay unrelated as the corpus grows (whole sentences of a fixed pool
made candidate pairs grow quadratically); `--docs long` 600-2,000 as `speed`) at --base-mb x each of
--multiples MB, built once under bench/out/corpora. Every run is measured by
measure.py (wall time, peak RSS of the whole process tree) --reps times; medians are quoted,
and the kept output's xxh3-free digest (sha256) must be the same in every configuration of
one size (the spilling path must not change the result). Writes OUT/results.md and
OUT/results.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import shutil
import statistics
import time

from . import common, corpora
from .common import bench_python, find_data, git_describe, log, machine, measure, neardup_binary


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--base-mb", type=float, default=94, help="size of the 1x corpus in MB (default 94)")
    ap.add_argument("--docs", choices=["short", "long"], default="short",
                    help="short: 40-130-character documents (about 280 bytes, 333k in 94 MB, as issue 14 "
                         "measured); long: the 600-2,000-character documents of `speed`")
    ap.add_argument("--multiples", default="1 4 16 64", help="corpus sizes as multiples of --base-mb")
    ap.add_argument("--configs", default="default;--memory-limit 1G",
                    help="dedup option sets separated by ';' (`default`: none)")
    ap.add_argument("--peers", default="datasketch rensa")
    ap.add_argument("--peer-max-mb", type=float, default=400, help="largest corpus given to the peers")
    ap.add_argument("--peer-no-verify", action="store_true",
                    help="peers build their index and list candidates only (no exact verification)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--bin", help="neardup binary (default: cargo build, target/release/neardup)")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--data", help="shared data folder (default $NEARDUP_DATA or ../shared/data)")
    ap.add_argument("--out", default=os.path.join(common.DEFAULT_OUT, "scale"))


def digest(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def main(args, argv: list[str]) -> int:
    t_all = time.time()
    data = find_data(args.data)
    out = os.path.abspath(args.out)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    common.LOG_FILE = os.path.join(out, "run.log")
    n = common.private_copy(neardup_binary(args.bin, build=not args.no_build), os.path.join(out, "env"))
    configs = [c.strip() for c in args.configs.split(";") if c.strip()]
    rows = []
    for multiple in [float(m) for m in args.multiples.split()]:
        mb = args.base_mb * multiple
        corpus, _truth = corpora.zh_synth(n, data, os.path.join(common.DEFAULT_OUT, "corpora"), mb, args.seed,
                                          short=args.docs == "short")
        size = os.path.getsize(corpus)
        outputs = {}
        for config in configs:
            extra = [] if config == "default" else shlex.split(config)
            d = os.path.join(out, "runs", f"{multiple:g}x", config.replace(" ", "_").replace("-", ""))
            os.makedirs(d, exist_ok=True)
            walls, rss = [], []
            status = "ok"
            for rep in range(1, args.reps + 1):
                kept = os.path.join(d, "kept.jsonl")
                cmd = [n, "dedup", corpus, "-o", kept, "--stats", os.path.join(d, f"stats_rep{rep}.json"),
                       "--id-field", "id", "--quiet", *extra]
                log(f"{multiple:g}x {config} rep{rep}")
                rec = measure(cmd, os.path.join(d, f"measure_rep{rep}.json"), timeout=args.timeout)
                if rec.get("timed_out") or rec["returncode"] != 0:
                    status = "timeout" if rec.get("timed_out") else f"exit {rec['returncode']}"
                    break
                walls.append(rec["wall_seconds"])
                rss.append(rec["peak_rss_bytes"])
                outputs.setdefault(digest(kept), []).append(config)
                os.remove(kept)
            rows.append({"multiple": multiple, "mb": size / 1e6, "tool": "neardup", "config": config,
                         "status": status, "seconds": statistics.median(walls) if walls else None,
                         "peak_mb": statistics.median(rss) / 2**20 if rss else None})
        same = len(outputs) <= 1
        for row in rows:
            if row["multiple"] == multiple:
                row["same_output"] = same
        if size / 1e6 <= args.peer_max_mb:
            for tool in args.peers.split():
                d = os.path.join(out, "runs", f"{multiple:g}x", tool)
                os.makedirs(d, exist_ok=True)
                walls, rss = [], []
                status = "ok"
                for rep in range(1, args.reps + 1):
                    cmd = bench_python() + ["neardup_bench.peers", corpus, "--tool", tool, "--threshold", "0.7",
                                            "--out-dir", d, "--result", os.path.join(d, f"result_rep{rep}.json")]
                    if args.peer_no_verify:
                        cmd.append("--no-verify")
                    log(f"{multiple:g}x {tool} rep{rep}")
                    rec = measure(cmd, os.path.join(d, f"measure_rep{rep}.json"), timeout=args.timeout)
                    if rec.get("timed_out") or rec["returncode"] != 0:
                        status = "timeout" if rec.get("timed_out") else f"exit {rec['returncode']}"
                        break
                    walls.append(rec["wall_seconds"])
                    rss.append(rec["peak_rss_bytes"])
                config = "threshold 0.7" + (", index only" if args.peer_no_verify else "")
                rows.append({"multiple": multiple, "mb": size / 1e6, "tool": tool, "config": config,
                             "status": status, "seconds": statistics.median(walls) if walls else None,
                             "peak_mb": statistics.median(rss) / 2**20 if rss else None})
    mach = machine()
    meta = {"date": mach["date"], "cpu": mach["cpu"], "nproc": mach["nproc"], "git": git_describe(),
            "command": "bench/run scale" + (" " + " ".join(argv) if argv else ""), "reps": args.reps,
            "seconds": round(time.time() - t_all)}
    lines = [f"`{meta['command']}` on {meta['date']} ({meta['cpu']}, {meta['nproc']} cores), neardup {meta['git']}; "
             f"medians of {meta['reps']} runs.", "",
             "| size | MB | tool | options | time (s) | peak (MB) | same kept output |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        t = "-" if r["seconds"] is None else f"{r['seconds']:.1f}"
        m = "-" if r["peak_mb"] is None else f"{r['peak_mb']:.0f}"
        same = "" if r["tool"] != "neardup" else ("yes" if r.get("same_output") else "NO")
        status = "" if r["status"] == "ok" else f" ({r['status']})"
        lines.append(f"| {r['multiple']:g}x | {r['mb']:.0f} | {r['tool']} | {r['config']}{status} | {t} | {m} | {same} |")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "results.md"), "w") as fh:
        fh.write(text)
    with open(os.path.join(out, "results.json"), "w") as fh:
        json.dump({"meta": meta, "rows": rows}, fh, indent=2)
    log(f"done in {time.time() - t_all:.0f} s; results in {common.rel(os.path.join(out, 'results.md'))}")
    print(text)
    return 0
