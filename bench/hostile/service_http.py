#!/usr/bin/env python3
"""Hostile cases against `neardup serve`'s HTTP front end and `neardup client` (issue 28,
items 10, 11, 13 and the HTTP/client parts of 14; issue 44, items 7, 8 and the service
messages of 13).

Usage: bench/hostile/service_http.py [NEARDUP_BINARY]   (default target/release/neardup)

Each case starts the binary on a fresh data folder (127.0.0.1, a free port) or a fake server,
does what a careless or hostile client would, and prints one line:
case<TAB>expected<TAB>observed<TAB>PASS|FAIL. Exit status 1 when any case fails.
Python 3 standard library only; Linux (/proc, RLIMIT_NOFILE).
"""

from __future__ import annotations

import http.client
import json
import os
import random
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/release/neardup"
RESULTS: list[tuple[str, str, str, bool]] = []
ADMIN = "hostile-admin-token-0123456789"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def case(name: str, expected: str, observed: str, ok: bool) -> None:
    RESULTS.append((name, expected, observed, ok))
    print(f"{name}\t{expected}\t{observed}\t{'PASS' if ok else 'FAIL'}", flush=True)


class Server:
    """`neardup serve` on a free loopback port; `files` lowers its open-files limit."""

    def __init__(self, data: Path, *extra: str, files: int | None = None,
                 token: str | None = ADMIN):
        self.data = data
        self.port = free_port()
        self.token = token
        self.log = open(data.parent / f"serve-{self.port}.log", "w")
        env = dict(os.environ)
        env.pop("NEARDUP_TOKEN", None)
        if token:
            env["NEARDUP_TOKEN"] = token

        def limit() -> None:
            if files:
                resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))

        self.proc = subprocess.Popen(
            [BIN, "serve", "--data-dir", str(data), "--listen", f"127.0.0.1:{self.port}", *extra],
            stdout=self.log, stderr=subprocess.STDOUT, env=env, preexec_fn=limit)
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

    def call(self, method: str, path: str, body=None, token: str | None = None,
             raw: bytes | None = None, timeout: float = 30) -> tuple[int, bytes]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        headers = {"Content-Type": "application/json"}
        token = token if token is not None else self.token
        if token:
            headers["Authorization"] = f"Bearer {token}"
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        connection.request(method, path, body=data, headers=headers)
        answer = connection.getresponse()
        result = answer.status, answer.read()
        connection.close()
        return result

    def json(self, method: str, path: str, body=None, token: str | None = None):
        status, answer = self.call(method, path, body, token)
        try:
            return status, json.loads(answer or b"null")
        except ValueError:
            return status, None

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=60)
        self.log.close()


def method_tokens(root: Path) -> None:
    server = Server(root / "methods")
    server.json("PUT", "/v1/collections/c", {})
    rss_before = server.rss_kib()
    rng = random.Random(10)
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    connections = [http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
                   for _ in range(2)]
    requests = 20_000
    for i in range(requests):
        method = "Q" + "".join(rng.choice(letters) for _ in range(12))
        path = ["/healthz", "/v1/collections/c", f"/nowhere/{i}"][i % 3]
        connection = connections[i % 2]
        headers = {"Authorization": f"Bearer {ADMIN}"} if i % 2 else {}
        connection.request(method, path, headers=headers)
        connection.getresponse().read()
    status, metrics = server.call("GET", "/metrics")
    rss_after = server.rss_kib()
    text = metrics.decode()
    series = sum(1 for line in text.splitlines()
                 if line.startswith("neardup_http_requests_total{"))
    server.stop()
    grown = (rss_after - rss_before) / 1024
    case(f"10 {requests} requests with random method tokens (half without a token)",
         "<= 20 request series, /metrics < 64 KB, RSS +< 16 MB",
         f"{series} series, /metrics {len(metrics)} bytes, RSS {rss_before // 1024} -> "
         f"{rss_after // 1024} MB",
         status == 200 and series <= 20 and len(metrics) < 65536 and grown < 16)


