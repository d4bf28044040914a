"""Run a Python MinHash-LSH peer (datasketch or rensa) on a JSONL corpus: the timed child
process of `speed` (`python -m neardup_bench.peers CORPUS --tool ...`).

The shingles are those of `neardup --tokenizer token` (neardup_bench/shingles.py, checked
against the binary by bench/tests/test_shingles.py).
Everything is timed from process start: reading the file, tokenising and
shingling in Python, building one MinHash signature per non-empty document,
inserting it into the LSH index (key = input index), then querying every
document to collect candidate pairs (a < b by input index).

Two predictions are written:
  <out-dir>/<tool>.candidates.tsv   raw LSH candidate pairs  "a<TAB>b"
  <out-dir>/<tool>.verified.tsv     candidates whose exact shingle Jaccard is
                                    >= threshold              "a<TAB>b<TAB>j"
Verification re-reads the file and re-shingles only the documents that occur
in a candidate pair; it is timed separately (verify_seconds), and the peak RSS
is sampled both before it (peak_rss_lsh_bytes) and at the end
(peak_rss_bytes).  A JSON result file gets all timings.

LSH parameters: datasketch chooses its own (bands, rows) for the threshold
(b=14, r=9 for t=0.7, 128 permutations).  rensa's RMinHashLSH needs
num_perm % num_bands == 0; --rensa-bands (default 16, i.e. 16 x 8 rows, the
divisible split whose S-curve midpoint (1/b)^(1/r) = 0.707 is closest to 0.7)
is used.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time

T_START = time.perf_counter()

from neardup_bench import shingles as sh  # noqa: E402


def maxrss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def shingle_list(text: str, n: int) -> list[str]:
    return list(sh.shingles(text, n))


def run_datasketch(docs_iter, args, timings):
    from datasketch import MinHash, MinHashLSH

    params = tuple(args.datasketch_params) if args.datasketch_params else None
    lsh = MinHashLSH(threshold=args.threshold, num_perm=args.permutations, params=params)
    template = MinHash(num_perm=args.permutations, seed=args.seed)
    sigs = []  # (index, minhash)
    n_docs = 0
    for i, (_id, text) in enumerate(docs_iter):
        n_docs += 1
        shs = shingle_list(text, args.ngram)
        if not shs:
            continue
        m = template.copy()
        m.update_batch([s.encode("utf-8") for s in shs])
        sigs.append((i, m))
    t1 = time.perf_counter()
    timings["read_shingle_sketch"] = t1 - T_START
    with lsh.insertion_session() as session:
        for i, m in sigs:
            session.insert(i, m, check_duplication=False)
    t2 = time.perf_counter()
    timings["insert"] = t2 - t1
    cands = set()
    for i, m in sigs:
        for j in lsh.query(m):
            if j != i:
                cands.add((i, j) if i < j else (j, i))
    timings["query"] = time.perf_counter() - t2
    info = {"bands": lsh.b, "rows": lsh.r}
    return n_docs, len(sigs), cands, info


def run_rensa(docs_iter, args, timings):
    import rensa

    lsh = rensa.RMinHashLSH(args.threshold, args.permutations, args.rensa_bands)
    sigs = []
    n_docs = 0
    for i, (_id, text) in enumerate(docs_iter):
        n_docs += 1
        shs = shingle_list(text, args.ngram)
        if not shs:
            continue
        m = rensa.RMinHash(args.permutations, args.seed)
        m.update(shs)
        sigs.append((i, m))
    t1 = time.perf_counter()
    timings["read_shingle_sketch"] = t1 - T_START
    for i, m in sigs:
        lsh.insert(i, m)
    t2 = time.perf_counter()
    timings["insert"] = t2 - t1
    cands = set()
    for i, m in sigs:
        for j in lsh.query(m):
            if j != i:
                cands.add((i, j) if i < j else (j, i))
    timings["query"] = time.perf_counter() - t2
    info = {"bands": lsh.get_num_bands(), "rows": args.permutations // lsh.get_num_bands()}
    return n_docs, len(sigs), cands, info


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus")
    ap.add_argument("--tool", choices=["datasketch", "rensa"], required=True)
    ap.add_argument("--threshold", type=float, default=0.7)
    ap.add_argument("--permutations", type=int, default=128)
    ap.add_argument("--ngram", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rensa-bands", type=int, default=16)
    ap.add_argument("--datasketch-params", type=int, nargs=2, metavar=("BANDS", "ROWS"),
                    help="override datasketch's own (bands, rows) choice (supplementary runs only)")
    ap.add_argument("--id-field", default="id")
    ap.add_argument("--text-field", default="text")
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--result", required=True, help="JSON result file")
    ap.add_argument("--no-verify", action="store_true")
    args = ap.parse_args(argv)

    os.makedirs(args.out_dir, exist_ok=True)
    timings: dict[str, float] = {}
    docs = sh.read_jsonl(args.corpus, args.text_field, args.id_field)
    runner = run_datasketch if args.tool == "datasketch" else run_rensa
    n_docs, n_nonempty, cands, info = runner(docs, args, timings)

    cand_path = os.path.join(args.out_dir, f"{args.tool}.candidates.tsv")
    ordered = sorted(cands)
    with open(cand_path, "w") as fh:
        for a, b in ordered:
            fh.write(f"{a}\t{b}\n")
    t_lsh_end = time.perf_counter()
    lsh_seconds = t_lsh_end - T_START
    rss_lsh = maxrss_bytes()

    result = {
        "tool": args.tool,
        "corpus": args.corpus,
        "documents": n_docs,
        "nonempty_documents": n_nonempty,
        "bytes_in": os.path.getsize(args.corpus),
        "threshold": args.threshold,
        "permutations": args.permutations,
        "ngram": args.ngram,
        "lsh": info,
        "candidate_pairs": len(cands),
        "candidates_file": cand_path,
        "timings": timings,
        "lsh_seconds": lsh_seconds,
        "peak_rss_lsh_bytes": rss_lsh,
    }

    if not args.no_verify:
        t0 = time.perf_counter()
        needed = set()
        for a, b in ordered:
            needed.add(a)
            needed.add(b)
        # Each needed document's shingle set is kept as a sorted numpy array of
        # the shingles' 64-bit Python string hashes (exact up to a 64-bit hash
        # collision inside one pair); this keeps verification memory small.
        import numpy as np

        arrays: dict[int, np.ndarray] = {}
        if needed:
            for i, (_id, text) in enumerate(sh.read_jsonl(args.corpus, args.text_field, args.id_field)):
                if i in needed:
                    arrays[i] = np.unique(np.fromiter((hash(g) for g in sh.shingles(text, args.ngram)), dtype=np.int64))
        ver_path = os.path.join(args.out_dir, f"{args.tool}.verified.tsv")
        n_ver = 0
        with open(ver_path, "w") as fh:
            for a, b in ordered:
                x, y = arrays[a], arrays[b]
                inter = np.intersect1d(x, y, assume_unique=True).size
                j = inter / (x.size + y.size - inter) if x.size and y.size else 0.0
                if j >= args.threshold:
                    n_ver += 1
                    fh.write(f"{a}\t{b}\t{j:.6f}\n")
        result["verify_seconds"] = time.perf_counter() - t0
        result["verified_pairs"] = n_ver
        result["verified_file"] = ver_path
    result["total_seconds"] = time.perf_counter() - T_START
    result["peak_rss_bytes"] = maxrss_bytes()
    with open(args.result, "w") as fh:
        json.dump(result, fh, indent=2)
    print(json.dumps({k: result[k] for k in ("tool", "documents", "candidate_pairs", "lsh_seconds", "total_seconds")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
