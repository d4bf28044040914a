"""Exact-Jaccard ground truth on the shingles of `neardup --tokenizer token` (shingles.py).

Two modes:

  --mode exact   All pairs (a < b by input index) whose exact shingle Jaccard
                 is >= threshold, found by a prefix-filter all-pairs join
                 (AllPairs): shingles are mapped to ids ordered by global
                 document frequency ascending (ties by the shingle string);
                 documents are processed by size ascending; each document's
                 prefix is its |A| - ceil(t*|A|) + 1 rarest shingles; a
                 candidate must share a prefix shingle and pass the length
                 filter |B| >= t*|A|; every candidate is verified exactly.
                 This is exact (no sampling, no pooling).

  --mode family  For a `neardup synth` corpus: every pair of documents of the
                 same family (the same `cluster` in synth's truth file, given
                 as --families) whose exact Jaccard is >= threshold, PLUS
                 every pair listed in any --pool file (pairs reported by any
                 tool in the run) whose exact Jaccard is >= threshold.  This
                 is a pooled truth: a cross-family pair that no tool reports
                 is not in it.

Pool files (also accepted in exact mode, where they are only used as a
consistency check) are TSV "a<TAB>b[<TAB>...]" with 0-based input indices.
Empty documents (no shingles) are never part of a pair.

Output: --out TSV "a<TAB>b<TAB>jaccard" sorted, and --meta JSON with counts.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time

import numpy as np

from neardup_bench import shingles as sh  # noqa: E402


def read_docs(path, text_field="text", id_field="id", families=None):
    """List of (id, text, family) for each line; family from the `families` file
    (`neardup synth --truth`: {"id", "cluster"}) when given."""
    fam = {}
    if families:
        with open(families, encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    d = json.loads(line)
                    fam[str(d["id"])] = str(d["cluster"])
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            d = json.loads(line)
            i = str(d.get(id_field))
            out.append((i, d.get(text_field) or "", fam.get(i, i) if families else None))
    return out


def read_pool(paths):
    pairs = set()
    for p in paths:
        with open(p) as fh:
            for line in fh:
                f = line.split("\t")
                if len(f) < 2:
                    continue
                a, b = int(f[0]), int(f[1])
                if a == b:
                    continue
                pairs.add((a, b) if a < b else (b, a))
    return pairs


def exact_jaccard_arrays(x: np.ndarray, y: np.ndarray) -> float:
    if x.size == 0 or y.size == 0:
        return 0.0
    inter = np.intersect1d(x, y, assume_unique=True).size
    return inter / (x.size + y.size - inter)


def exact_join(sets: list[list[int]], t: float):
    """Prefix-filter all-pairs join. sets[i] = shingle-id list sorted ascending
    (ascending id == ascending global frequency).  Returns {(a,b): j}."""
    order = sorted((i for i, s in enumerate(sets) if s), key=lambda i: (len(sets[i]), i))
    # index[tok] = [start, doc, doc, ...]; docs are appended in size-ascending
    # order, and the minimum admissible size only grows, so entries before
    # `start` can never pass the length filter again (AllPairs pruning).
    index: dict[int, list[int]] = {}
    sizes = [len(s) for s in sets]
    result = {}
    n_cand = 0
    for x in order:
        sx = sets[x]
        lx = len(sx)
        minlen = t * lx - 1e-9
        p = lx - math.ceil(t * lx - 1e-9) + 1
        cands = set()
        for tok in sx[:p]:
            lst = index.get(tok)
            if lst is None:
                index[tok] = [1, x]
                continue
            k = lst[0]
            n = len(lst)
            while k < n and sizes[lst[k]] < minlen:
                k += 1
            lst[0] = k
            cands.update(lst[k:])
            lst.append(x)
        if cands:
            setx = set(sx)
            for y in cands:
                n_cand += 1
                sy = sets[y]
                inter = sum(1 for v in sy if v in setx)
                j = inter / (lx + len(sy) - inter)
                if j >= t:
                    result[(x, y) if x < y else (y, x)] = j
    return result, n_cand


def parse_args(argv):
    """The command line; --mode family without --families is a usage error."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus")
    ap.add_argument("--mode", choices=["exact", "family"], required=True)
    ap.add_argument("--threshold", type=float, default=0.7)
    ap.add_argument("--ngram", type=int, default=5)
    ap.add_argument("--id-field", default="id")
    ap.add_argument("--text-field", default="text")
    ap.add_argument("--families", help="family mode: `neardup synth --truth` file ({id, cluster})")
    ap.add_argument("--pool", nargs="*", default=[], help="pair TSV files reported by tools")
    ap.add_argument("--out", required=True)
    ap.add_argument("--meta", required=True)
    args = ap.parse_args(argv)
    if args.mode == "family" and not args.families:
        ap.error("--mode family needs --families")
    return args