def raise_own_limit() -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def idle_connections(root: Path) -> None:
    files = 2048
    held_target = 2500
    if raise_own_limit() < held_target + 200:
        case("11 idle connections", "this script needs 2700 open files", "fewer", False)
        return
    server = Server(root / "idle", files=files)
    held, failed = [], 0
    for i in range(held_target):
        try:
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
            if i % 2:
                sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            held.append(sock)
        except OSError:
            # The listen queue is full: the service stopped accepting. Stop trying.
            failed = held_target - i
            break
    latencies = []
    for _ in range(5):
        started = time.time()
        try:
            status, _ = server.call("GET", "/healthz", timeout=30)
        except OSError as error:
            status = f"{type(error).__name__}"
        latencies.append((status, round((time.time() - started) * 1000, 1)))
    closed = 0
    for sock in held[:200]:
        sock.settimeout(0.01)
        try:
            closed += sock.recv(1) == b""
        except OSError as error:
            closed += not isinstance(error, socket.timeout)
    for sock in held:
        sock.close()
    server.stop()
    worst = max(ms for _, ms in latencies)
    case(f"11 {len(held)} idle + half-sent connections held ({failed} not opened), "
         f"serve's open-files limit {files}",
         "/healthz 200 each time within 1 s; the oldest idle connections closed",
         f"/healthz {latencies}; {closed} of the oldest 200 closed",
         all(s == 200 for s, _ in latencies) and worst < 1000 and closed > 0)


