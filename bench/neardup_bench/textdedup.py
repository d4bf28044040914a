"""text-dedup (PyPI `text-dedup`, 0.4.1, Python 3.12+) for `quality`.

text-dedup 0.4.1 is driven by a `config.toml` in the working directory
(`python -m text_dedup.minhash`); this helper writes that file and turns its
output into a clusters file.  The timed command is text-dedup's own CLI only.

  python -m neardup_bench.textdedup prepare CORPUS.jsonl WORKDIR [--check-false-positive]
        [--threshold 0.7] [--permutations 128] [--ngram 5]
      writes WORKDIR/config.toml: local JSON input (HF `datasets` json loader),
      MinHash with text-dedup's own tokenisation (lowercase, split on \\W, n-grams of
      those tokens) and its own defaults otherwise (banding chosen by its
      optimal_param, min_length 5 tokens, xxh3 hashes, seed 42, num_proc = cores,
      check_false_positive false unless --check-false-positive); output to
      WORKDIR/out with save_clusters = true.
  python -m neardup_bench.textdedup convert CORPUS.jsonl WORKDIR CLUSTERS.jsonl INFO.json [--id-field id]
      reads WORKDIR/out/clusters.pickle ({row index: cluster} for every document
      text-dedup put into a duplicate cluster) and writes one {"id","cluster"} row per
      input document (cluster = id of the cluster's first document; documents not in
      the pickle are singletons), plus INFO.json with the number of documents in
      text-dedup's output dataset and the number it dropped before hashing because
      they have fewer than min_length tokens by its tokeniser.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys


def toml_str(s: str) -> str:
    return json.dumps(s)  # a JSON string is a valid TOML basic string


def prepare(args) -> int:
    prepare_config(args.corpus, args.workdir, args.check_false_positive, args.threshold, args.permutations, args.ngram)
    return 0


def prepare_config(corpus: str, workdir: str, check_false_positive: bool, threshold: float, permutations: int,
                   ngram: int) -> None:
    os.makedirs(workdir, exist_ok=True)
    cfg = f"""[input]
input_type = "local_files"
file_type = "json"

[input.read_arguments]
path = "json"
data_files = {toml_str(os.path.abspath(corpus))}
split = "train"

[algorithm]
algorithm_name = "minhash"
text_column = "text"
num_perm = {permutations}
threshold = {threshold}
ngram_size = {ngram}
check_false_positive = {"true" if check_false_positive else "false"}

[output]
output_dir = {toml_str(os.path.join(os.path.abspath(workdir), "out"))}
save_clusters = true

[debug]
"""
    with open(os.path.join(workdir, "config.toml"), "w") as fh:
        fh.write(cfg)


def convert(args) -> int:
    import regex  # text-dedup's own dependency, same tokeniser as its filter

    ids, texts = [], []
    with open(args.corpus, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                d = json.loads(line)
                ids.append(d.get(args.id_field) if args.id_field else len(ids) + 1)
                texts.append(d.get("text") or "")
    with open(os.path.join(args.workdir, "out", "clusters.pickle"), "rb") as fh:
        parents = pickle.load(fh)
    groups: dict = {}
    for idx, c in parents.items():
        groups.setdefault(c, []).append(int(idx))
    label = list(ids)
    for members in groups.values():
        first = ids[min(members)]
        for m in members:
            label[m] = first
    with open(args.clusters, "w", encoding="utf-8") as fh:
        for i, id_ in enumerate(ids):
            fh.write(json.dumps({"id": id_, "cluster": label[i]}, ensure_ascii=False) + "\n")

    non_alpha = regex.compile(r"\W", regex.UNICODE)
    short = sum(1 for t in texts if len([x for x in non_alpha.split(t.lower()) if x]) < 5)
    from datasets import load_from_disk

    kept = len(load_from_disk(os.path.join(args.workdir, "out")))
    import importlib.metadata as md

    info = {"tool": "text-dedup", "version": md.version("text-dedup"), "documents": len(ids),
            "output_documents": kept, "dropped_short": short,
            "in_duplicate_clusters": len(parents), "clusters_with_duplicates": len(groups)}
    with open(args.info, "w") as fh:
        json.dump(info, fh)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("corpus")
    p.add_argument("workdir")
    p.add_argument("--check-false-positive", action="store_true")
    p.add_argument("--threshold", type=float, default=0.7)
    p.add_argument("--permutations", type=int, default=128)
    p.add_argument("--ngram", type=int, default=5)
    c = sub.add_parser("convert")
    c.add_argument("corpus")
    c.add_argument("workdir")
    c.add_argument("clusters")
    c.add_argument("info")
    c.add_argument("--id-field", default="id")
    args = ap.parse_args(argv)
    return prepare(args) if args.cmd == "prepare" else convert(args)


if __name__ == "__main__":
    sys.exit(main())
