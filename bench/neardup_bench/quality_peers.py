"""Cluster a JSONL corpus with a Python near-duplicate library; write a clusters file (the
timed child process of `quality`).

usage: python -m neardup_bench.quality_peers CORPUS.jsonl --tool datasketch|rensa|gaoya|simhash
                        --clusters CLUSTERS.jsonl [--id-field id] [--text-field text]
                        [--threshold 0.7] [--permutations 128] [--ngram 5] [--simhash-k 3]

Output: one row per input document, in input order, {"id": ..., "cluster": ...}
(the same shape as `neardup dedup --clusters`, so `neardup eval` scores every
tool identically).  The id is the record's --id-field value as it is in the
JSON (string or number), or the 1-based record number when --id-field is "" (the
way neardup numbers records without an id field).  The cluster of a document is
the id of the first document (by input order) of its connected component.

How each library is used (the usual way, as its documentation shows it):
  datasketch  MinHash(128 perms, seed 1) of the shingles; MinHashLSH(threshold 0.7)
              with datasketch's own banding (14 x 9); every document is queried
              and union-find joins it with every LSH result.  No verification.
  rensa       RMinHash(128, seed 1) of the shingles; RMinHashLSH(0.7, 128, 16 bands):
              rensa needs num_perm % bands == 0, 16 x 8 is the divisible split whose
              S-curve midpoint is nearest 0.7 (as in peers.py).  Union-find over
              query results.  No verification.
  gaoya       MinHashStringIndex(hash_size 32, jaccard_threshold 0.7, num_hashes 128):
              gaoya picks its own banding (32 x 4 at 0.7) and its query keeps only
              results whose signature-estimated Jaccard is >= the threshold.  The
              shingles are passed as the token list (analyzer = callable), inserted
              and queried with gaoya's parallel bulk calls.  Union-find over results.
  simhash     The PyPI `simhash` package: Simhash(text) with its default features
              (lowercased word characters, 4-character sliding windows, 64 bits);
              SimhashIndex(objs, k=3); every document is queried with
              get_near_dups and union-find joins the results.
datasketch, rensa and gaoya see the shingles of shingles.py (neardup's normalisation and
`--tokenizer token` 5-token shingles, or with --shingles auto its `auto` character
shingles; both checked against the binary by bench/tests/test_shingles.py); simhash
tokenises itself.
A document without shingles is never inserted (it stays a singleton).
"""

from __future__ import annotations

import argparse
import json
import sys

from neardup_bench import shingles as sh  # noqa: E402


class UnionFind:
    def __init__(self, n: int):
        self.p = list(range(n))

    def find(self, x: int) -> int:
        p = self.p
        while p[x] != x:
            p[x] = p[p[x]]
            x = p[x]
        return x

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            # the smaller index becomes the root, so a cluster is named by its first document
            if ra < rb:
                self.p[rb] = ra
            else:
                self.p[ra] = rb


def read_corpus(path: str, text_field: str, id_field: str):
    ids, texts = [], []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            d = json.loads(line)
            ids.append(d.get(id_field) if id_field else len(ids) + 1)
            texts.append(d.get(text_field) or "")
    return ids, texts


def shingle(text, args):
    if args.shingles == "auto":
        return sh.auto_shingles(text, args.ngram)
    return sh.shingles(text, args.ngram)


def run_datasketch(texts, args, uf):
    from datasketch import MinHash, MinHashLSH

    lsh = MinHashLSH(threshold=args.threshold, num_perm=args.permutations)
    template = MinHash(num_perm=args.permutations, seed=1)
    sigs = []
    for i, t in enumerate(texts):
        shs = shingle(t, args)
        if not shs:
            continue
        m = template.copy()
        m.update_batch([s.encode("utf-8") for s in shs])
        sigs.append((i, m))
    with lsh.insertion_session() as session:
        for i, m in sigs:
            session.insert(i, m, check_duplication=False)
    for i, m in sigs:
        for j in lsh.query(m):
            if j != i:
                uf.union(i, j)
    return {"bands": lsh.b, "rows": lsh.r}


def run_rensa(texts, args, uf):
    import rensa

    bands = 16
    lsh = rensa.RMinHashLSH(args.threshold, args.permutations, bands)
    sigs = []
    for i, t in enumerate(texts):
        shs = shingle(t, args)
        if not shs:
            continue
        m = rensa.RMinHash(args.permutations, 1)
        m.update(list(shs))
        sigs.append((i, m))
    for i, m in sigs:
        lsh.insert(i, m)
    for i, m in sigs:
        for j in lsh.query(m):
            if j != i:
                uf.union(i, j)
    return {"bands": bands, "rows": args.permutations // bands}


def run_gaoya(texts, args, uf):
    import gaoya

    index = gaoya.minhash.MinHashStringIndex(
        hash_size=32, jaccard_threshold=args.threshold, num_bands=None, band_size=None,
        num_hashes=args.permutations, analyzer=lambda toks: toks,
    )
    ids, toks = [], []
    for i, t in enumerate(texts):
        shs = shingle(t, args)
        if shs:
            ids.append(i)
            toks.append(sorted(shs))
    index.par_bulk_insert_docs(ids, toks)
    results = index.par_bulk_query(toks)
    for i, res in zip(ids, results):
        for j in res:
            if j != i:
                uf.union(i, j)
    return {"index": str(index.minhash_index).split("}")[0] + "}"}


def run_simhash(texts, args, uf):
    import logging

    from simhash import Simhash, SimhashIndex

    logging.getLogger().setLevel(logging.ERROR)  # SimhashIndex warns about big buckets
    objs = [(str(i), Simhash(t)) for i, t in enumerate(texts)]
    index = SimhashIndex(objs, k=args.simhash_k)
    for i, (_, s) in enumerate(objs):
        for j in index.get_near_dups(s):
            j = int(j)
            if j != i:
                uf.union(i, j)
    return {"f": 64, "k": args.simhash_k}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus")
    ap.add_argument("--tool", choices=["datasketch", "rensa", "gaoya", "simhash"], required=True)
    ap.add_argument("--clusters", required=True)
    ap.add_argument("--id-field", default="id", help='"" = 1-based record numbers')
    ap.add_argument("--text-field", default="text")
    ap.add_argument("--threshold", type=float, default=0.7)
    ap.add_argument("--permutations", type=int, default=128)
    ap.add_argument("--ngram", type=int, default=5)
    ap.add_argument("--shingles", choices=["token", "auto"], default="token",
                    help="token: n-token shingles (shingles.py); auto: neardup's default "
                         "character shingles (--ngram on CJK, --ngram + 2 elsewhere)")
    ap.add_argument("--simhash-k", type=int, default=3)
    ap.add_argument("--info", help="write the tool's parameters here (JSON)")
    args = ap.parse_args(argv)

    ids, texts = read_corpus(args.corpus, args.text_field, args.id_field)
    uf = UnionFind(len(texts))
    runner = {"datasketch": run_datasketch, "rensa": run_rensa, "gaoya": run_gaoya, "simhash": run_simhash}[args.tool]
    info = runner(texts, args, uf)
    with open(args.clusters, "w", encoding="utf-8") as fh:
        for i, id_ in enumerate(ids):
            fh.write(json.dumps({"id": id_, "cluster": ids[uf.find(i)]}, ensure_ascii=False) + "\n")
    if args.info:
        with open(args.info, "w") as fh:
            json.dump({"tool": args.tool, "documents": len(texts), **info}, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