def timeouts(root: Path) -> None:
    server = Server(root / "timeouts", "--idle-timeout", "1", "--header-timeout", "1",
                    "--body-timeout", "1")
    server.json("PUT", "/v1/collections/c", {})

    def until_closed(sock: socket.socket) -> tuple[float, bytes]:
        started = time.time()
        sock.settimeout(30)
        got = b""
        try:
            while True:
                chunk = sock.recv(4096)
                if not chunk:
                    break
                got += chunk
        except OSError:
            pass
        return time.time() - started, got

    idle = socket.create_connection(("127.0.0.1", server.port))
    idle_seconds, _ = until_closed(idle)
    trickle = socket.create_connection(("127.0.0.1", server.port))
    trickle.sendall(b"GET /healthz HTTP/1.1\r\n")
    started, sent = time.time(), 0
    while time.time() - started < 30:
        try:
            trickle.sendall(b"X-Slow: 1\r\n")
            sent += 1
        except OSError:
            break
        time.sleep(0.1)
    trickle_seconds = time.time() - started
    body = socket.create_connection(("127.0.0.1", server.port))
    body.sendall(b"POST /v1/collections/c/documents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                 + ADMIN.encode() + b"\r\nContent-Length: 100\r\n\r\n{\"id\": ")
    body_seconds, answer = until_closed(body)
    server.stop()
    status_line = answer.split(b"\r\n", 1)[0].decode(errors="replace")
    case("11 timeouts of 1 s: an idle connection, a head trickled a line every 0.1 s, a "
         "stalled body", "closed within ~1 s each; the body answered 408",
         f"idle closed after {idle_seconds:.1f} s, trickle cut after {trickle_seconds:.1f} s "
         f"({sent} lines), body: {status_line!r} after {body_seconds:.1f} s",
         idle_seconds < 5 and trickle_seconds < 5 and "408" in status_line)


TOKENS = {
    "admin-all": ("admin", "*"),
    "admin-c": ("admin", "c"),
    "write-c": ("write", "c"),
    "read-c": ("read", "c"),
    "read-all": ("read", "*"),
}
RANK = {"read": 0, "write": 1, "admin": 2}


def token_of(name: str) -> str:
    return f"{name}-token-0123456789"


def allowed(name: str, scope: str | None, collection: str | None) -> bool:
    if scope is None:
        return True
    granted, on = TOKENS[name]
    return RANK[granted] >= RANK[scope] and (on == "*" or on == collection)


def routes(name: str, n: int):
    c = f"/v1/collections/{name}"
    return [
        ("GET", "/v1/collections", None, "read", None),
        ("GET", "/metrics", None, "read", None),
        ("GET", "/v1/openapi.json", None, None, None),
        ("GET", c, None, "read", name),
        ("POST", f"{c}/check", {"text": "x"}, "read", name),
        ("POST", f"{c}/check/batch", {"texts": ["x"]}, "read", name),
        ("GET", f"{c}/documents/a", None, "read", name),
        ("POST", f"{c}/documents", {"id": f"one{n}", "text": f"text {n}"}, "write", name),
        ("POST", f"{c}/documents/batch", {"documents": [{"id": f"b{n}", "text": "y"}]},
         "write", name),
        ("DELETE", f"{c}/documents/zz", None, "write", name),
        ("PUT", c, {}, "admin", name),
        ("DELETE", c, None, "admin", name),
    ]


def scopes(root: Path) -> None:
    tokens = root / "tokens.txt"
    tokens.write_text("# scope collection token\n" + "".join(
        f"{scope} {on} {token_of(name)}\n" for name, (scope, on) in TOKENS.items()))
    server = Server(root / "scopes", "--tokens-file", str(tokens))
    n = 0
    for name in TOKENS:
        wrong = []
        checked = 0
        for collection in ["c", "d"]:
            for method, path, body, scope, on in routes(collection, n):
                n += 1
                server.json("PUT", f"/v1/collections/{collection}", {})
                status, answer = server.json(method, path, body, token=token_of(name))
                expected = allowed(name, scope, on)
                checked += 1
                if expected and status in (401, 403):
                    wrong.append(f"{method} {path} {status}")
                if not expected and (status != 403 or not answer
                                     or answer["error"]["code"] != "forbidden"):
                    wrong.append(f"{method} {path} {status}")
        scope, on = TOKENS[name]
        case(f"13 token {scope} on {on} vs {checked} routes on c and d",
             "403 forbidden outside its scope, served inside",
             "all as expected" if not wrong else "; ".join(wrong), not wrong)
    statuses = {server.json(m, p, b, token="unknown-token-0123456789")[0]
                for m, p, b, _, _ in routes("c", 0)}
    case("13 unknown token vs every route", "401 each", f"{sorted(statuses)}", statuses == {401})
    cased = []
    for scheme in ["bearer", "BEARER", "Bearer"]:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        connection.request("GET", "/v1/collections",
                           headers={"Authorization": f"{scheme} {token_of('read-all')}"})
        cased.append(connection.getresponse().status)
        connection.close()
    case("13 Bearer scheme in any case", "200 each", f"{cased}", cased == [200, 200, 200])
    status, health = server.json("GET", "/healthz", token="")
    case("13 /healthz without a token", "200, no count of collections", f"{status} {health}",
         status == 200 and isinstance(health, dict) and "collections" not in health)
    server.stop()
    bad = root / "bad-tokens.txt"
    bad.write_text(f"admin * {ADMIN}\nreed c x\n")
    refused = subprocess.run([BIN, "serve", "--data-dir", str(root / "bad"), "--listen",
                              "127.0.0.1:0", "--tokens-file", str(bad)],
                             capture_output=True, text=True, timeout=60)
    message = refused.stderr.strip().splitlines()[-1] if refused.stderr.strip() else ""
    case("13 a bad tokens file", "refused at start naming file:line", message,
         refused.returncode != 0 and "bad-tokens.txt:2:" in message)


class Fake:
    """A fake service: every request is answered by `answer(request_line)` -> (status, body)
    or never (None). The request lines are kept."""

    def __init__(self, answer):
        self.answer = answer
        self.seen: list[str] = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.held: list[socket.socket] = []
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(conn,), daemon=True).start()

    def serve(self, conn: socket.socket) -> None:
        stream = conn.makefile("rb")
        while True:
            line = stream.readline()
            if not line:
                return
            length = 0
            while True:
                header = stream.readline()
                if header in (b"\r\n", b"\n", b""):
                    break
                name, _, value = header.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            stream.read(length)
            self.seen.append(line.decode().strip())
            answer = self.answer(line.decode())
            if answer is None:
                self.held.append(conn)
                return
            status, body = answer
            data = body.encode()
            conn.sendall(f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n"
                         f"Content-Length: {len(data)}\r\n\r\n".encode() + data)

    def close(self) -> None:
        self.sock.close()


def client(url: str, *args: str, timeout: float = 300) -> tuple[int, str, str, float]:
    env = dict(os.environ)
    env.pop("NEARDUP_TOKEN", None)
    started = time.time()
    try:
        done = subprocess.run([BIN, "client", "--url", url, *args], capture_output=True,
                              text=True, timeout=timeout, env=env)
        return done.returncode, done.stdout, done.stderr.strip(), time.time() - started
    except subprocess.TimeoutExpired:
        return -1, "", f"still running after {timeout} s (killed)", time.time() - started


