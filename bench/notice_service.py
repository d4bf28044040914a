#!/usr/bin/env python3
"""A notice flood fed to `neardup serve` in order, one collection per settings: false
duplicates (the first arrival of a notice answered as a duplicate, of another notice
necessarily), as a share of the new notices, and missed copies (a copy stored although its
notice was stored before), as a share of the copies.

usage: bench/notice_service.py BIN FLOOD.jsonl TRUTH.jsonl SETTINGS_JSON...
  (FLOOD and TRUTH from `neardup synth-notices -o FLOOD --truth TRUTH`)
  NOTICE_TEMPLATES=TT.jsonl (`--template-truth TT`): also the false duplicates and missed
  copies by template, and where in the flood the false duplicates came (by 1,000 documents).
  NOTICE_KEEP=DIR: the service's answers are kept there (c0.answers.jsonl, ...).
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    binary, flood, truth_path = sys.argv[1:4]
    notice = {r["id"]: r["cluster"] for r in map(json.loads, open(truth_path, encoding="utf-8"))}
    ids = [json.loads(line)["id"] for line in open(flood, encoding="utf-8")]
    template = {}
    if os.environ.get("NOTICE_TEMPLATES"):
        template = {r["id"]: r["cluster"] for r in map(json.loads, open(os.environ["NOTICE_TEMPLATES"], encoding="utf-8"))}
    with tempfile.TemporaryDirectory() as data:
        port = free_port()
        server = subprocess.Popen([binary, "serve", "--data-dir", data, "--listen", f"127.0.0.1:{port}"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(100):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    time.sleep(0.1)
            url = f"http://127.0.0.1:{port}"
            for n, settings in enumerate(sys.argv[4:]):
                name = f"c{n}"
                subprocess.run([binary, "client", "--url", url, "create", name, "--settings", settings],
                               check=True, stdout=subprocess.DEVNULL)
                answers = os.path.join(os.environ.get("NOTICE_KEEP", data), f"{name}.answers.jsonl")
                subprocess.run([binary, "client", "--url", url, "load", name, flood, "--id-field", "id",
                                "--batch", "1", "--concurrency", "1", "--answers", answers],
                               check=True, stdout=subprocess.DEVNULL)
                # The notices seen, and those stored: a copy stored while its notice is
                # stored is missed; an answer naming another notice is a false duplicate.
                seen, stored, false_dups, missed = set(), set(), 0, 0
                by_template, by_position = {}, {}
                for n, (document, answer) in enumerate(zip(ids, map(json.loads, open(answers, encoding="utf-8")))):
                    first = notice[document] not in seen
                    seen.add(notice[document])
                    counts = by_template.setdefault(template.get(document, "-"), [0, 0])
                    if answer.get("stored"):
                        missed += notice[document] in stored
                        counts[1] += notice[document] in stored
                        stored.add(notice[document])
                    else:
                        false_dups += first
                        counts[0] += first
                        if first:
                            by_position[n // 1000] = by_position.get(n // 1000, 0) + 1
                new, copies = len(seen), len(ids) - len(seen)
                print(f"{settings:45} new notices {new}, answered duplicates: {false_dups} ({false_dups / new:.1%}); "
                      f"copies {copies}, stored: {missed} ({missed / max(copies, 1):.1%})", flush=True)
                if template:
                    print("  by template (false duplicates, copies stored):",
                          ", ".join(f"{t} {f}/{m}" for t, (f, m) in sorted(by_template.items())))
                    print("  false duplicates by thousand documents:",
                          ", ".join(f"{k}k {v}" for k, v in sorted(by_position.items())), flush=True)
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
