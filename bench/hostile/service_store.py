#!/usr/bin/env python3
"""Hostile cases against `neardup serve`'s store (issue 28, items 1-3, 12 and 14's store parts;
issue 44, items 3, 5, 6, 9 and salvage's messages of 13).

Usage: bench/hostile/service_store.py [NEARDUP_BINARY]   (default target/release/neardup)

Each case starts the binary on a fresh data folder (127.0.0.1, a free port), does what a
careless or hostile client or operator would, restarts it, and prints one line:
case<TAB>expected<TAB>observed<TAB>PASS|FAIL. Exit status 1 when any case fails.
Python 3 standard library only.
"""

from __future__ import annotations

import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/release/neardup"
RESULTS: list[tuple[str, str, str, bool]] = []


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, data: Path, *extra: str):
        self.data = data
        self.port = free_port()
        self.log = open(data.parent / f"serve-{self.port}.log", "w")
        self.proc = subprocess.Popen(
            [BIN, "serve", "--data-dir", str(data), "--listen", f"127.0.0.1:{self.port}", *extra],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 30
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"serve exited with {self.proc.returncode}: "
                                   + Path(self.log.name).read_text())
            try:
                self.call("GET", "/healthz")
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("serve did not answer within 30 s")

    def call(self, method: str, path: str, body=None) -> tuple[int, dict]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data,
                                         method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return answer.status, json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    def insert(self, name: str, doc_id: str, text: str) -> tuple[int, dict]:
        return self.call("POST", f"/v1/collections/{name}/documents", {"id": doc_id, "text": text})

    def stop(self, kill: bool = False) -> None:
        if kill:
            self.proc.kill()
        else:
            self.proc.terminate()
        self.proc.wait(timeout=60)
        self.log.close()


def text(seed: int, chars: int = 60) -> str:
    rng = random.Random(seed)
    return "".join(chr(0x4E00 + rng.randrange(20000)) for _ in range(chars))


def case(name: str, expected: str, observed: str, ok: bool) -> None:
    RESULTS.append((name, expected, observed, ok))
    print(f"{name}\t{expected}\t{observed}\t{'PASS' if ok else 'FAIL'}", flush=True)


def reserved_names(root: Path) -> None:
    data = root / "names"
    names = ["x.creating", "x", "staging", "trash", "a.tmp", "segments", "settings.json"]
    server = Server(data)
    for name in names:
        server.call("PUT", f"/v1/collections/{name}", {})
        for i in range(3):
            server.insert(name, f"d{i}", text(i))
    server.stop()
    server = Server(data)
    counts = {n: server.call("GET", f"/v1/collections/{n}")[1].get("stats", {}).get("documents")
              for n in names}
    server.stop()
    case("1 reserved-looking names survive create, fill, restart", "3 documents each",
         json.dumps(counts), all(v == 3 for v in counts.values()))


def refused_put(root: Path) -> None:
    data = root / "refused"
    server = Server(data)
    statuses = []
    for method in ["ngram", "segments", "sentences"]:
        statuses.append(server.call("PUT", "/v1/collections/evil", {"method": method})[0])
        statuses.append(server.call("PUT", "/v1/collections/evil", {"method": method})[0])
    left = sorted(os.listdir(data / "collections"))
    server.stop()
    try:
        server = Server(data)
        started = "started"
        server.stop()
    except RuntimeError as error:
        started = f"failed: {error}"
    case("2 refused PUT (ngram, segments, sentences, twice each)",
         "422 each, nothing on disk, restart ok", f"{statuses} left={left} {started}",
         all(s == 422 for s in statuses) and not left and started == "started")


