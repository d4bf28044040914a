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


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus")
    ap.add_argument("--length", type=int, required=True)
    ap.add_argument("--unit", choices=["bytes", "chars"], default="bytes")
    ap.add_argument("--count", choices=["occurrences", "documents"], default="occurrences")
    ap.add_argument("--text-field", default="text")
    ap.add_argument("--out", required=True)
    return ap.parse_args(argv)


def read_units(path, field, unit):
    """The documents' ids, their texts end to end as one array of units (uint8 bytes or uint32
    code points) and each document's length in units."""
    ids, texts = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            ids.append(d.get("id"))
            texts.append(d[field])
    big = "".join(texts)
    if unit == "bytes":
        x = np.frombuffer(big.encode("utf-8"), dtype=np.uint8)
        lens = np.array([len(t.encode("utf-8")) for t in texts], dtype=np.int64)
    else:
        x = np.frombuffer(big.encode("utf-32-le"), dtype=np.uint32)
        lens = np.array([len(t) for t in texts], dtype=np.int64)
    return ids, x, lens


def marked_windows(x, n, lens, starts, count):
    """The start of every window of n units inside one document that occurs at least twice
    (count "occurrences") or in at least two documents ("documents"), and the document of every
    unit."""
    h = window_hashes(x, n)
    m = len(h)
    # valid windows: inside one document
    doc_of = np.repeat(np.arange(len(lens), dtype=np.int64), lens)
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
    if count == "occurrences":
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
    return pos[order[dup]], doc_of


def covered_runs(dpos, n, total):
    """The union of the windows of n units starting at dpos, as the starts and the ends of its
    runs of units."""
    cov = np.bincount(dpos, minlength=total + 1)[: total + 1].astype(np.int32)
    cov -= np.bincount(dpos + n, minlength=total + 1)[: total + 1].astype(np.int32)
    covered = np.cumsum(cov) > 0
    del cov
    edge = np.diff(np.concatenate(([0], covered.view(np.int8), [0])).astype(np.int8))
    del covered
    return np.flatnonzero(edge == 1), np.flatnonzero(edge == -1)


def byte_offsets(x, starts, total, unit):
    """With --unit chars the byte offset of every character position (total + 1 of them) and of
    every document start; with bytes None and the starts themselves."""
    if unit != "chars":
        return None, starts
    cp = x
    ulen = (1 + (cp >= 0x80) + (cp >= 0x800) + (cp >= 0x10000)).astype(np.int64)
    boff = np.zeros(total + 1, dtype=np.int64)
    np.cumsum(ulen, out=boff[1:])
    return boff, boff[starts]


def cut_at_documents(rs, re_, doc_of, starts, boff, bstart):
    """The runs [rs, re_) cut where documents start, as {doc: [[start, end], ...]} byte offsets
    into each document's text."""
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
    return per_doc


def write_ranges(path, per_doc, ids):
    """One line per document with ranges; return the bytes they cover."""
    removed = 0
    with open(path, "w", encoding="utf-8") as out:
        for d in sorted(per_doc):
            ranges = per_doc[d]
            removed += sum(y - x for x, y in ranges)
            out.write(json.dumps({"doc": d, "id": ids[d], "ranges": ranges}) + "\n")
    return removed


def main(argv=None):
    args = parse_args(argv)
    t0 = time.time()
    n = args.length

    ids, x, lens = read_units(args.corpus, args.text_field, args.unit)
    starts = np.zeros(len(lens) + 1, dtype=np.int64)
    np.cumsum(lens, out=starts[1:])
    total = int(starts[-1])

    dpos, doc_of = marked_windows(x, n, lens, starts, args.count)
    rs, re_ = covered_runs(dpos, n, total)
    del dpos
    boff, bstart = byte_offsets(x, starts, total, args.unit)
    per_doc = cut_at_documents(rs, re_, doc_of, starts, boff, bstart)
    removed = write_ranges(args.out, per_doc, ids)

    ndocs = len(per_doc)
    total_bytes = int(bstart[-1]) if boff is not None else total
    print(json.dumps({"docs": len(lens), "docs_with_ranges": ndocs, "bytes": total_bytes,
                      "bytes_removed": removed,
                      "fraction_removed": round(removed / max(1, total_bytes), 4),
                      "seconds": round(time.time() - t0, 1)}), file=sys.stderr)


if __name__ == "__main__":
    main()
