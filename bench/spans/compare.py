#!/usr/bin/env python3
"""Compare two removed-ranges files (ours from `neardup spans ... --ranges FILE`, the peer's
from peer.py, or reference.py's).

    compare.py A.jsonl B.jsonl [--corpus CORPUS.jsonl] [--names ours,peer] [--show 5]

Each file has one line per document with ranges: {"doc": index, "ranges": [[start, end], ...]}
(byte offsets into the document's UTF-8 text; other fields such as "id" are ignored, except that
differing ids for one doc index are reported). Ranges are sorted and merged first, so only the
removed bytes count, not how they are cut into ranges.

Prints the documents with any difference, the bytes removed by each side, the bytes in the
symmetric difference (and on each side only), and the first --show differing documents with
the differing text (needs --corpus; without it only offsets), then a last line that is either
`identical` or `differ: ...`. With --corpus, differing intervals are also counted by where
they sit: touching the document's start, its end, both (the whole document), or inside.
Exit status 0 whenever both files could be read.
"""

import argparse
import json
import sys


def load(path):
    docs = {}
    ids = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            d = json.loads(line)
            i = int(d["doc"])
            rs = sorted((int(a), int(b)) for a, b in d.get("ranges", []) if int(b) > int(a))
            if "id" in d:
                ids[i] = d["id"]
            if not rs:
                continue
            merged = docs.setdefault(i, [])
            for a, b in rs:
                merged.append([a, b])
            docs[i] = merge(merged)
    return docs, ids


def merge(rs):
    rs = sorted(rs)
    out = []
    for a, b in rs:
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def diff(ra, rb):
    """Maximal intervals covered by exactly one side: [(start, end, 'A' or 'B')]."""
    events = []
    for a, b in ra:
        events.append((a, 0, 1))
        events.append((b, 0, -1))
    for a, b in rb:
        events.append((a, 1, 1))
        events.append((b, 1, -1))
    events.sort()
    cov = [0, 0]
    out = []
    prev = None
    i = 0
    while i < len(events):
        pos = events[i][0]
        if prev is not None and pos > prev:
            if cov[0] != cov[1] and (cov[0] > 0) != (cov[1] > 0):
                side = "A" if cov[0] > 0 else "B"
                if out and out[-1][1] == prev and out[-1][2] == side:
                    out[-1] = (out[-1][0], pos, side)
                else:
                    out.append((prev, pos, side))
        while i < len(events) and events[i][0] == pos:
            _, s, d = events[i]
            cov[s] += d
            i += 1
        prev = pos
    return out


def size(rs):
    return sum(b - a for a, b in rs)


def show_text(t, a, b, context, width):
    def dec(x):
        return x.decode("utf-8", errors="replace").replace("\n", "⏎")
    mid = t[a:b]
    if len(mid) > width:
        half = width // 2
        mid_s = dec(mid[:half]) + f" …[{len(mid) - 2 * half} bytes]… " + dec(mid[-half:])
    else:
        mid_s = dec(mid)
    return f"{dec(t[max(0, a - context):a])}⟦{mid_s}⟧{dec(t[b:b + context])}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--corpus", help="the JSONL both were computed on (to show text)")
    ap.add_argument("--text-field", default="text")
    ap.add_argument("--names", default="A,B", help="two labels, comma-separated (default A,B)")
    ap.add_argument("--show", type=int, default=5, help="differing documents shown (default 5)")
    ap.add_argument("--context", type=int, default=40, help="bytes of context each side")
    ap.add_argument("--width", type=int, default=240, help="longest differing text shown")
    args = ap.parse_args(argv)
    na, nb = (args.names.split(",") + ["B"])[:2]

    A, ida = load(args.a)
    B, idb = load(args.b)
    docs = sorted(set(A) | set(B))
    differing = []
    sym = only_a = only_b = 0
    per_doc = {}
    for i in docs:
        ra, rb = A.get(i, []), B.get(i, [])
        if ra != rb:
            d = diff(ra, rb)
            per_doc[i] = d
            differing.append(i)
            for s, e, side in d:
                sym += e - s
                if side == "A":
                    only_a += e - s
                else:
                    only_b += e - s
    id_clash = [i for i in set(ida) & set(idb) if ida[i] != idb[i]]
    bytes_a = sum(size(r) for r in A.values())
    bytes_b = sum(size(r) for r in B.values())

    texts = {}
    lengths = {}
    if args.corpus:
        want = set(differing)
        shown = set(differing[: args.show])
        with open(args.corpus, encoding="utf-8") as f:
            for i, line in enumerate(f):
                if i in want:
                    t = json.loads(line)[args.text_field].encode("utf-8")
                    lengths[i] = len(t)
                    if i in shown:
                        texts[i] = t

    print(f"{na}: {args.a}")
    print(f"{nb}: {args.b}")
    print(f"documents with ranges: {na} {len(A)}, {nb} {len(B)}; with any difference: "
          f"{len(differing)}")
    print(f"bytes removed: {na} {bytes_a}, {nb} {bytes_b}")
    print(f"symmetric difference: {sym} bytes ({na} only {only_a}, {nb} only {only_b}) in "
          f"{sum(len(d) for d in per_doc.values())} intervals")
    if id_clash:
        print(f"WARNING: {len(id_clash)} doc indexes carry different ids (first: doc "
              f"{min(id_clash)}: {ida[min(id_clash)]!r} vs {idb[min(id_clash)]!r}); "
              "are both from the same corpus?")
    if lengths:
        cats = {}
        for i, d in per_doc.items():
            n = lengths.get(i)
            for s, e, side in d:
                where = ("whole" if s == 0 and e == n else "start" if s == 0
                         else "end" if e == n else "inside")
                key = (side, where)
                c = cats.setdefault(key, [0, 0])
                c[0] += 1
                c[1] += e - s
        print("differing intervals by place (side, place: intervals, bytes):")
        for (side, where), (cnt, nbytes) in sorted(cats.items()):
            print(f"  {na if side == 'A' else nb} only, {where:6s}: {cnt} intervals, {nbytes} bytes")
    for i in differing[: args.show]:
        ident = idb.get(i, ida.get(i))
        print(f"--- doc {i}" + (f" ({ident})" if ident is not None else "")
              + (f", {lengths[i]} bytes" if i in lengths else ""))
        print(f"  {na}: {A.get(i, [])[:12]}{' …' if len(A.get(i, [])) > 12 else ''}")
        print(f"  {nb}: {B.get(i, [])[:12]}{' …' if len(B.get(i, [])) > 12 else ''}")
        for s, e, side in per_doc[i][:8]:
            who = na if side == "A" else nb
            line = f"  only {who} [{s}, {e}) {e - s} bytes"
            if i in texts:
                line += ": " + show_text(texts[i], s, e, args.context, args.width)
            print(line)
        if len(per_doc[i]) > 8:
            print(f"  … {len(per_doc[i]) - 8} more intervals")
    if not differing:
        print("identical")
    else:
        print(f"differ: {len(differing)} documents, {sym} bytes in the symmetric difference "
              f"({na} only {only_a}, {nb} only {only_b}; removed {na} {bytes_a}, {nb} {bytes_b})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
