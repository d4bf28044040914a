"""The benchmark corpora, all made from the shared data folder (deterministic).

Edited copies and their truth come only from `neardup synth`; this module prepares its
sources and the labelled sets:

- `zh_synth`: the Chinese corpus of `speed`. Its sources are long Chinese documents joined
  from the sentences of the Sohu pairs and the THUCNews titles (no edits here: every source is
  new text), and `neardup synth` makes the edited copies, the hard negatives and the truth.
- `sohu_dc_articles`, `sohu_dd_corpus`, `clough`: the inputs and truth of `quality`.
- `distinct_sources`, `synth`: thinning a source set of its near-duplicates, then synth.
- `sample`: the first MB megabytes of lines of a file; `flood`: the template-flood corpus.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess

from .common import log, read_jsonl, write_jsonl

# ---------------------------------------------------------------- zh (speed)

_SENT_END = re.compile(r"(?<=[。！？!?；;…])|\n+")


def load_sentences(data: str) -> list[str]:
    """Distinct sentences (at least 6 characters, a terminator added where missing) of the
    Sohu dc/dd pairs (sentence1 and sentence2) and the THUCNews titles, in file order."""
    texts: list[str] = []
    for name, keys in (
        ("sohu-news-pairs/dc-test.jsonl", ("sentence1", "sentence2")),
        ("sohu-news-pairs/dd-test.jsonl", ("sentence1", "sentence2")),
        ("thucnews-titles/titles.jsonl", ("text",)),
    ):
        for d in read_jsonl(os.path.join(data, name)):
            texts.extend(d[k] for k in keys if d.get(k))
    seen: set[str] = set()
    out: list[str] = []
    for t in texts:
        for s in _SENT_END.split(t):
            s = s.strip()
            if len(s) < 6:
                continue
            if s[-1] not in "。！？!?；;…":
                s += "。"
            if s not in seen:
                seen.add(s)
                out.append(s)
    return out


def zh_sources(data: str, path: str, size_mb: float, seed: int, chars=(600, 2000), fragments: bool = False) -> int:
    """Writes {"id": "b<N>", "text"} documents of `chars` (600-2,000) characters, each joining
    random sentences, until `path` holds `size_mb` MB (10^6 bytes); returns the number written.

    `fragments`: each document joins pieces of 6-12 characters cut at random places out of
    all the sentences joined together, instead of whole sentences, so that unrelated documents
    do not share whole sentences of a fixed pool (tens of thousands, each then in a number of
    documents that grows with the corpus): their chance of sharing an LSH band stays flat as
    the corpus grows, as in real text, and candidate pairs grow with the documents."""
    rng = random.Random(seed)
    sents = load_sentences(data)
    joined = "".join(sents)
    target = int(size_mb * 1_000_000)
    total = n = 0
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        while total < target:
            goal = rng.randint(*chars)
            chosen, length = [], 0
            while length < goal:
                if fragments:
                    size = rng.randint(6, 12)
                    start = rng.randrange(len(joined) - size)
                    s = joined[start:start + size]
                else:
                    s = sents[rng.randrange(len(sents))]
                chosen.append(s)
                length += len(s)
            line = json.dumps({"id": f"b{n}", "text": "".join(chosen)}, ensure_ascii=False) + "\n"
            fh.write(line)
            total += len(line.encode("utf-8"))
            n += 1
    os.replace(tmp, path)
    log(f"zh sources: {n:,} documents, {total / 1e6:.1f} MB from {len(sents):,} sentences")
    return n


def run_synth(neardup: str, sources: str, corpus: str, truth: str, seed: int, extra=(), log_path=None) -> None:
    cmd = [neardup, "synth", sources, "-o", corpus, "--truth", truth, "--seed", str(seed), *extra]
    with open(log_path, "w") if log_path else open(os.devnull, "w") as err:
        subprocess.run(cmd, check=True, stderr=err)


def zh_synth(neardup: str, data: str, out: str, size_mb: float, seed: int, short: bool = False) -> tuple[str, str]:
    """The Chinese corpus of `speed` and its synth truth, made once:
    out/zh_synth_{MB}mb_seed{SEED}.jsonl and .truth.jsonl.

    `neardup synth --seed SEED --id-field id` at its defaults (30% of the sources get 1-3
    copies with one or two edits of strength 0.05, 5% get a hard negative) on sources made by
    `zh_sources`. The corpus should be about `size_mb` MB: a first synth over more sources
    than needed measures MB per source, and the second one takes `--limit` sources so that
    the corpus comes out at that size. `short`: documents of 40-130 characters (about 280
    bytes a JSON line, as the 94 MB / 333k-document corpus of issue 14) instead, each joining
    fragments of the sentences (see `zh_sources`), so that unrelated documents stay unrelated at
    every size."""
    mb = f"{size_mb:g}"
    kind = "zh_pieces" if short else "zh_synth"
    corpus = os.path.join(out, f"{kind}_{mb}mb_seed{seed}.jsonl")
    truth = os.path.join(out, f"{kind}_{mb}mb_seed{seed}.truth.jsonl")
    if os.path.exists(truth) and os.path.exists(corpus) and os.path.getsize(corpus):
        return corpus, truth
    os.makedirs(out, exist_ok=True)
    sources = os.path.join(out, f"{kind}_sources_{mb}mb_seed{seed}.jsonl")
    n = zh_sources(data, sources, size_mb * 0.8, seed, (40, 130) if short else (600, 2000), fragments=short)
    log(f"neardup synth {os.path.basename(sources)} (sizing run)")
    run_synth(neardup, sources, corpus + ".tmp", truth + ".tmp", seed, ["--id-field", "id", "--quiet"])
    per_source = os.path.getsize(corpus + ".tmp") / n
    limit = max(1, min(n, int(size_mb * 1_000_000 / per_source)))
    log(f"neardup synth {os.path.basename(sources)} --limit {limit}")
    run_synth(neardup, sources, corpus + ".tmp", truth + ".tmp", seed,
              ["--id-field", "id", "--limit", str(limit)], log_path=corpus + ".synth.log")
    with open(corpus + ".synth.cmd", "w") as fh:
        fh.write(f"neardup synth {os.path.basename(sources)} --seed {seed} --id-field id --limit {limit}\n")
    os.replace(truth + ".tmp", truth)
    os.replace(corpus + ".tmp", corpus)
    log(f"wrote {os.path.basename(corpus)}: {os.path.getsize(corpus) / 1e6:.1f} MB")
    return corpus, truth


def sample(src: str, dst: str, mb: float) -> str:
    """The first `mb` MB (10^6 bytes) of whole lines of `src`, written to `dst` once."""
    if os.path.exists(dst) and os.path.getsize(dst) and os.path.getmtime(dst) >= os.path.getmtime(src):
        return dst
    cap, n = int(mb * 1e6), 0
    with open(src, "rb") as fi, open(dst + ".tmp", "wb") as fo:
        for line in fi:
            if n + len(line) > cap:
                break
            fo.write(line)
            n += len(line)
    os.replace(dst + ".tmp", dst)
    return dst


# ---------------------------------------------------------------- quality


def sohu_dc_articles(src: str, out: str) -> None:
    """The `sentence2` article of every dc-test row as {"id": "dc<row>", "text"} (row
    1-based): the source corpus of the zh-news synth corpus."""
    write_jsonl(out, ({"id": f"dc{i}", "text": r["sentence2"]} for i, r in enumerate(read_jsonl(src), 1)))


def sohu_dd_corpus(src: str, out: str) -> None:
    """sentence1 then sentence2 of each dd-test row, as {"text"} records with no id field, so
    the ids are the record numbers 1..2N that `neardup eval --truth DD.jsonl` (Sohu format)
    expects: row i holds documents 2i-1 and 2i."""
    def rows():
        for r in read_jsonl(src):
            yield {"text": r["sentence1"]}
            yield {"text": r["sentence2"]}

    write_jsonl(out, rows())


def clough(src: str, corpus: str, truth: str) -> None:
    """Clough & Stevenson as a clusters truth: every `cut` and `light` answer is in its task's
    cluster together with that task's `orig` text; `heavy` and `non` answers are singletons;
    category = the label. The shared file lists each of the 5 `orig` texts twice under the
    same id; the corpus keeps the first copy (100 documents)."""
    seen = set()
    docs, labels = [], []
    for r in read_jsonl(src):
        if r["id"] in seen:
            continue
        seen.add(r["id"])
        cat = r["category"]
        cluster = f"task-{r['task']}" if cat in ("orig", "cut", "light") else r["id"]
        docs.append({"id": r["id"], "task": r["task"], "category": cat, "text": r["text"]})
        labels.append({"id": r["id"], "cluster": cluster, "category": cat})
    write_jsonl(corpus, docs)
    write_jsonl(truth, labels)


def distinct_sources(neardup: str, cdir: str, src: str, limit: int) -> tuple[int, int]:
    """cdir/sources.jsonl: the first `limit` records of `src`, thinned of near-duplicates.

    Synth assumes its sources are distinct, and real corpora are not (Reuters repeats its
    stories with small updates; headlines repeat). A source set with near-duplicates makes the
    truth call true duplicates false positives, so the records are clustered by neardup with a
    deliberately loose rule (character 4-grams, Jaccard >= 0.3, union-find) and only the
    first record of each cluster is kept. The rule is far below any threshold scored here, so
    a pair of kept sources that a tool still merges is a real mistake. The candidate budget is
    lifted (`--candidate-budget 1000000000`): this loose rule gives each headline dozens of
    candidates, and the default budget (32 a document, made for template floods) would cut
    some and keep near-duplicate sources (en-news: 4,489 sources instead of 4,195)."""
    os.makedirs(cdir, exist_ok=True)
    head = os.path.join(cdir, "sources-all.jsonl")
    n_all = 0
    with open(src, "rb") as fi, open(head, "wb") as fo:
        for line in fi:
            if n_all >= limit:
                break
            fo.write(line)
            n_all += 1
    out = os.path.join(cdir, "sources.jsonl")
    subprocess.run([neardup, "dedup", head, "-o", out, "--id-field", "id", "-q", "--tokenizer", "char",
                    "--ngram", "4", "--threshold", "0.3", "--cluster", "connected", "--candidate-budget", "1000000000",
                    "--stats", os.path.join(cdir, "sources.stats.json")], check=True)
    with open(out, "rb") as fh:
        kept = sum(1 for _ in fh)
    with open(os.path.join(cdir, "sources.count"), "w") as fh:
        fh.write(f"{n_all} {kept}\n")
    log(f"distinct sources {os.path.basename(cdir)}: {n_all} records, {kept} kept")
    return n_all, kept


def synth(neardup: str, cdir: str, sources: str, seed: int, *extra: str) -> None:
    """cdir/corpus.jsonl and cdir/truth.jsonl by `neardup synth` (its summary in synth.log)."""
    log(f"synth {os.path.basename(cdir)} (seed {seed})")
    run_synth(neardup, sources, os.path.join(cdir, "corpus.jsonl"), os.path.join(cdir, "truth.jsonl"), seed,
              extra, log_path=os.path.join(cdir, "synth.log"))
    with open(os.path.join(cdir, "synth.cmd"), "w") as fh:
        fh.write(f"neardup synth {os.path.basename(sources)} --seed {seed} {' '.join(extra)}".rstrip() + "\n")


# ---------------------------------------------------------------- flood


def flood(out: str, n: int) -> str:
    """out/flood_N.jsonl: {"id": i, "text": "document number {i} about topic {i % 1000} with
    words"} for i in 0..N, the shape of verification codes and notices (made once)."""
    path = os.path.join(out, f"flood_{n}.jsonl")
    if not (os.path.exists(path) and os.path.getsize(path)):
        log(f"generating {os.path.basename(path)}")
        os.makedirs(out, exist_ok=True)
        with open(path + ".tmp", "w") as fh:
            for i in range(n):
                fh.write(f'{{"id": {i}, "text": "document number {i} about topic {i % 1000} with words"}}\n')
        os.replace(path + ".tmp", path)
    return path
