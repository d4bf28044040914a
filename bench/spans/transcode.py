#!/usr/bin/env python3
"""Rewrite a JSONL corpus's texts so that bytes and characters agree with ExactSubstr's unit.

    python3 bench/spans/transcode.py --to ascii IN.jsonl OUT.jsonl   # English: 1 byte a character
    python3 bench/spans/transcode.py --to wide  IN.jsonl OUT.jsonl   # Chinese: 3 bytes a character

`ascii` maps the typographic characters of the templates to ASCII (`·` to `-`, `©` to `(c)`,
...) and any other non-ASCII character to `?`; `wide` maps printable ASCII to its full-width
form (U+FF01-FF5E), the space to U+3000, the line break to U+2028 and any character not of
3 bytes to 〇. Then N characters are N (or 3N) bytes, and `neardup spans --min-length N` and
the peer's `--length-threshold` name the same windows.
"""

import argparse
import json

ASCII = {"·": "-", "›": ">", "©": "(c)", "•": "*", "–": "-", "—": "--", "’": "'", "‘": "'",
         "“": '"', "”": '"', "…": "...", "é": "e", "€": "EUR", "£": "GBP"}


def to_ascii(text):
    text = "".join(ASCII.get(c, c) for c in text)
    return "".join(c if ord(c) < 128 else "?" for c in text)


def to_wide(text):
    def wide(c):
        if 0x21 <= ord(c) <= 0x7E:
            return chr(ord(c) - 0x21 + 0xFF01)
        if c == " ":
            return "\u3000"
        if c == "\n":
            return "\u2028"
        return c if len(c.encode()) == 3 else "\u3007"
    return "".join(wide(c) for c in text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--to", choices=["ascii", "wide"], required=True)
    parser.add_argument("--text-field", default="text")
    parser.add_argument("input")
    parser.add_argument("output")
    args = parser.parse_args()
    change = to_ascii if args.to == "ascii" else to_wide
    with open(args.input, encoding="utf-8") as rows, open(args.output, "w", encoding="utf-8") as out:
        for line in rows:
            row = json.loads(line)
            row[args.text_field] = change(row[args.text_field])
            out.write(json.dumps(row, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