def clients(root: Path) -> None:
    never = Fake(lambda _: None)
    code, _, err, seconds = client(never.url, "--timeout", "2", "list", timeout=60)
    case("14 client vs a server that accepts and never answers (--timeout 2)",
         "exit non-zero after ~2 s with a message", f"exit {code} after {seconds:.1f} s: {err}",
         code > 0 and seconds < 20 and "no complete answer within 2 s" in err)
    jsonl = root / "ten.jsonl"
    jsonl.write_text("".join(json.dumps({"id": f"d{i}", "text": f"text {i}"}) + "\n"
                             for i in range(10)))
    code, _, err, seconds = client(never.url, "--timeout", "2", "load", "c", str(jsonl),
                                   timeout=60)
    case("14 client load vs a server that never answers (--timeout 2)", "exit non-zero",
         f"exit {code} after {seconds:.1f} s: {err[:200]}",
         code > 0 and seconds < 20 and "no complete answer within 2 s" in err)
    never.close()
    item = '{"id": "d0", "stored": true, "duplicate_of": null}'
    for label, body in [
        ("1,000,003 results", '{"results": [' + ",".join([item] * 1_000_003) + "]}"),
        ("3 results", '{"results": [' + ",".join([item] * 3) + "]}"),
        ("{\"ok\": true}", '{"ok": true}'),
    ]:
        fake = Fake(lambda _, body=body: (200, body))
        code, out, err, _ = client(fake.url, "load", "c", str(jsonl))
        fake.close()
        case(f"14 client load of 10 lines vs a fake answering {label}",
             "exit non-zero naming the mismatch", f"exit {code}: {err[:200]} {out[:100]}",
             code > 0 and ("results for 10 documents" in err or "not a batch" in err))
    wrong = Fake(lambda _: (200, '{"ok": true}'))
    code, _, err, _ = client(wrong.url, "insert", "c", "--id", "a", "text")
    wrong.close()
    case("14 client insert vs a fake answering {\"ok\": true}", "exit non-zero",
         f"exit {code}: {err[:200]}", code > 0 and "not an insert" in err)
    port = free_port()
    code, _, err, _ = client(f"http://127.0.0.1:{port}", "list")
    debug = [d for d in ["ConnectError(", "Os {", "kind:", "Error {"] if d in err]
    case("14 client error text (connection refused)", "a message, no Rust debug text",
         err, code > 0 and not debug and "refused" in err)
    prefixed = Fake(lambda _: (200, '{"collections": []}'))
    code, _, err, _ = client(prefixed.url + "/prefix", "list")
    seen = prefixed.seen[-1] if prefixed.seen else ""
    prefixed.close()
    case("14 --url http://host:port/prefix", "GET /prefix/v1/collections", seen,
         code == 0 and seen.startswith("GET /prefix/v1/collections "))


def duplicate_keys(root: Path) -> None:
    server = Server(root / "keys")
    server.json("PUT", "/v1/collections/c", {})
    observed = []
    ok = True
    for method, path, raw, field in [
        ("POST", "/v1/collections/c/documents", '{"id": "a", "text": "x", "id": "b"}', "id"),
        ("POST", "/v1/collections/c/documents/batch",
         '{"documents": [{"id": "a", "text": "x", "text": "y"}]}', "documents[0].text"),
        ("POST", "/v1/collections/c/check", '{"text": "x", "limit": 1, "limit": 2}', "limit"),
        ("PUT", "/v1/collections/d", '{"method": "simhash", "method": "minhash"}', "method"),
    ]:
        status, answer = server.call(method, path, raw=raw.encode())
        got = json.loads(answer).get("error", {}).get("field")
        observed.append(f"{status} {got}")
        ok = ok and status == 400 and got == field
    stored = server.json("GET", "/v1/collections/c/documents/b")[0]
    server.stop()
    case("14 JSON bodies repeating a key (insert, batch, check, create)",
         "400 naming the key each time, nothing stored", f"{observed}; GET b {stored}",
         ok and stored == 404)


