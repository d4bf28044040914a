#!/usr/bin/env python3
"""The span rule computed directly, as a third opinion next to ExactSubstr and `neardup spans`.

    reference.py CORPUS.jsonl --length N [--unit bytes|chars] [--count occurrences|documents]
                 --out ranges.jsonl

Marks every window of exactly N units (UTF-8 bytes, or characters = Unicode scalar values) that
lies inside one document and occurs at least twice in the corpus (--count occurrences, the
ExactSubstr rule; overlapping occurrences count) or in at least two documents (--count
documents); the removed text of a document is the union of its marked windows. Windows never
touch a separator, so this is what ExactSubstr's dataset mode would give if its separators
could not take part in matches (see README.md: they can).

Output: one line per document with ranges, {"doc": index, "id": ..., "ranges": [[start, end],
...]}, byte offsets into the document's UTF-8 text, sorted and merged; with --unit chars the
ranges are whole characters. Windows are compared by a 64-bit polynomial hash (doubling, numpy),
so a false match is possible in principle (about 1e-3 chance over 1e8 windows); numpy is the
only dependency. Memory is about 40 bytes per unit (a 100 MB corpus in bytes: about 4-6 GB).
"""

import argparse
import json
import sys
import time

import numpy as np

BASE = np.uint64(0x9E3779B97F4A7C15 | 1)


def window_hashes(x, n):
    """h[p] = sum_{k<n} f(x[p+k]) * BASE^(n-1-k) mod 2^64 for every p in [0, len(x)-n]."""
    size = len(x)
    if size < n:
        return np.zeros(0, dtype=np.uint64)
    with np.errstate(over="ignore"):
        cur = x.astype(np.uint64) * np.uint64(0x2545F4914F6CDD1D) + np.uint64(1)
        clen, cpow = 1, BASE  # cur[p] hashes x[p:p+clen]; cpow = BASE^clen
        acc, alen = None, 0  # acc[p] hashes x[p:p+alen]
        k = n
        while True:
            if k & 1:
                if acc is None:
                    acc, alen = cur.copy(), clen
                else:
                    cnt = size - alen - clen + 1
                    acc = acc[:cnt] * cpow + cur[alen:alen + cnt]
                    alen += clen
            k >>= 1
            if not k:
                break
            cnt = size - 2 * clen + 1
            cur = cur[:cnt] * cpow + cur[clen:clen + cnt]
            cpow = cpow * cpow
            clen *= 2
    assert alen == n
    return acc[: size - n + 1]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus")
    ap.add_argument("--length", type=int, required=True)
    ap.add_argument("--unit", choices=["bytes", "chars"], default="bytes")
    ap.add_argument("--count", choices=["occurrences", "documents"], default="occurrences")
    ap.add_argument("--text-field", default="text")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    t0 = time.time()
    n = args.length

    ids, texts = [], []
    with open(args.corpus, encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            ids.append(d.get("id"))
            texts.append(d[args.text_field])
    big = "".join(texts)
    if args.unit == "bytes":
        x = np.frombuffer(big.encode("utf-8"), dtype=np.uint8)
        lens = np.array([len(t.encode("utf-8")) for t in texts], dtype=np.int64)
    else:
        x = np.frombuffer(big.encode("utf-32-le"), dtype=np.uint32)
        lens = np.array([len(t) for t in texts], dtype=np.int64)
    del big
    starts = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(lens, out=starts[1:])
    total = int(starts[-1])

    h = window_hashes(x, n)
    m = len(h)
    # valid windows: inside one document
    doc_of = np.repeat(np.arange(len(texts), dtype=np.int64), lens)
    pos = np.arange(m, dtype=np.int64)
    ends = starts[1:][doc_of[:m]]
    valid = pos + n <= ends
    del ends
    pos = pos[valid]
    hv = h[valid]
    del h, valid
    order = np.argsort(hv, kind="stable")
    hs = hv[order]
    del hv
    eq = hs[1:] == hs[:-1]
    del hs
    if args.count == "occurrences":
        dup = np.zeros(len(order), dtype=bool)
        dup[1:] |= eq
        dup[:-1] |= eq
    else:
        gstart = np.flatnonzero(np.concatenate(([True], ~eq)))
        docs_sorted = doc_of[pos[order]]
        gmin = np.minimum.reduceat(docs_sorted, gstart)
        gmax = np.maximum.reduceat(docs_sorted, gstart)
        sizes = np.diff(np.append(gstart, len(order)))
        dup = np.repeat(gmin != gmax, sizes)
        del docs_sorted
    del eq
    dpos = pos[order[dup]]
    del order, dup, pos
    cov = np.bincount(dpos, minlength=total + 1)[: total + 1].astype(np.int32)
    cov -= np.bincount(dpos + n, minlength=total + 1)[: total + 1].astype(np.int32)
    covered = np.cumsum(cov) > 0
    del cov, dpos
    edge = np.diff(np.concatenate(([0], covered.view(np.int8), [0])).astype(np.int8))
    rs = np.flatnonzero(edge == 1)
    re_ = np.flatnonzero(edge == -1)
    del edge, covered

    if args.unit == "chars":
        cp = x
        ulen = (1 + (cp >= 0x80) + (cp >= 0x800) + (cp >= 0x10000)).astype(np.int64)
        boff = np.zeros(total + 1, dtype=np.int64)
        np.cumsum(ulen, out=boff[1:])
    else:
        boff = None
    bstart = np.zeros(len(texts) + 1, dtype=np.int64)
    if boff is not None:
        bstart = boff[starts]
    else:
        bstart = starts

    # coverage is contiguous across document boundaries (no separators here): cut there
    per_doc = {}
    for a, b in zip(rs.tolist(), re_.tolist()):
        d = int(doc_of[a])
        while a < b:
            e = min(b, int(starts[d + 1]))
            x, y = a - int(starts[d]), e - int(starts[d])
            if boff is not None:
                x = int(boff[a]) - int(bstart[d])
                y = int(boff[e]) - int(bstart[d])
            per_doc.setdefault(d, []).append([x, y])
            a = e
            d += 1
    removed = 0
    with open(args.out, "w", encoding="utf-8") as out:
        for d in sorted(per_doc):
            ranges = per_doc[d]
            removed += sum(y - x for x, y in ranges)
            out.write(json.dumps({"doc": d, "id": ids[d], "ranges": ranges}) + "\n")
    ndocs = len(per_doc)
    total_bytes = int(bstart[-1]) if boff is not None else total
    print(json.dumps({"docs": len(texts), "docs_with_ranges": ndocs, "bytes": total_bytes,
                      "bytes_removed": removed,
                      "fraction_removed": round(removed / max(1, total_bytes), 4),
                      "seconds": round(time.time() - t0, 1)}), file=sys.stderr)


if __name__ == "__main__":
    main()
