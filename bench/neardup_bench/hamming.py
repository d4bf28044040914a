"""`hamming`: the exact SimHash Hamming index vs PyPI simhash and gaoya (issue 8).

Two sets of 64-bit fingerprints, written once to OUT (OUT = bench/out/hamming) as little-endian
u64 and used by prefix (the first N for size N):
  random  uniform 64-bit values (numpy default_rng(seed))
  real    SimHash of real text from the shared data, scaled up with segment combinations and
          token edits (crates/neardup-eval/examples/simhash_corpus.rs says exactly how)

For every set and every size of --sizes, neardup (crates/neardup-index/examples/hamming_bench.rs)
and the peers (neardup_bench/hamming_peers.py) run on the same fingerprints and the same
queries: build time, memory, single-thread query latency p50/p99 for `near` queries (a stored
fingerprint with 1..k bits flipped) and `random` ones, at k = 3 and k = 10 (one index per k,
built for that k), and the all-pairs self-join at k = 3. --big adds neardup alone at that size.
Each (tool, set, size, k) is its own process under measure.py (wall time, peak RSS), with a
memory cap (RLIMIT_AS, --mem-gb) and a timeout; a peer that fails at a size is not tried at
larger ones. Runs are repeated --reps times and the tables give medians, except that a peer
configuration whose first run took over --rep-cap seconds runs once (the table says how many
runs each row has). Peer query phases stop after --query-budget seconds and the peer self-join
after --join-budget seconds (then its time is extrapolated from the share done).

Writes OUT/hamming.md and OUT/hamming.json. Builds the two Rust examples with cargo unless
--bin-dir names a folder holding hamming_bench and simhash_corpus (or --no-build).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

from . import common
from .common import ROOT, log, measure

EXAMPLES = (("neardup-index", "hamming_bench"), ("neardup-eval", "simhash_corpus"))
QUICK = {"sizes": "20000", "big": 0, "reps": 1, "queries": 500, "query_budget": 5.0, "join_budget": 20.0,
         "timeout": 120.0}


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--sizes", default="100000 1000000 2000000 5000000", help="side-by-side sizes (neardup and peers)")
    ap.add_argument("--big", type=int, default=50_000_000, help="neardup-only size (0: none)")
    ap.add_argument("--sets", default="random real")
    ap.add_argument("--peers", default="simhash gaoya")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--big-reps", type=int, default=1, help="runs at --big (default 1)")
    ap.add_argument("--rep-cap", type=float, default=60.0, help="a peer run longer than this is not repeated")
    ap.add_argument("--queries", type=int, default=5000, help="queries of each kind")
    ap.add_argument("--query-budget", type=float, default=20.0, help="seconds per peer query phase")
    ap.add_argument("--join-budget", type=float, default=120.0, help="seconds of a peer self-join")
    ap.add_argument("--join-max", default="random:50000000 real:10000000",
                    help="per set, no neardup self-join above this size (the real set's join grows with "
                         "its bucket skew: about 6 s at 2 million, so about an hour at 50 million)")
    ap.add_argument("--join-single-max", type=int, default=10_000_000,
                    help="no 1-thread neardup self-join above this size")
    ap.add_argument("--mem-gb", type=int, default=8, help="memory cap of a peer run")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds of a peer run")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true",
                    help="a smoke run: " + ", ".join(f"--{k.replace('_', '-')} {v}" for k, v in QUICK.items()))
    ap.add_argument("--bin-dir", help="folder with hamming_bench and simhash_corpus (no build)")
    ap.add_argument("--no-build", action="store_true", help="use the examples in the cargo target folder as they are")
    ap.add_argument("--data", help="shared data folder (default $NEARDUP_DATA or ../shared/data)")
    ap.add_argument("--out", default=os.path.join(common.DEFAULT_OUT, "hamming"))


def binaries(args, out: str) -> dict:
    """Private copies of the two examples (a rebuild by someone else cannot change them mid-run)."""
    folder = args.bin_dir
    if not folder:
        target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
        folder = os.path.join(target, "release", "examples")
        if not args.no_build:
            for package, example in EXAMPLES:
                log(f"cargo build --release -p {package} --example {example}")
                subprocess.run(["cargo", "build", "--release", "-p", package, "--example", example], cwd=ROOT,
                               check=True)
    bin_dir = os.path.join(out, "bin")
    os.makedirs(bin_dir, exist_ok=True)
    paths = {}
    for _, example in EXAMPLES:
        src = os.path.join(folder, example)
        if not os.path.isfile(src):
            sys.exit(f"no {example} in {folder}")
        paths[example] = shutil.copy2(src, os.path.join(bin_dir, example))
    return paths


def fingerprint_file(kind: str, count: int, args, out: str, bins: dict, data: str) -> tuple[str, dict]:
    """OUT/{kind}_{count}_seed{seed}.u64, made once (both generators are deterministic)."""
    path = os.path.join(out, f"{kind}_{count}_seed{args.seed}.u64")
    info_path = path + ".json"
    if os.path.exists(path) and os.path.getsize(path) == 8 * count and os.path.exists(info_path):
        with open(info_path) as fh:
            return path, json.load(fh)
    log(f"writing {count:,} {kind} fingerprints to {common.rel(path)}")
    t0 = time.perf_counter()
    if kind == "random":
        rng = np.random.default_rng(args.seed)
        with open(path, "wb") as fh:
            for start in range(0, count, 10_000_000):
                part = min(10_000_000, count - start)
                fh.write(rng.integers(0, 2**64 - 1, size=part, dtype=np.uint64, endpoint=True).astype("<u8").tobytes())
        info = {"generator": f"numpy default_rng({args.seed}).integers over all of u64"}
    else:
        cmd = [bins["simhash_corpus"], "--data", data, "--count", str(count), "--seed", str(args.seed), "--out", path]
        done = subprocess.run(cmd, capture_output=True, text=True, check=True)
        shown = [common.rel(cmd[0]), "--data", common.rel(data), *cmd[3:-1], common.rel(path)]
        info = {"generator": "`" + " ".join(shown) + "`", **json.loads(done.stderr.strip().splitlines()[-1])}
    info["seconds"] = time.perf_counter() - t0
    with open(info_path, "w") as fh:
        json.dump(info, fh, indent=1)
    return path, info


def skew(path: str, n: int) -> dict:
    """Bucket skew of the first n fingerprints on the four 16-bit blocks (means over the blocks): the
    pairs sharing a bucket over what uniform values give (1 = uniform), and the largest bucket."""
    values = np.fromfile(path, dtype="<u8", count=n)
    ratios, largest = [], []
    for block in range(4):
        counts = np.bincount(((values >> np.uint64(16 * block)) & np.uint64(0xFFFF)).astype(np.int64),
                             minlength=65536).astype(np.float64)
        ratios.append(float((counts * (counts - 1)).sum() / max(1.0, n * (n - 1) / 65536)))
        largest.append(int(counts.max()))
    return {"distinct": int(len(np.unique(values))), "collision_ratio_16bit": statistics.mean(ratios),
            "largest_16bit_bucket": statistics.mean(largest), "uniform_bucket": n / 65536}


def run_json(cmd: list[str], record: str, result: str, **limits) -> dict:
    """One measured run whose stdout (neardup) or --out file (peers) is the JSON result."""
    with open(result + ".stdout", "w") as out, open(result + ".stderr", "w") as err:
        rec = measure(cmd, record, stdout=out, stderr=err, **limits)
    payload = None
    for candidate in (result, result + ".stdout"):
        if os.path.exists(candidate) and os.path.getsize(candidate):
            with open(candidate) as fh:
                try:
                    payload = json.load(fh)
                    break
                except json.JSONDecodeError:
                    pass
    if rec.get("timed_out"):
        rec["failure"] = f"timed out after {limits.get('timeout'):g} s"
    elif rec["returncode"] != 0 or payload is None:
        with open(result + ".stderr", errors="replace") as fh:
            tail = fh.read()[-300:].strip().replace("\n", " ")
        rec["failure"] = f"exit {rec['returncode']} after {rec['wall_seconds']:.0f} s: {tail}"
    rec["result"] = payload
    return rec


def join_max(args, kind: str) -> int:
    limits = dict(item.split(":") for item in args.join_max.split())
    return int(limits.get(kind, 2**62))


def neardup_runs(args, bins, kind, path, n, k, qdir, reps, work) -> list[dict]:
    runs = []
    for rep in range(reps):
        cmd = [bins["hamming_bench"], "--input", path, "--limit", str(n), "--ks", str(k), "--queries",
               str(args.queries), "--seed", str(args.seed), "--join-threads", "2,1", "--join-max", str(join_max(args, kind)),
               "--join-single-max", str(args.join_single_max)]
        if rep == 0:
            cmd += ["--dump-queries", qdir]
        base = os.path.join(work, f"neardup_k{k}_r{rep}")
        log(f"neardup n={n:,} k={k} run {rep + 1}/{reps}")
        runs.append(run_json(cmd, base + ".measure.json", base + ".json"))
        if runs[-1].get("failure"):
            log(f"  failed: {runs[-1]['failure']}")
            break
    return runs


def peer_runs(args, peer, path, n, k, qdir, work) -> list[dict]:
    runs = []
    for rep in range(args.reps):
        base = os.path.join(work, f"{peer}_k{k}_r{rep}")
        cmd = [*common.bench_python(), "neardup_bench.hamming_peers", "--peer", peer, "--fps", path, "--n", str(n),
               "--k", str(k), "--queries-dir", qdir, "--out", base + ".json", "--queries", str(args.queries),
               "--budget", str(args.query_budget), "--join-budget", str(args.join_budget)]
        if k == 3:
            cmd.append("--join")
        log(f"{peer} n={n:,} k={k} run {rep + 1}/{args.reps}")
        runs.append(run_json(cmd, base + ".measure.json", base + ".json", timeout=args.timeout,
                             max_as=args.mem_gb << 30))
        if runs[-1].get("failure"):
            log(f"  failed: {runs[-1]['failure']}")
            break
        if runs[-1]["wall_seconds"] > args.rep_cap:
            break
    return runs


def versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version
    found = {"python": sys.version.split()[0]}
    for name in ("simhash", "gaoya", "numpy"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "not installed"
    return found


def main(args) -> int:
    if args.quick:
        for key, value in QUICK.items():
            setattr(args, key, value)
    started = time.time()
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    common.LOG_FILE = os.path.join(out, "hamming.log")
    data = common.find_data(args.data)
    sizes = [int(s) for s in args.sizes.split()]
    sets, peers = args.sets.split(), args.peers.split()
    bins = binaries(args, out)
    count = max(sizes + [args.big])
    report = {"command": "bench/run hamming " + " ".join(sys.argv[2:]), "machine": common.machine(),
              "commit": common.git_describe(), "versions": versions(), "settings": {
                  k: getattr(args, k) for k in ("sizes", "big", "reps", "big_reps", "rep_cap", "queries",
                                                "query_budget", "join_budget", "join_max", "join_single_max",
                                                "mem_gb", "timeout", "seed")},
              "sets": {}, "rows": []}
    for kind in sets:
        path, info = fingerprint_file(kind, count, args, out, bins, data)
        report["sets"][kind] = {"file": common.rel(path), **info, "skew": {}}
        failed: dict[tuple, str] = {}
        for n in sizes + ([args.big] if args.big and args.big not in sizes else []):
            report["sets"][kind]["skew"][str(n)] = skew(path, n)
            qdir = os.path.join(out, "queries", f"{kind}_{n}")
            work = os.path.join(out, "runs", f"{kind}_{n}")
            os.makedirs(qdir, exist_ok=True)
            os.makedirs(work, exist_ok=True)
            big = n not in sizes
            for k in (3, 10):
                runs = neardup_runs(args, bins, kind, path, n, k, qdir, args.big_reps if big else args.reps, work)
                report["rows"].append({"set": kind, "n": n, "tool": "neardup", "k": k, "runs": runs})
                for peer in ([] if big else peers):
                    if (peer, k) in failed:
                        report["rows"].append({"set": kind, "n": n, "tool": peer, "k": k, "runs": [],
                                               "skipped": f"failed at {failed[(peer, k)]}"})
                        continue
                    runs = peer_runs(args, peer, path, n, k, qdir, work)
                    if runs[-1].get("failure"):
                        failed[(peer, k)] = f"n = {n:,}: {runs[-1]['failure'][:120]}"
                    report["rows"].append({"set": kind, "n": n, "tool": peer, "k": k, "runs": runs})
            write(report, out, started)
    report["wall_seconds"] = time.time() - started
    write(report, out, started)
    log(f"done in {report['wall_seconds']:.0f} s: {common.rel(os.path.join(out, 'hamming.md'))}")
    return 0


def write(report: dict, out: str, started: float) -> None:
    from .hamming_report import markdown
    report.setdefault("wall_seconds", None)
    with open(os.path.join(out, "hamming.json"), "w") as fh:
        json.dump(report, fh, indent=1)
    with open(os.path.join(out, "hamming.md"), "w") as fh:
        fh.write(markdown(report, time.time() - started))
