#!/usr/bin/env python3
"""A notice flood fed to `neardup serve` in order, one collection per settings: false
duplicates (the first arrival of a notice answered as a duplicate, of another notice
necessarily), as a share of the new notices, and missed copies (a copy stored although its
notice was stored before), as a share of the copies.

usage: bench/notice_service.py BIN FLOOD.jsonl TRUTH.jsonl SETTINGS_JSON...
  (FLOOD and TRUTH from `neardup synth-notices -o FLOOD --truth TRUTH`)
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
                answers = os.path.join(data, f"{name}.answers.jsonl")
                subprocess.run([binary, "client", "--url", url, "load", name, flood, "--id-field", "id",
                                "--batch", "1", "--concurrency", "1", "--answers", answers],
                               check=True, stdout=subprocess.DEVNULL)
                # The notices seen, and those stored: a copy stored while its notice is
                # stored is missed; an answer naming another notice is a false duplicate.
                seen, stored, false_dups, missed = set(), set(), 0, 0
                for document, answer in zip(ids, map(json.loads, open(answers, encoding="utf-8"))):
                    first = notice[document] not in seen
                    seen.add(notice[document])
                    if answer.get("stored"):
                        missed += notice[document] in stored
                        stored.add(notice[document])
                    else:
                        false_dups += first
                new, copies = len(seen), len(ids) - len(seen)
                print(f"{settings:45} new notices {new}, answered duplicates: {false_dups} ({false_dups / new:.1%}); "
                      f"copies {copies}, stored: {missed} ({missed / max(copies, 1):.1%})", flush=True)
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