def security_headers(root: Path) -> None:
    server = Server(root / "headers")
    observed = []
    ok = True
    for path, token in [("/", ""), ("/v1/collections", None), ("/v1/collections", ""),
                        ("/nowhere", None)]:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        headers = {} if token == "" else {"Authorization": f"Bearer {ADMIN}"}
        connection.request("GET", path, headers=headers)
        answer = connection.getresponse()
        answer.read()
        policy = answer.getheader("Content-Security-Policy") or ""
        sniff = answer.getheader("X-Content-Type-Options")
        frame = answer.getheader("X-Frame-Options")
        connection.close()
        observed.append(f"{path} {answer.status}: {sniff}, {frame}, "
                        f"{'frame-ancestors none' if 'frame-ancestors' in policy else policy!r}")
        ok = ok and sniff == "nosniff" and frame == "DENY" and \
            "frame-ancestors 'none'" in policy and "unsafe-inline" not in policy
    console = server.call("GET", "/", token="")[1].decode()
    server.stop()
    stores = "localStorage.setItem" in console
    case("44.7 security headers on the console, the API, a 401 and a 404; where the console "
         "keeps the token", "nosniff, DENY, CSP frame-ancestors 'none' without unsafe-inline; "
         "not in localStorage", f"{observed}; localStorage.setItem {stores}", ok and not stores)


def short_token(root: Path) -> None:
    data = root / "short-token"
    token = root / "short.token"
    token.write_text("abc\n")
    env = dict(os.environ)
    env.pop("NEARDUP_TOKEN", None)
    try:
        done = subprocess.run([BIN, "serve", "--data-dir", str(data), "--listen",
                               f"127.0.0.1:{free_port()}", "--token-file", str(token)],
                              capture_output=True, text=True, timeout=30, env=env)
        code, err = done.returncode, done.stderr.strip()
    except subprocess.TimeoutExpired:
        code, err = 0, "still serving after 30 s"
    case("44.8 serve --token-file holding a 3-character token",
         "refused at start: 16 to 512 characters, as in the tokens file",
         f"exit {code}: {err[:200]}", code != 0 and "16 to 512 characters" in err)


def messages(root: Path) -> None:
    server = Server(root / "messages")
    status, answer = server.json("PUT", "/v1/collections/m",
                                 {"method": "exact", "frequency_memory": 1})
    field = (answer or {}).get("error", {}).get("field")
    case("44.13 PUT exact with frequency_memory 1", "422 under frequency_memory",
         f"{status} {field}", status == 422 and field == "frequency_memory")
    status, answer = server.json("PUT", "/v1/collections/n", {"method": "ngram"})
    message = (answer or {}).get("error", {}).get("message", "")
    debug = [d for d in ["NgramBuckets", "{ m:"] if d in message]
    case("44.13 PUT ngram", "422 in words, no Rust debug text", f"{status} {message[:120]}",
         status == 422 and not debug)
    server.json("PUT", "/v1/collections/c", {})
    jsonl = root / "twice.jsonl"
    rng = random.Random(44)
    jsonl.write_text("".join(
        json.dumps({"id": f"d{i}", "text": "".join(chr(0x4E00 + rng.randrange(20000))
                                                   for _ in range(60))}) + "\n"
        for i in range(190)))
    url = f"http://127.0.0.1:{server.port}"
    token = root / "admin.token"
    token.write_text(ADMIN + "\n")
    first = client(url, "--token-file", str(token), "load", "c", str(jsonl))
    code, out, err, _ = client(url, "--token-file", str(token), "load", "c", str(jsonl))
    server.stop()
    case("44.13 client load of 190 ids already stored",
         "exit non-zero after the summary, the count of refusals named",
         f"first exit {first[0]}; again exit {code}: {err[:160]}",
         first[0] == 0 and code != 0 and "190 of 190 documents were refused" in err
         and '"id_exists": 190' in out)
    tokens = root / "bom-tokens.txt"
    tokens.write_bytes(b"\xef\xbb\xbf" + f"read * {ADMIN}\n".encode())
    try:
        bom = Server(root / "bom", "--tokens-file", str(tokens), token=None)
        status = bom.call("GET", "/v1/collections", token=ADMIN)[0]
        bom.stop()
        observed = f"started; GET /v1/collections {status}"
    except RuntimeError as error:
        status, observed = 0, str(error)[-160:]
    case("44.13 a tokens file starting with a UTF-8 byte order mark",
         "the mark skipped: the service starts and the token reads",
         observed, status == 200)


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="neardup-hostile-http-") as tmp:
        root = Path(tmp)
        for run in (method_tokens, idle_connections, timeouts, scopes, clients,
                    duplicate_keys, security_headers, short_token, messages):
            try:
                run(root)
            except Exception as error:  # a case that crashes is a failed case
                case(run.__name__, "no exception", f"{type(error).__name__}: {error}", False)
    failed = [r for r in RESULTS if not r[3]]
    print(f"{len(RESULTS) - len(failed)} of {len(RESULTS)} cases passed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