def ranked_sets(docs, ngram: int) -> list[list[int]]:
    """Each document's shingles as ids sorted ascending, the ids ordered by global document
    frequency ascending (ties by the shingle string), as exact_join expects."""
    freq: dict[str, int] = {}
    str_sets = []
    for _id, text, _f in docs:
        s = sh.shingles(text, ngram)
        str_sets.append(s)
        for g in s:
            freq[g] = freq.get(g, 0) + 1
    ranked = sorted(freq, key=lambda g: (freq[g], g))
    gid = {g: i for i, g in enumerate(ranked)}
    del ranked, freq
    sets = [sorted(gid[g] for g in s) for s in str_sets]
    del str_sets, gid
    return sets


def exact_truth(docs, pool, t: float, ngram: int, meta: dict) -> dict[tuple[int, int], float]:
    """--mode exact: the prefix-filter join over all documents; the pool only checks it."""
    sets = ranked_sets(docs, ngram)
    truth, n_cand = exact_join(sets, t)
    meta["join_candidates_verified"] = n_cand
    missing = 0
    for a, b in pool:
        if (a, b) in truth:
            continue
        sa, sb = set(sets[a]), sets[b]
        if sa and sb:
            inter = sum(1 for v in sb if v in sa)
            if inter / (len(sa) + len(sb) - inter) >= t:
                missing += 1
    meta["pool_pairs_above_threshold_missed_by_join"] = missing  # must be 0
    meta["empty_documents"] = sum(1 for s in sets if not s)
    meta["note"] = "exact all-pairs truth via prefix-filter join (not pooled)"
    return truth


def family_truth(docs, pool, t: float, ngram: int, meta: dict) -> dict[tuple[int, int], float]:
    """--mode family: every within-family pair plus every pooled pair, each checked exactly."""
    truth: dict[tuple[int, int], float] = {}
    by_family: dict[str, list[int]] = {}
    for i, (_id, _text, fam) in enumerate(docs):
        by_family.setdefault(str(fam), []).append(i)
    need_pairs = set()
    for members in by_family.values():
        for x in range(len(members)):
            for y in range(x + 1, len(members)):
                need_pairs.add((members[x], members[y]))
    n_family_pairs = len(need_pairs)
    pool_extra = pool - need_pairs
    need_pairs |= pool
    need_docs = {i for p in need_pairs for i in p}
    gid: dict[str, int] = {}
    arrays: dict[int, np.ndarray] = {}
    for i in need_docs:
        s = sh.shingles(docs[i][1], ngram)
        arrays[i] = np.array(sorted(gid.setdefault(g, len(gid)) for g in s), dtype=np.int64)
    fam_true = 0
    pool_true = 0
    for a, b in sorted(need_pairs):
        j = exact_jaccard_arrays(arrays[a], arrays[b])
        if j >= t:
            truth[(a, b)] = j
            if (a, b) in pool_extra:
                pool_true += 1
            else:
                fam_true += 1
    meta.update(
        {
            "family_pairs_checked": n_family_pairs,
            "family_pairs_true": fam_true,
            "cross_family_pool_pairs_checked": len(pool_extra),
            "cross_family_pool_pairs_true": pool_true,
            "note": "pooled truth: within-family pairs with exact Jaccard >= t, plus every pair reported "
            "by any tool in this run whose exact Jaccard >= t",
        }
    )
    return truth


def main(argv=None) -> int:
    args = parse_args(argv)
    t0 = time.perf_counter()
    t = args.threshold
    docs = read_docs(args.corpus, args.text_field, args.id_field, args.families if args.mode == "family" else None)
    pool = read_pool(args.pool)
    meta = {
        "corpus": args.corpus,
        "mode": args.mode,
        "threshold": t,
        "ngram": args.ngram,
        "documents": len(docs),
        "pool_files": len(args.pool),
        "pool_pairs": len(pool),
    }
    if args.mode == "exact":
        truth = exact_truth(docs, pool, t, args.ngram, meta)
    else:
        truth = family_truth(docs, pool, t, args.ngram, meta)

    with open(args.out, "w") as fh:
        for (a, b), j in sorted(truth.items()):
            fh.write(f"{a}\t{b}\t{j:.6f}\n")
    meta["true_pairs"] = len(truth)
    meta["seconds"] = time.perf_counter() - t0
    with open(args.meta, "w") as fh:
        json.dump(meta, fh, indent=2)
    print(json.dumps(meta))
    return 0


if __name__ == "__main__":
    sys.exit(main())
