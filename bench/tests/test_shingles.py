"""The Python shingles of the peers (neardup_bench/shingles.py) against the neardup binary.

The peers and the truth of `speed` and `quality` shingle in Python, so the Python tokeniser
must give the sets neardup gives. neardup has no command that prints shingles, but its
`--pairs` file holds the exact Jaccard of every verified pair on its own shingle sets. So a
small corpus (a few hundred records of ../shared/data and some hard Unicode, with edited copies
by `neardup synth`) is deduplicated with LSH set to 128 bands of 1 row (every pair sharing one
of 128 minimum hashes is a candidate) and a low threshold, and then:

- every pair neardup reports has the Jaccard that the Python shingles give (to 1e-9);
- every pair whose Python Jaccard is at least 0.5 is reported by neardup (a pair at 0.5 misses
  all 128 rows with probability 0.5^128).

Both for `--tokenizer token --ngram 5` (shingles.shingles, the peers' settings) and for
`--tokenizer auto --ngram 3` (shingles.auto_shingles, the `-auto` rows of `quality`), with
`--chinese-variant keep` (the Python side does not convert traditional Chinese).

The binary: $NEARDUP_BIN or target/release/neardup (no build). The data: $NEARDUP_DATA or
../shared/data beside the repository. Run with `bench/run selftest` or
`python -m unittest discover bench/tests` (with bench/ on PYTHONPATH).
"""

from __future__ import annotations

import itertools
import os
import subprocess
import tempfile
import unittest

from neardup_bench import shingles as sh
from neardup_bench.common import ROOT, read_jsonl, write_jsonl

HARD = [
    "Hello, World! 你好世界。ＡＢＣ１２３ abc_def",
    "東京タワーは、ひらがなカタカナ한국어テスト① ½ x²",
    "Ünïcödé ǅ straße ΣΑΣ — 〇〇七 ・ ｶﾀｶﾅ",
    "   ...  ",
    "one two",
    "ＦＵＬＬ－ＷＩＤＴＨ　ｔｅｘｔ，全角标点：“引号”！ and half-width text, 半角。",
    "Mixed 中文 and English words in one sentence about 机器学习 and deep learning models today.",
    "数字123和字母abc混在一起的句子456，还有Ⅻ罗马数字与①圈数字。",
    "Straße STRASSE İstanbul ǈ ﬁnance ﬀ café naïve coöperate",
    "한국어 문장은 띄어쓰기가 있습니다 그리고 조금 더 긴 문장을 만듭니다",
]


def binary() -> str:
    b = os.environ.get("NEARDUP_BIN") or os.path.join(
        os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target"), "release", "neardup")
    if not os.access(b, os.X_OK):
        raise unittest.SkipTest(f"no neardup binary at {b} (set NEARDUP_BIN)")
    return b


def data_dir() -> str:
    d = os.environ.get("NEARDUP_DATA") or os.path.join(ROOT, "..", "shared", "data")
    if not os.path.isdir(d):
        raise unittest.SkipTest(f"no shared data at {d} (set NEARDUP_DATA)")
    return d


def sources(data: str) -> list[dict]:
    """A few hundred records: Reuters, THUCNews, Sohu, Clough, and the hard strings."""
    out = []

    def take(path, n, fields):
        for i, r in enumerate(itertools.islice(read_jsonl(os.path.join(data, path)), n)):
            for f in fields:
                if r.get(f):
                    out.append({"id": f"{path}-{i}-{f}", "text": r[f]})

    take("reuters21578/bodies.jsonl", 80, ["text"])
    take("thucnews-titles/titles.jsonl", 120, ["text"])
    take("sohu-news-pairs/dd-test.jsonl", 40, ["sentence1", "sentence2"])
    take("sohu-news-pairs/dc-test.jsonl", 10, ["sentence2"])
    take("clough-stevenson-plagiarism/docs.jsonl", 30, ["text"])
    out.extend({"id": f"hard-{i}", "text": t} for i, t in enumerate(HARD))
    return out


class TokenizerSpec(unittest.TestCase):
    def test_regex_tokens_match_the_literal_spec(self):
        for s in HARD + ["", "中文字符号测"]:
            self.assertEqual(sh.tokens(s), sh._slow_tokens(s), s)

    def test_small_cases(self):
        self.assertEqual(sh.shingles("one two"), {"one two"})
        self.assertEqual(sh.shingles("..."), set())
        self.assertEqual(sh.shingles("a b c d e f"), {"a b c d e", "b c d e f"})
        self.assertEqual(sh.shingles("中文字符号测"), {"中 文 字 符 号", "文 字 符 号 测"})


class AgainstBinary(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.bin = binary()
        cls.tmp = tempfile.TemporaryDirectory(prefix="neardup-bench-test-")
        src = os.path.join(cls.tmp.name, "sources.jsonl")
        write_jsonl(src, sources(data_dir()))
        cls.corpus = os.path.join(cls.tmp.name, "corpus.jsonl")
        subprocess.run([cls.bin, "synth", src, "-o", cls.corpus, "--truth", os.path.join(cls.tmp.name, "truth.jsonl"),
                        "--id-field", "id", "--seed", "7", "--quiet"], check=True)
        cls.docs = {str(d["id"]): d.get("text") or "" for d in read_jsonl(cls.corpus)}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def neardup_pairs(self, *args) -> dict:
        pairs = os.path.join(self.tmp.name, "pairs.jsonl")
        subprocess.run([self.bin, "dedup", self.corpus, "-o", os.path.join(self.tmp.name, "kept.jsonl"),
                        "--pairs", pairs, "--id-field", "id", "--quiet", "--chinese-variant", "keep",
                        "--bands", "128", "--rows", "1", "--permutations", "128", "--threshold", "0.3",
                        "--cluster", "connected", "--candidate-budget", "1000000", "--bucket-cap", "1000000",
                        # The whole texts' shingles, as Python sees them: no boilerplate handling.
                        "--max-df", "off", "--boilerplate-df", "off",
                        *args], check=True)
        out = {}
        for r in read_jsonl(pairs):
            a, b = str(r["a"]), str(r["b"])
            out[(a, b) if a < b else (b, a)] = r["similarity"]
        return out

    def check(self, shingle, *args):
        got = self.neardup_pairs(*args)
        sets = {i: shingle(t) for i, t in self.docs.items()}
        self.assertGreater(len(got), 100, "too few pairs to check anything")
        wrong = [(a, b, s, sh.jaccard(sets[a], sets[b])) for (a, b), s in got.items()
                 if abs(s - sh.jaccard(sets[a], sets[b])) > 1e-9]
        self.assertEqual(wrong[:5], [], f"{len(wrong)} of {len(got)} pairs: neardup's Jaccard differs from Python's")
        ids = sorted(i for i in sets if sets[i])
        missed = [(a, b, sh.jaccard(sets[a], sets[b])) for a, b in itertools.combinations(ids, 2)
                  if (a, b) not in got and sh.jaccard(sets[a], sets[b]) >= 0.5]
        self.assertEqual(missed[:5], [], f"{len(missed)} pairs with Python Jaccard >= 0.5 that neardup does not report")

    def test_token_shingles(self):
        self.check(lambda t: sh.shingles(t, 5), "--tokenizer", "token", "--ngram", "5")

    def test_auto_shingles(self):
        self.check(lambda t: sh.auto_shingles(t, 3), "--tokenizer", "auto", "--ngram", "3")


if __name__ == "__main__":
    unittest.main()
