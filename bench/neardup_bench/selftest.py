"""`selftest`: the tokeniser cross-check (bench/tests) and the driver end to end on a few
hundred lines of ../shared/data, in a temporary folder (BENCHMARKS.md is not touched).

Runs `speed` (reuters and zh capped to --sample-mb, one run each), `quality` (small limits,
one run each, every tool but text-dedup unless --with-text-dedup) and `flood` (1,000
documents) as `python -m neardup_bench ...` child processes, then checks what they wrote:
the tables exist, neardup's verified pairs are exact (P = 1) and find the truth on Reuters,
the exact truth misses no reported pair, every quality row was scored, and the flood row has
its counts. Exits non-zero on the first failed check. Needs a built binary: --bin,
$NEARDUP_BIN or target/release/neardup (no build).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

from .common import BENCH, ROOT, child_env, find_data, log, neardup_binary


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--bin", help="neardup binary (default $NEARDUP_BIN or target/release/neardup)")
    ap.add_argument("--data", help="shared data folder (default $NEARDUP_DATA, or ../shared/data beside the repository)")
    ap.add_argument("--sample-mb", type=float, default=0.3, help="size of each speed corpus (default 0.3)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder and print its path")
    ap.add_argument("--with-text-dedup", action="store_true", help="also run text-dedup in quality (slow)")


class Failed(Exception):
    pass


PASSED: list[str] = []


def check(cond: bool, what: str) -> None:
    if not cond:
        raise Failed(what)
    PASSED.append(what)
    print(f"  ok: {what}", flush=True)


def main(args) -> int:
    t0 = time.time()
    binary = neardup_binary(args.bin, build=False)
    data = find_data(args.data)
    env = child_env({"NEARDUP_BIN": binary, "NEARDUP_DATA": data})

    print("== tokeniser cross-check (bench/tests)", flush=True)
    os.environ.update({"NEARDUP_BIN": binary, "NEARDUP_DATA": data})
    suite = unittest.defaultTestLoader.discover(os.path.join(BENCH, "tests"), top_level_dir=os.path.join(BENCH, "tests"))
    result = unittest.TextTestRunner(verbosity=1).run(suite)
    failures = len(result.failures) + len(result.errors)
    if not result.wasSuccessful() or result.testsRun == 0 or result.skipped:
        print(f"selftest: {result.testsRun - failures} passed, {max(failures, 1)} failed", flush=True)
        return 1

    tmp = tempfile.mkdtemp(prefix="neardup-bench-selftest-")
    drv = [sys.executable, "-m", "neardup_bench"]

    def run(*cmd):
        """One driver command; its output goes to TMP/<command>.log, printed when it fails."""
        log("bench/run " + " ".join(cmd))
        path = os.path.join(tmp, cmd[0] + ".log")
        with open(path, "w") as fh:
            rc = subprocess.run(drv + list(cmd), env=env, cwd=ROOT, stdout=fh, stderr=subprocess.STDOUT).returncode
        if rc != 0:
            with open(path) as fh:
                sys.stdout.write("".join(fh.readlines()[-30:]))
            raise Failed(f"bench/run {cmd[0]} exited with {rc}")

    try:
        print("== speed", flush=True)
        out = os.path.join(tmp, "speed")
        run("speed", "--reps", "1", "--sample-mb", f"{args.sample_mb:g}", "--zh-mb", "0.6", "--bin", binary,
            "--data", data, "--out", out)
        res = json.load(open(os.path.join(out, "results.json")))
        check(os.path.getsize(os.path.join(out, "results.md")) > 0, "speed wrote results.md")
        rows = {(r["corpus"], r["tool"], r["variant"].split(" (")[0]): r for r in res["rows"]}
        for corpus in ("reuters", "zh"):
            nd = rows.get((corpus, "neardup", "verified pairs"))
            check(nd is not None and nd["pairs"] > 0, f"speed: neardup reported pairs on {corpus}")
            check(nd["p"] == 1.0, f"speed: neardup's pairs on {corpus} are all true (P = {nd['p']:.4f})")
            check(nd["r"] >= 0.9, f"speed: neardup's recall on {corpus} is at least 0.9 (R = {nd['r']:.4f})")
            for tool in ("datasketch", "rensa"):
                v = rows.get((corpus, tool, "candidates + exact Jaccard verify"))
                check(v is not None and v["p"] == 1.0 and v["secs"] > 0,
                      f"speed: {tool} ran on {corpus}, verified P = 1")
        meta = json.load(open(os.path.join(out, "truth_reuters.json")))
        check(meta["pool_pairs_above_threshold_missed_by_join"] == 0 and meta["true_pairs"] > 0,
              f"speed: exact truth on reuters ({meta['true_pairs']} pairs) misses no pair a tool reported")
        zh = next(c for c in res["manifest"]["corpora"] if c["name"] == "zh")
        check(zh.get("pooled_extra") == 0, "speed: the pooled zh truth has no pair the exact join lacks")
        check("Recall by edit type" in open(os.path.join(out, "results.md")).read(),
              "speed: results.md has the recall by edit type")

        print("== quality", flush=True)
        out = os.path.join(tmp, "quality")
        tools = ("neardup-minhash neardup-connected neardup-containment neardup-exact neardup-peer-settings "
                 "neardup-simhash neardup-simhash-k3 datasketch rensa gaoya simhash datasketch-auto rensa-auto")
        if args.with_text_dedup:
            tools += " text-dedup text-dedup-verified"
        bench_md = open(os.path.join(ROOT, "BENCHMARKS.md"), "rb").read()
        run("quality", "--reps", "1", "--zh-titles-limit", "300", "--en-limit", "200",
            "--corpora", "zh-titles en-news sohu-dd clough", "--tools", tools, "--bin", binary, "--data", data,
            "--out", out, "--no-benchmarks")
        check(open(os.path.join(ROOT, "BENCHMARKS.md"), "rb").read() == bench_md, "quality: BENCHMARKS.md untouched")
        res = json.load(open(os.path.join(out, "results.json")))
        for corpus, recs in res["runs"].items():
            for r in recs:
                check(r["status"] == "ok" and r.get("f1") is not None and r.get("wall_s"),
                      f"quality: {corpus} {r['tool']} scored (F1 {r.get('f1') or 0:.3f}, {r.get('wall_s') or 0:.2f} s)")
        best = {r["tool"]: r for r in res["runs"]["zh-titles"]}
        check(best["neardup-minhash"]["precision"] >= 0.9 and best["neardup-minhash"]["recall"] >= 0.7,
              "quality: neardup-minhash on zh-titles has P >= 0.9 and R >= 0.7")

        print("== flood", flush=True)
        out = os.path.join(tmp, "flood")
        run("flood", "--bin", binary, "--sizes", "1000", "--reps", "1", "--out", out, "--label", "selftest")
        print(open(os.path.join(out, "results.md")).read(), end="")
        row = open(os.path.join(out, "results.md")).read().splitlines()[-1].split("|")
        check(row[2].strip() == "1000" and row[8].strip().isdigit(), "flood: a row with its kept count")
    except (Failed, OSError, KeyError, StopIteration, ValueError) as e:
        print(f"selftest FAILED: {e}", flush=True)
        print(f"selftest: {result.testsRun + len(PASSED)} passed, 1 failed")
        return 1
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)
    print(f"selftest: {result.testsRun + len(PASSED)} passed, 0 failed ({time.time() - t0:.0f} s)")
    return 0
