"""One peer run of `bench/run hamming`, in a process of its own (measured by measure.py).

usage: python -m neardup_bench.hamming_peers --peer simhash|gaoya --fps FILE --n N --k K
           --queries-dir DIR --out RESULT.json [--queries Q] [--budget S] [--join] [--join-budget S]

Reads the first N little-endian u64 fingerprints of FILE (ids = positions), builds the peer's
index at distance K, times single queries one by one (the `near` and `random` queries that
hamming_bench wrote to DIR), and with --join the all-pairs self-join at K by querying every
stored fingerprint (neither peer has a join). Writes JSON to RESULT.json.

- simhash (PyPI `simhash`): `SimhashIndex([(str id, Simhash(int value)), ...], f=64, k=K)`,
  which cuts the 64 bits into K + 1 blocks (Manku's tables, radius 0);
  `get_near_dups(Simhash(q))`. Our u64 values go in as they are.
- gaoya: `SimHash64StringIntIndex(num_blocks=K + 1, max_distance=K)`. Its Python API takes only
  documents or token lists and fingerprints them itself (SipHash of each token, unweighted
  SimHash); there is no way to pass a precomputed fingerprint. A one-token document gives the
  SipHash of that token as its fingerprint, so each stored item is the token `str(value)`:
  gaoya indexes uniformly random 64-bit fingerprints (one per distinct value), whatever the
  set. Near queries cannot be made (flipping bits of our value gives an unrelated SipHash),
  so only `random` queries are timed; the self-join queries every stored token.

Queries are timed with time.perf_counter_ns() around the peer's query call (the query's
Simhash object is made before). A phase stops after --budget seconds; `queries` says how
many ran.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np


def read_u64(path: str, count: int = -1) -> list[int]:
    return np.fromfile(path, dtype="<u8", count=count).tolist()


def latency(query, queries: list, budget: float) -> dict:
    nanos, matches = [], 0
    deadline = time.perf_counter() + budget
    for q in queries:
        t0 = time.perf_counter_ns()
        found = query(q)
        nanos.append(time.perf_counter_ns() - t0)
        matches += len(found)
        if time.perf_counter() > deadline:
            break
    nanos.sort()
    at = lambda p: nanos[min(len(nanos), max(1, int(np.ceil(p * len(nanos))))) - 1] / 1e3  # noqa: E731
    return {"queries": len(nanos), "p50_us": at(0.5), "p99_us": at(0.99), "max_us": nanos[-1] / 1e3,
            "mean_us": sum(nanos) / len(nanos) / 1e3, "mean_matches": matches / len(nanos)}


def self_join(query_ids, n: int, budget: float) -> dict:
    """Pairs from querying every stored item i: ids j != i found, as unordered pairs."""
    pairs, repeats, t0 = set(), 0, time.perf_counter()
    for i in range(n):
        found = query_ids(i)
        repeats += len(found) - len(set(found))
        pairs.update((min(i, j), max(i, j)) for j in found if j != i)
        if time.perf_counter() - t0 > budget:
            return {"threads": 1, "seconds": None, "stored_queried": i + 1, "pairs_so_far": len(pairs),
                    "stopped_after_s": budget}
    return {"threads": 1, "seconds": time.perf_counter() - t0, "pairs": len(pairs), "repeated_ids": repeats}


def run_simhash(values: list[int], k: int, near: list[int], random_: list[int], args) -> dict:
    from simhash import Simhash, SimhashIndex
    import logging
    logging.getLogger("simhash").setLevel(logging.ERROR)
    objs = [(str(i), Simhash(v, f=64)) for i, v in enumerate(values)]
    t0 = time.perf_counter()
    index = SimhashIndex(objs, f=64, k=k)
    res = {"build_seconds": time.perf_counter() - t0}
    query = lambda s: index.get_near_dups(s)  # noqa: E731
    res["near"] = latency(query, [Simhash(q, f=64) for q in near], args.budget)
    res["random"] = latency(query, [Simhash(q, f=64) for q in random_], args.budget)
    if args.join:
        res["self_join"] = [self_join(lambda i: [int(x) for x in index.get_near_dups(objs[i][1])], len(values),
                                      args.join_budget)]
    return res


def run_gaoya(values: list[int], k: int, near: list[int], random_: list[int], args) -> dict:
    from gaoya.gaoya import simhash as gs
    index = gs.SimHash64StringIntIndex(k + 1, k)
    tokens = [[str(v)] for v in values]
    t0 = time.perf_counter()
    index.par_bulk_insert_tokens(list(range(len(values))), tokens)
    res = {"build_seconds": time.perf_counter() - t0, "build_api": "par_bulk_insert_tokens (rayon threads)"}
    query = lambda q: index.query_tokens(q)  # noqa: E731
    res["near"] = None
    res["random"] = latency(query, [[str(q)] for q in random_], args.budget)
    if args.join:
        res["self_join"] = [self_join(lambda i: index.query_tokens(tokens[i]), len(values), args.join_budget)]
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--peer", required=True, choices=["simhash", "gaoya"])
    ap.add_argument("--fps", required=True)
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--k", type=int, required=True)
    ap.add_argument("--queries-dir", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--queries", type=int, default=10000)
    ap.add_argument("--budget", type=float, default=60.0)
    ap.add_argument("--join", action="store_true")
    ap.add_argument("--join-budget", type=float, default=300.0)
    args = ap.parse_args()
    values = read_u64(args.fps, args.n)
    if len(values) < args.n:
        sys.exit(f"{args.fps}: {len(values)} fingerprints, fewer than {args.n}")
    near = read_u64(f"{args.queries_dir}/near_k{args.k}.u64")[:args.queries]
    random_ = read_u64(f"{args.queries_dir}/random.u64")[:args.queries]
    run = run_simhash if args.peer == "simhash" else run_gaoya
    res = {"tool": args.peer, "n": args.n, "k": args.k, **run(values, args.k, near, random_, args)}
    with open(args.out, "w") as fh:
        json.dump(res, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
