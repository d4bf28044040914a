"""The shingles of `neardup --tokenizer token` and `--tokenizer auto` in Python (stdlib only),
for the Python peers and the exact truth; bench/tests/test_shingles.py checks them against
the binary's own (through the exact Jaccard it reports for every verified pair).

Normalisation: unicodedata NFKC -> str.lower() -> every character that is
not alphanumeric (str.isalnum() is False) becomes a space -> whitespace runs
collapse.  Tokens: each CJK character (Han, Hiragana, Katakana, Hangul) is one
token; each maximal run of other alphanumeric characters is one token (a word).
Shingles: every n consecutive tokens joined by a single space.  A document with
1 <= tokens < n has exactly one shingle (all its tokens joined); a document
with no tokens has no shingles (it is never a duplicate).

Used by peers.py, quality_peers.py (datasketch, rensa, gaoya) and truth.py so that every
tool and the ground truth see the same sets. Known difference, outside the benchmark
corpora: Python's str.isalnum() is false for combining marks (Thai and Indic vowel signs)
that Rust's char::is_alphanumeric() accepts.
"""

from __future__ import annotations

import json
import re
import unicodedata

# The script ranges of neardup's `is_cjk` (crates/neardup-core/src/tokenize.rs): Han, kana,
# Bopomofo, Hangul, Thai, Lao, Myanmar, Khmer. Only characters that are also alphanumeric
# can become tokens (non-alphanumerics were turned into spaces), which the look-ahead below
# enforces. bench/tests/test_shingles.py checks the shingles against the binary.
_CJK_RANGES = (
    "\u0e00-\u0eff"  # Thai, Lao
    "\u1000-\u109f"  # Myanmar
    "\u1100-\u11ff"  # Hangul Jamo
    "\u1780-\u17ff"  # Khmer
    "\u2e80-\u2fdf"  # CJK radicals / Kangxi radicals (symbols, never alnum)
    "\u3005-\u3007\u3021-\u3029"  # Han ideographic marks / numbers
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3100-\u312f"  # Bopomofo
    "\u3130-\u318f"  # Hangul compatibility jamo
    "\u31a0-\u31ff"  # Bopomofo extended, CJK strokes, Katakana phonetic extensions
    "\u3400-\u4dbf"  # CJK ext A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\U00020000-\U0003ffff"  # CJK ext B.., compatibility supplement
)
# [^\W_] == "str.isalnum()" in Python's Unicode regex semantics (\w is
# isalnum() plus the underscore).
_TOKEN_RE = re.compile(
    "(?:(?=[^\\W_])[" + _CJK_RANGES + "])" + "|[^\\W_" + _CJK_RANGES + "]+"
)


def tokens(text: str) -> list[str]:
    """Tokens of ``text`` after NFKC + lowercase normalisation."""
    return _TOKEN_RE.findall(unicodedata.normalize("NFKC", text).lower())


def shingles(text: str, n: int = 5) -> set[str]:
    """Set of n-token shingles of ``text`` (see module docstring)."""
    toks = tokens(text)
    k = len(toks)
    if k == 0:
        return set()
    if k < n:
        return {" ".join(toks)}
    return {" ".join(toks[i : i + n]) for i in range(k - n + 1)}


_CJK_CHAR = re.compile("[" + _CJK_RANGES + "]")


def auto_shingles(text: str, n: int = 3, latin_n: int | None = None) -> set[str]:
    """neardup's `auto` shingles: character n-grams sized by script.

    After the same normalisation (NFKC, lowercase, non-alphanumerics dropped),
    the text is cut into maximal runs of CJK characters and of other characters
    (spaces ignored); a CJK run gives its n-character windows, another run its
    latin_n-character windows (default n + 2); a run shorter than its size gives
    one shingle of the whole run. neardup also converts traditional Chinese to
    simplified, which this does not.
    """
    latin_n = n + 2 if latin_n is None else latin_n
    chars = [c for c in unicodedata.normalize("NFKC", text).lower() if c.isalnum()]
    out: set[str] = set()
    i = 0
    while i < len(chars):
        cjk = bool(_CJK_CHAR.match(chars[i]))
        j = i
        while j < len(chars) and bool(_CJK_CHAR.match(chars[j])) == cjk:
            j += 1
        run = "".join(chars[i:j])
        k = n if cjk else latin_n
        if len(run) <= k:
            out.add(("c:" if cjk else "l:") + run)
        else:
            out.update(("c:" if cjk else "l:") + run[x : x + k] for x in range(len(run) - k + 1))
        i = j
    return out


def _slow_tokens(text: str) -> list[str]:
    """Reference implementation written straight from the spec (for tests)."""
    norm = unicodedata.normalize("NFKC", text).lower()
    norm = "".join(c if c.isalnum() else " " for c in norm)
    norm = " ".join(norm.split())
    cjk = re.compile("[" + _CJK_RANGES + "]")
    out: list[str] = []
    for word in norm.split(" "):
        run = ""
        for c in word:
            if cjk.match(c):
                if run:
                    out.append(run)
                    run = ""
                out.append(c)
            else:
                run += c
        if run:
            out.append(run)
    return [t for t in out if t]


def read_jsonl(path: str, text_field: str = "text", id_field: str = "id"):
    """Yield (id, text) for each line of a JSONL file (ids as strings)."""
    with open(path, "r", encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            d = json.loads(line)
            yield str(d.get(id_field)), d.get(text_field) or ""


def jaccard(a: set, b: set) -> float:
    if not a or not b:
        return 0.0
    inter = len(a & b) if len(a) <= len(b) else len(b & a)
    return inter / (len(a) + len(b) - inter)
