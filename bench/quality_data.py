#!/usr/bin/env python3
"""Inputs of bench/quality.sh made from /work/shared/data (stdlib only, deterministic).

  quality_data.py sohu-dc-articles DC.jsonl OUT.jsonl
      the `sentence2` article of every dc-test row as {"id": "dc<row>", "text"} (row 1-based);
      the source corpus of the zh-news synth corpus.
  quality_data.py sohu-dd-corpus DD.jsonl OUT.jsonl
      sentence1 then sentence2 of each dd-test row, as {"text"} records with no id field, so
      the ids are the record numbers 1..2N that `neardup eval --truth DD.jsonl` (Sohu
      format) expects: row i holds documents 2i-1 and 2i.
  quality_data.py clough DOCS.jsonl CORPUS.jsonl TRUTH.jsonl
      Clough & Stevenson as a clusters truth: every `cut` and `light` answer is in its
      task's cluster together with that task's `orig` text; `heavy` and `non` answers are
      singletons; category = the label.  The shared file lists each of the 5 `orig` texts
      twice under the same id; the corpus keeps the first copy (100 documents).
"""

from __future__ import annotations

import json
import sys


def rows(path):
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def dump(fh, obj):
    fh.write(json.dumps(obj, ensure_ascii=False) + "\n")


def main(argv) -> int:
    cmd = argv[0]
    if cmd == "sohu-dc-articles":
        src, out = argv[1:3]
        with open(out, "w", encoding="utf-8") as fo:
            for i, r in enumerate(rows(src), 1):
                dump(fo, {"id": f"dc{i}", "text": r["sentence2"]})
    elif cmd == "sohu-dd-corpus":
        src, out = argv[1:3]
        with open(out, "w", encoding="utf-8") as fo:
            for r in rows(src):
                dump(fo, {"text": r["sentence1"]})
                dump(fo, {"text": r["sentence2"]})
    elif cmd == "clough":
        src, corpus, truth = argv[1:4]
        seen = set()
        with open(corpus, "w", encoding="utf-8") as fc, open(truth, "w", encoding="utf-8") as ft:
            for r in rows(src):
                if r["id"] in seen:
                    continue
                seen.add(r["id"])
                cat = r["category"]
                cluster = f"task-{r['task']}" if cat in ("orig", "cut", "light") else r["id"]
                dump(fc, {"id": r["id"], "task": r["task"], "category": cat, "text": r["text"]})
                dump(ft, {"id": r["id"], "cluster": cluster, "category": cat})
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
