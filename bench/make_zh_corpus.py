#!/usr/bin/env python3
"""Deterministic generator of a synthetic Chinese near-duplicate corpus.

Built only from text in /work/shared/data:
  sohu-news-pairs/dc-test.jsonl (sentence1 + the ~1,000-char articles in sentence2),
  sohu-news-pairs/dd-test.jsonl (sentence1, sentence2),
  thucnews-titles/titles.jsonl (text).
All texts are split into sentences (after 。！？!?；; … and line breaks; a title
without a terminator is one sentence).  Base documents concatenate random
sentences until a random target length of 600-2000 characters is reached.
About 30% of base documents get 1-3 near-duplicate variants, each with one or
two synthetic edits:

  punct      punctuation swaps (，<->, 。<->. ...) and full-width/half-width
             changes of ASCII letters/digits
  char_sub   character substitution at a rate of 2-8%
  char_ins   character insertion at a rate of 2-8%
  char_del   character deletion at a rate of 2-8%
  boiler     appended boilerplate ("转发自…", ad lines) and/or a prefix line
  trunc      truncation of the end by 1-15%
  swap       swap of two sentences (1-2 swaps)

Output: JSONL, one object per line:
  {"id": "f0000123-0", "text": ..., "family": "f0000123", "edit": "base"}
  variants have ids "<family>-<k>" (k >= 1) and edit like "char_sub:0.050" or
  "trunc:0.112+boiler".  Lines are shuffled (seeded) so variants are not next
  to their base.  Generation stops when the file reaches --size-mb megabytes
  (10^6 bytes) of UTF-8.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys

DATA = os.environ.get("NEARDUP_DATA", "/work/shared/data")

_SENT_END = re.compile(r"(?<=[。！？!?；;…])|\n+")

# Characters used for random substitution/insertion: the most frequent
# characters of the source text (computed at run time, deterministic).
_BOILERPLATE = [
    "转发自新浪新闻客户端",
    "转发自搜狐新闻，原文链接请见评论区",
    "（本文来源：网络，如有侵权请联系删除）",
    "【广告】扫码关注公众号，每日新闻早知道！",
    "点击下方“阅读原文”下载APP，领取新人红包。",
    "责任编辑：王小明 ",
    "免责声明：本文仅代表作者观点，不代表本站立场。",
    "更多精彩内容，请关注我们的微博和微信公众号。",
    "—— 转发自 今日头条 ——",
    "广告：限时优惠，全场五折起，详情请咨询客服热线400-123-4567。",
]
_PREFIXES = [
    "原标题：",
    "【快讯】",
    "本报讯 ",
    "（记者 李华）",
]
_PUNCT_SWAP = {
    "，": ",",
    "。": ".",
    "！": "!",
    "？": "?",
    "：": ":",
    "；": ";",
    "（": "(",
    "）": ")",
    "“": '"',
    "”": '"',
    "、": ",",
    ",": "，",
    ".": "。",
    "!": "！",
    "?": "？",
    ":": "：",
}


def load_sentences() -> list[str]:
    texts: list[str] = []
    for name, keys in (
        ("sohu-news-pairs/dc-test.jsonl", ("sentence1", "sentence2")),
        ("sohu-news-pairs/dd-test.jsonl", ("sentence1", "sentence2")),
        ("thucnews-titles/titles.jsonl", ("text",)),
    ):
        with open(os.path.join(DATA, name), encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    continue
                d = json.loads(line)
                for k in keys:
                    if d.get(k):
                        texts.append(d[k])
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


def char_pool(sentences: list[str], k: int = 3000) -> list[str]:
    counts: dict[str, int] = {}
    for s in sentences:
        for c in s:
            if "\u4e00" <= c <= "\u9fff":
                counts[c] = counts.get(c, 0) + 1
    return [c for c, _ in sorted(counts.items(), key=lambda x: (-x[1], x[0]))[:k]]


def fw_hw(c: str, rng: random.Random) -> str:
    o = ord(c)
    if 0x21 <= o <= 0x7E and c.isalnum():
        return chr(o + 0xFEE0)  # ASCII -> full-width
    if 0xFF01 <= o <= 0xFF5E:
        return chr(o - 0xFEE0)  # full-width -> ASCII
    return c


def edit_punct(text: str, rng: random.Random) -> tuple[str, str]:
    p_swap = rng.uniform(0.3, 1.0)
    p_width = rng.uniform(0.3, 1.0)
    out = []
    for c in text:
        if c in _PUNCT_SWAP and rng.random() < p_swap:
            out.append(_PUNCT_SWAP[c])
        elif rng.random() < p_width:
            out.append(fw_hw(c, rng))
        else:
            out.append(c)
    # occasionally drop or add spaces / extra punctuation
    s = "".join(out)
    if rng.random() < 0.5:
        s = s.replace("，", "， ").replace(",", ", ")
    return s, "punct"


def edit_chars(text: str, rng: random.Random, kind: str, pool: list[str]) -> tuple[str, str]:
    rate = rng.uniform(0.02, 0.08)
    out = []
    for c in text:
        if rng.random() < rate:
            if kind == "char_sub":
                out.append(rng.choice(pool))
            elif kind == "char_ins":
                out.append(c)
                out.append(rng.choice(pool))
            # char_del: drop c
        else:
            out.append(c)
    return "".join(out), f"{kind}:{rate:.3f}"


def edit_boiler(text: str, rng: random.Random) -> tuple[str, str]:
    lines = rng.sample(_BOILERPLATE, rng.randint(1, 3))
    s = text + "\n" + "\n".join(lines)
    if rng.random() < 0.3:
        s = rng.choice(_PREFIXES) + s
    return s, "boiler"


def edit_trunc(text: str, rng: random.Random) -> tuple[str, str]:
    frac = rng.uniform(0.01, 0.15)
    keep = max(1, int(round(len(text) * (1 - frac))))
    return text[:keep], f"trunc:{frac:.3f}"


def edit_swap(sents: list[str], rng: random.Random) -> tuple[list[str], str]:
    sents = list(sents)
    n = rng.randint(1, 2)
    for _ in range(n):
        if len(sents) < 2:
            break
        i, j = rng.sample(range(len(sents)), 2)
        sents[i], sents[j] = sents[j], sents[i]
    return sents, f"swap:{n}"


EDITS = ["punct", "char_sub", "char_ins", "char_del", "boiler", "trunc", "swap"]


def make_variant(sents: list[str], rng: random.Random, pool: list[str]) -> tuple[str, str]:
    kinds = [rng.choice(EDITS)]
    if rng.random() < 0.25:
        second = rng.choice(EDITS)
        if second != kinds[0]:
            kinds.append(second)
    # sentence swap must come first (works on the sentence list)
    kinds.sort(key=lambda k: k != "swap")
    labels = []
    text = None
    for k in kinds:
        if k == "swap":
            sw, lab = edit_swap(sents, rng)
            text = "".join(sw)
        else:
            if text is None:
                text = "".join(sents)
            if k == "punct":
                text, lab = edit_punct(text, rng)
            elif k.startswith("char_"):
                text, lab = edit_chars(text, rng, k, pool)
            elif k == "boiler":
                text, lab = edit_boiler(text, rng)
            else:
                text, lab = edit_trunc(text, rng)
        labels.append(lab)
    return text, "+".join(labels)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=float, default=100.0, help="output size in MB (10^6 bytes), default 100")
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--out", required=True)
    ap.add_argument("--dup-fraction", type=float, default=0.30, help="fraction of base docs that get variants")
    args = ap.parse_args(argv)

    rng = random.Random(args.seed)
    sents = load_sentences()
    pool = char_pool(sents)
    target = int(args.size_mb * 1_000_000)
    docs: list[str] = []
    total = 0
    fam = 0
    n_variants = 0
    while total < target:
        fam_id = f"f{fam:07d}"
        goal = rng.randint(600, 2000)
        chosen: list[str] = []
        length = 0
        while length < goal:
            s = sents[rng.randrange(len(sents))]
            chosen.append(s)
            length += len(s)
        base = "".join(chosen)
        members = [(base, "base")]
        if rng.random() < args.dup_fraction:
            for _ in range(rng.randint(1, 3)):
                members.append(make_variant(chosen, rng, pool))
        for k, (text, edit) in enumerate(members):
            line = json.dumps(
                {"id": f"{fam_id}-{k}", "text": text, "family": fam_id, "edit": edit},
                ensure_ascii=False,
            )
            docs.append(line)
            total += len(line.encode("utf-8")) + 1
        n_variants += len(members) - 1
        fam += 1
    rng.shuffle(docs)
    tmp = args.out + ".tmp"
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(tmp, "w", encoding="utf-8") as fh:
        for line in docs:
            fh.write(line)
            fh.write("\n")
    os.replace(tmp, args.out)
    print(
        f"wrote {args.out}: {len(docs)} docs, {fam} families, {n_variants} variants, "
        f"{total / 1e6:.1f} MB, {len(sents)} source sentences",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