def flipped_bit(root: Path) -> None:
    data = root / "flip"
    server = Server(data)
    server.call("PUT", "/v1/collections/c", {})
    server.call("PUT", "/v1/collections/other", {})
    for i in range(500):
        server.insert("c", f"d{i}", text(i))
    server.insert("other", "o", text(9999))
    server.stop()
    segment = sorted((data / "collections/c/segments").iterdir())[-1]
    raw = bytearray(segment.read_bytes())
    size = len(raw)
    raw[size // 3] ^= 0x01
    segment.write_bytes(bytes(raw))
    server = Server(data)
    status, shown = server.call("GET", "/v1/collections/c")
    other = server.call("GET", "/v1/collections/other")[1].get("stats", {}).get("documents")
    health = server.call("GET", "/healthz")[1]
    listed = server.call("GET", "/v1/collections")[1]
    server.stop()
    after = segment.stat().st_size
    message = (shown.get("error") or {}).get("message", "")
    case("3 one flipped bit in the newest segment (500 documents)",
         "503 naming file and offset, file untouched, others serve, healthz degraded",
         f"{status} size {size}->{after} other={other} health={health.get('status')} "
         f"msg={message[:90]!r}",
         status == 503 and after == size and other == 1 and health.get("status") == "degraded"
         and f"segments/{segment.name}" in message and "corrupt record at byte" in message
         and any(c.get("unavailable") for c in listed.get("collections", [])))
    errors = [c.get("error", "") for c in listed.get("collections", []) if c.get("unavailable")]
    case("44.9 the 503 and the list of an unavailable collection",
         "the file inside the collection, not the server's data path",
         f"{message[:90]!r}; listed {[e[:60] for e in errors]}",
         bool(errors) and all(str(data) not in m for m in [message, *errors]))
    salvage = subprocess.run([BIN, "salvage", "--data-dir", str(data), "c"],
                             capture_output=True, text=True)
    server = Server(data)
    kept = server.call("GET", "/v1/collections/c")[1].get("stats", {}).get("documents")
    server.stop()
    copies = list((data / "collections/c/salvaged").glob("*"))
    said = [line for line in salvage.stderr.splitlines() if "skipped" in line]
    case("44.6 salvage keeps every record that checks and keeps a copy",
         "exit 0, 499 of 500 kept, the bytes and documents skipped said, one copy",
         f"exit {salvage.returncode} kept={kept} copies={len(copies)} said={said[:1]}",
         salvage.returncode == 0 and kept == 499 and len(copies) == 1 and bool(said)
         and "1 document numbered" in salvage.stderr and copies[0].read_bytes() == bytes(raw))


def last_record(root: Path) -> None:
    for kill in (False, True):
        data = root / f"last-{kill}"
        server = Server(data)
        server.call("PUT", "/v1/collections/c", {})
        acknowledged = sum(server.insert("c", f"d{i}", text(i))[0] == 200 for i in range(200))
        server.stop(kill=kill)
        segment = sorted((data / "collections/c/segments").iterdir())[-1]
        raw = bytearray(segment.read_bytes())
        size = len(raw)
        raw[-2] ^= 0x01
        segment.write_bytes(bytes(raw))
        server = Server(data)
        status, shown = server.call("GET", "/v1/collections/c")
        server.stop()
        message = (shown.get("error") or {}).get("message", "")
        case(f"44.5 one flipped bit in the last acknowledged record "
             f"({acknowledged} acknowledged, {'kill -9' if kill else 'SIGTERM'})",
             "503: corruption of an acknowledged record, nothing cut",
             f"{status} size {size}->{segment.stat().st_size} msg={message[-100:]!r}",
             status == 503 and segment.stat().st_size == size
             and "this record was acknowledged" in message)


def missing_segment(root: Path) -> None:
    data = root / "gap"
    server = Server(data)
    server.call("PUT", "/v1/collections/c", {"method": "exact", "partition_documents": 1000})
    for b in range(25):
        server.call("POST", "/v1/collections/c/documents/batch",
                    {"documents": [{"id": f"d{b * 100 + i}", "text": text(b * 100 + i, 20)}
                                   for i in range(100)]})
    server.stop()
    files = sorted((data / "collections/c/segments").iterdir())
    files[1].unlink()
    server = Server(data)
    status, shown = server.call("GET", "/v1/collections/c")
    server.stop()
    message = (shown.get("error") or {}).get("message", "")
    case("3 a missing middle segment", "503 naming the gap", f"{status} {message[:100]!r}",
         status == 503 and "missing" in message)


def limit_and_descriptors(root: Path) -> None:
    data = root / "limit"
    server = Server(data, "--max-collections", "5")
    statuses = [server.call("PUT", f"/v1/collections/c{i}", {})[0] for i in range(7)]
    left = sorted(os.listdir(data / "collections"))
    server.stop()
    case("12 collection limit (5)", "201 x5 then 409, five folders",
         f"{statuses} {left}", statuses == [201] * 5 + [409] * 2 and len(left) == 5)


def descriptors(root: Path) -> None:
    """A low descriptor limit: creations fail cleanly or succeed, and the next start serves."""
    data = root / "fds"
    prlimit = ["prlimit", "--nofile=40:40"]
    if subprocess.run(["which", "prlimit"], capture_output=True).returncode != 0:
        case("12 descriptor limit", "prlimit available", "missing", False)
        return
    global BIN
    plain = BIN
    wrapper = root / "limited.sh"
    wrapper.write_text(f"#!/bin/sh\nexec {' '.join(prlimit)} {plain} \"$@\"\n")
    wrapper.chmod(0o755)
    BIN = str(wrapper)
    try:
        server = Server(data)
        statuses = [server.call("PUT", f"/v1/collections/c{i}", {})[0] for i in range(60)]
        server.stop()
        created = sum(1 for s in statuses if s == 201)
        server = Server(data)
        listed = server.call("GET", "/v1/collections")[1].get("collections", [])
        server.stop()
    finally:
        BIN = plain
    folders = sorted(os.listdir(data / "collections"))
    ok_statuses = all(s in (201, 500, 507, 503) for s in statuses)
    case("12 creations at a 40-descriptor limit", "each completes or leaves nothing; restart serves",
         f"created={created} folders={len(folders)} listed={len(listed)}",
         ok_statuses and len(folders) == created and len(listed) == created)


def small_items(root: Path) -> None:
    data = root / "small"
    server = Server(data)
    server.call("PUT", "/v1/collections/c", {"retention": "1s"})
    server.insert("c", "x", text(1))
    time.sleep(1.2)
    get = server.call("GET", "/v1/collections/c/documents/x")[0]
    delete = server.call("DELETE", "/v1/collections/c/documents/x")[0]
    post = server.insert("c", "x", text(2))
    case("14 an expired id", "GET 404, DELETE 404, POST stores", f"{get} {delete} {post}",
         get == 404 and delete == 404 and post[0] == 200 and post[1].get("stored") is True)
    server.call("PUT", "/v1/collections/e", {})
    stored = [server.insert("e", f"e{i}", t)[1].get("stored") for i, t in
              enumerate(["", "!!!", "，。", "   "])]
    case("14 empty and punctuation-only texts", "all stored", f"{stored}", all(stored))
    server.call("PUT", "/v1/collections/k", {})
    server.insert("k", "a", text(5))
    server.insert("k", "b", text(5))
    server.call("POST", "/v1/collections/k/check", {"text": text(5)})
    server.stop()
    server = Server(data)
    stats = server.call("GET", "/v1/collections/k")[1]["stats"]
    server.stop()
    got = {k: stats[k] for k in ("stored", "duplicates", "checks")}
    case("14 counters after a restart", "stored 1, duplicates 1, checks 1", json.dumps(got),
         got == {"stored": 1, "duplicates": 1, "checks": 1})


def rss_kb(server: Server) -> int:
    for line in Path(f"/proc/{server.proc.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return -1


def hwm_kb(server: Server) -> int:
    for line in Path(f"/proc/{server.proc.pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return -1


def learning_memory(root: Path) -> None:
    """Issue 44, item 3: stream learning's memory, across collections and restarts."""
    gib = 1 << 30
    data = root / "learning"
    server = Server(data, "--learning-memory", "9G")
    before = rss_kb(server)
    status = server.call("PUT", "/v1/collections/big", {"method": "minhash",
                                                        "frequency_memory": 4 * gib})[0]
    grown = rss_kb(server) - before
    case("44.3 a 4 GiB frequency_memory at creation", "201, resident memory grows < 64 MB",
         f"{status}, +{grown} kB", status == 201 and grown < 65536)
    status, answer = server.call("PUT", "/v1/collections/more", {"method": "minhash",
                                                                 "frequency_memory": gib})
    message = (answer.get("error") or {}).get("message", "")
    case("44.3 past the learning budget (9 GiB, 8 taken, 2 asked)",
         "409 learning_memory_limit naming the budget, what is taken and what was asked",
         f"{status} {message[:200]!r}",
         status == 409 and "9663676416 bytes" in message and "8589934592 bytes" in message
         and "2147483648 bytes" in message)
    status, answer = server.call("PUT", "/v1/collections/tiny",
                                 {"frequency_window": 8, "frequency_memory": gib})
    message = (answer.get("error") or {}).get("message", "")
    case("44.3 window 8 with 1 GiB (learning at every insert)",
         "422 naming the smallest window and the largest memory", f"{status} {message[:200]!r}",
         status == 422 and "at least 4000 documents" in message and "at most 2147484" in message)
    for i in range(300):
        server.insert("big", f"d{i}", text(i))
    server.stop()
    server = Server(data, "--learning-memory", "1G")
    time.sleep(0.5)
    peak = hwm_kb(server)
    served = server.insert("big", "after", text(1000))[0]
    refused = server.call("PUT", "/v1/collections/new", {})[0]
    server.stop()
    warned = "more than --learning-memory" in Path(server.log.name).read_text()
    case("44.3 restart: stored collections past a smaller budget (1G)",
         "open and serve, a warning in the log, new learning collection 409, peak < 128 MB",
         f"insert {served}, warned {warned}, PUT {refused}, peak {peak} kB",
         served == 200 and warned and refused == 409 and peak < 131072)


def salvage_messages(root: Path) -> None:
    missing = root / "no-such-data"
    done = subprocess.run([BIN, "salvage", "--data-dir", str(missing), "c"],
                          capture_output=True, text=True)
    case("44.13 salvage with a data folder that does not exist",
         "exit non-zero: the folder does not exist (no lock-file error), nothing created",
         f"exit {done.returncode}: {done.stderr.strip()[:160]}; created {missing.exists()}",
         done.returncode != 0 and "does not exist" in done.stderr and "lock" not in done.stderr
         and not missing.exists())
    data = root / "salvage-names"
    Server(data).stop()
    done = subprocess.run([BIN, "salvage", "--data-dir", str(data), "../../etc"],
                          capture_output=True, text=True)
    case("44.13 salvage ../../etc", "exit non-zero: not a collection name, no PUT suggested",
         f"exit {done.returncode}: {done.stderr.strip()[:160]}",
         done.returncode != 0 and "a collection name is" in done.stderr
         and "PUT" not in done.stderr)


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="neardup-hostile-") as tmp:
        root = Path(tmp)
        for run in (reserved_names, refused_put, flipped_bit, last_record, missing_segment,
                    limit_and_descriptors, descriptors, small_items, learning_memory,
                    salvage_messages):
            try:
                run(root)
            except Exception as error:  # a case that crashes is a failed case
                case(run.__name__, "no exception", f"{type(error).__name__}: {error}", False)
    failed = [r for r in RESULTS if not r[3]]
    print(f"{len(RESULTS) - len(failed)} of {len(RESULTS)} cases passed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
