"""The online service: durable check-and-insert over HTTP at 10M+ stored documents.

For each configuration (a collection's settings and a number of documents): start
`neardup serve` on a fresh data folder, load the documents through the batch route with
`neardup client bench --mode batch` (the load's own rate is reported), then measure at that
size, each three times (median reported): single-document check-and-insert (64 connections),
batched inserts (1,000 per request, 4 in flight), and check-only requests (16 connections);
then resident memory, disk bytes per stored document, and the restart time (SIGTERM, start
again, time until it serves). Documents are composed by the load generator from THUCNews
titles (`--parts` titles each, 10% of them edited copies of earlier ones).

The peer: datasketch MinHashLSH doing the same check-then-insert in memory in one Python
process (no HTTP, no durability: its best case), on documents dumped by the same generator.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

from .common import ROOT

TITLES = "../shared/data/thucnews-titles/titles.jsonl"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--bin", default=os.path.join(ROOT, "target/release/neardup"))
    p.add_argument("--client-bin", default=None,
                   help="the binary whose `client` drives the load (default: --bin; set it to "
                        "measure an older server with this tree's load generator)")
    p.add_argument("--out", default=os.path.join(ROOT, "bench/out/service"))
    p.add_argument("--data", default=None, help="where the data folders go (default: --out)")
    p.add_argument("--config", action="append", default=None,
                   help="NAME:DOCUMENTS:PARTS:SETTINGS_JSON (repeatable), or none (the peers only); "
                        "default: the default collection {} at 10M with 8-title documents "
                        "(the headline: what PUT {} gives), and simhash at max_distance 3 at 10M")
    p.add_argument("--single", type=int, default=30000, help="single inserts per repeat")
    p.add_argument("--batches", type=int, default=100, help="batches of 1,000 per repeat")
    p.add_argument("--checks", type=int, default=30000, help="checks per repeat")
    p.add_argument("--repeats", type=int, default=3,
                   help="measurement repeats after the load (0: load, memory, disk and restart only)")
    p.add_argument("--peer-docs", type=int, default=200000,
                   help="documents for the datasketch peer (0: skip)")
    p.add_argument("--port", type=int, default=18181)
    p.add_argument("--redis-peer-docs", type=int, default=0,
                   help="documents for datasketch MinHashLSH on Redis (needs redis-server on PATH; "
                        "0: skip)")
    p.add_argument("--redis-seconds", type=int, default=1200,
                   help="stop the Redis peer's load after this many seconds")
    p.add_argument("--slice", type=int, default=5_000_000,
                   help="report the load's rate and the server's memory every N documents")
    p.add_argument("--measure-at", default="",
                   help="comma-separated sizes where the load pauses for the single, batched and "
                        "check measures (default: only at the end)")
    p.add_argument("--profile-at", default="",
                   help="comma-separated sizes where `perf record` samples the server for "
                        "--profile-seconds during the load (multiples of --slice)")
    p.add_argument("--profile-seconds", type=int, default=10)
    p.add_argument("--corpus", default=TITLES,
                   help="JSONL corpus the documents are composed from (field text)")
    p.add_argument("--flood", type=int, default=0,
                   help="write OUT/notices.jsonl, N notices of one bank template around one "
                        "title each, and compose the documents from it (a template flood: "
                        "give configs 1 part)")


def rss(pid: int) -> dict:
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS", "VmHWM")):
                key, value = line.split(":")
                out[key] = int(value.split()[0]) * 1024
    return out


def du(path: Path) -> int:
    return int(subprocess.check_output(["du", "-sb", str(path)]).split()[0])


class Server:
    def __init__(self, binary: str, data: Path, port: int):
        self.binary, self.data, self.port = binary, data, port
        self.url = f"http://127.0.0.1:{port}"
        self.proc = None

    def start(self) -> float:
        t = time.monotonic()
        self.proc = subprocess.Popen(
            [self.binary, "serve", "--data-dir", str(self.data), "--listen", f"127.0.0.1:{self.port}"],
            stderr=subprocess.PIPE, text=True)
        line = self.proc.stderr.readline()
        if "serving" not in line:
            raise SystemExit(f"neardup serve did not start: {line}{self.proc.stderr.read()}")
        return time.monotonic() - t

    def stop(self) -> float:
        t = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait()
        if code != 0:
            raise SystemExit(f"neardup serve exited with {code} on SIGTERM")
        return time.monotonic() - t


def client(args, *rest: str) -> dict:
    cmd = [args.client_bin or args.bin, "client", "--url", f"http://127.0.0.1:{args.port}", *rest]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def bench(args, name: str, mode: str, requests: int, parts: int, seed: int, start: int,
          prefix: str, batch: int = 1000, concurrency: int = 64) -> dict:
    return client(args, "bench", name, "--mode", mode, "--requests", str(requests), "--batch",
                  str(batch), "--concurrency", str(concurrency), "--corpus", args.corpus,
                  "--parts", str(parts), "--seed", str(seed), "--start", str(start),
                  "--id-prefix", prefix)


def load_slices(args, name: str, parts: int, first: int, count: int, out: Path, pid: int,
                result: dict) -> None:
    """Loads documents first..first + count through the batch route, one `client bench` run,
    reading its slice lines as they come: each slice's rate and latency, the server's memory
    at its end, and a `perf` profile where asked."""
    cmd = [args.client_bin or args.bin, "client", "--url", f"http://127.0.0.1:{args.port}", "bench", name,
           "--mode", "batch",
           "--requests", str(count // 1000), "--batch", "1000", "--concurrency", "4", "--corpus", args.corpus,
           "--parts", str(parts), "--seed", "1", "--start", str(first), "--id-prefix", "L",
           "--slice", str(args.slice)]
    profile_at = {int(x) for x in args.profile_at.split(",") if x}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    profiles = []
    for line in proc.stderr:
        if not line.startswith("{"):
            print(line, end="", file=sys.stderr)
            continue
        row = json.loads(line)
        row["documents"] += first
        row["rss_bytes"] = rss(pid)["VmRSS"]
        result.setdefault("slices", []).append(row)
        print(f"[service] {name}: {row['documents']:,} loaded, last slice "
              f"{row['documents_per_second']:.0f}/s, p99 {row['latency_ms']['p99']:.1f} ms, "
              f"RSS {row['rss_bytes'] / row['documents']:.0f} B/doc", file=sys.stderr, flush=True)
        if row["documents"] in profile_at:
            data = out / f"perf-{name}-{row['documents']}.data"
            profiles.append((row["documents"], data, subprocess.Popen(
                ["perf", "record", "-F", "499", "-g", "-p", str(pid), "-o", str(data), "--",
                 "sleep", str(args.profile_seconds)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)))
    code = proc.wait()
    if code != 0:
        raise SystemExit(f"client bench exited with {code}")
    answer = json.loads(proc.stdout.read())
    result.setdefault("load_runs", []).append(answer)
    for documents, data, perf in profiles:
        perf.wait()
        report = subprocess.run(["perf", "report", "-i", str(data), "--stdio", "--no-children",
                                 "--percent-limit", "1.5", "-g", "none"],
                                capture_output=True, text=True).stdout
        text = out / f"perf-{name}-{documents}.txt"
        text.write_text(report)
        result.setdefault("profiles", {})[str(documents)] = str(text)


def measure(args, name: str, parts: int, offset: int) -> dict:
    """The single, batched and check measures at the size stored, `--repeats` times."""
    singles, batches, checks = [], [], []
    for r in range(args.repeats):
        base = 10 ** 12 * (r + 1) + offset
        singles.append(bench(args, name, "insert", args.single, parts, 1, base, "S", concurrency=64))
        batches.append(bench(args, name, "batch", args.batches, parts, 1, base + 10 ** 9, "B", concurrency=4))
        checks.append(bench(args, name, "check", args.checks, parts, 7 + r, 0, "C", concurrency=16))
        print(f"[service] {name}: repeat {r + 1}: single {singles[-1]['requests_per_second']:.0f}/s, "
              f"batched {batches[-1]['documents_per_second']:.0f}/s, check p99 "
              f"{checks[-1]['latency_ms']['p99']:.2f} ms", file=sys.stderr, flush=True)
    if not args.repeats:
        return {}
    return {"single": summary(singles, "requests_per_second"),
            "batch": summary(batches, "documents_per_second"),
            "check": summary(checks, "requests_per_second")}


def summary(runs: list[dict], rate: str) -> dict:
    med = lambda key: statistics.median(r["latency_ms"][key] for r in runs)
    return {
        "rate_median": statistics.median(r[rate] for r in runs),
        "rates": [round(r[rate]) for r in runs],
        "p50_ms": med("p50"), "p99_ms": med("p99"), "max_ms": med("max"),
        "statuses": [r["statuses"] for r in runs],
        "stored": sum(r.get("stored", 0) for r in runs),
        "duplicates": sum(r.get("duplicates", 0) for r in runs),
    }


def run_config(args, name: str, documents: int, parts: int, settings: str, data_root: Path) -> dict:
    data = data_root / f"data-{name}"
    shutil.rmtree(data, ignore_errors=True)
    server = Server(args.bin, data, args.port)
    server.start()
    result = {"name": name, "documents": documents, "parts": parts, "settings": json.loads(settings)}
    try:
        client(args, "create", name, "--settings", settings)
        print(f"[service] {name}: loading {documents:,} documents", file=sys.stderr, flush=True)
        stops = sorted({int(x) for x in args.measure_at.split(",") if x and int(x) < documents} | {documents})
        loaded, started = 0, time.monotonic()
        for stop in stops:
            load_slices(args, name, parts, loaded, stop - loaded, Path(args.out), server.proc.pid, result)
            loaded = stop
            shown = client(args, "show", name)["stats"]
            measured = measure(args, name, parts, stop)
            if measured:
                measured["stored_before"] = shown["documents"]
                measured["rss_bytes"] = rss(server.proc.pid)["VmRSS"]
                result.setdefault("measures", {})[str(stop)] = measured
        runs = result["load_runs"]
        seconds = sum(r["seconds"] for r in runs)
        result["load"] = {"documents_per_second": documents / seconds, "seconds": seconds,
                          "wall_seconds": time.monotonic() - started,
                          "stored": sum(r["stored"] for r in runs),
                          "duplicates": sum(r["duplicates"] for r in runs)}
        print(f"[service] {name}: loaded at {result['load']['documents_per_second']:.0f}/s", file=sys.stderr, flush=True)
        last = result.get("measures", {}).get(str(documents))
        if last:
            result.update({k: last[k] for k in ("single", "batch", "check")})
        shown = client(args, "show", name)
        result["stats"] = shown["stats"]
        result["memory"] = rss(server.proc.pid)
    finally:
        result["stop_seconds"] = server.stop()
    result["disk_bytes"] = du(data)
    stored = result["stats"]["documents"]
    result["disk_bytes_per_document"] = result["disk_bytes"] / max(stored, 1)
    result["rss_bytes_per_document"] = result["memory"]["VmRSS"] / max(stored, 1)
    restarts = []
    for _ in range(2):
        restarts.append(server.start())
        if _ == 0:
            result["after_restart"] = client(args, "show", name)["stats"]["documents"]
            result["memory_after_restart"] = rss(server.proc.pid)
        server.stop()
    result["restart_seconds"] = restarts
    shutil.rmtree(data, ignore_errors=True)
    return result


def dump_command(args, documents: int, parts: int, prefix: str) -> list[str]:
    """The load generator's documents as JSONL, for the peers."""
    return [args.bin, "client", "bench", "peer", "--mode", "dump", "--requests", str(documents),
            "--batch", "1", "--corpus", args.corpus, "--parts", str(parts), "--seed", "1", "--id-prefix", prefix]


def check_then_insert(lsh, doc: dict) -> bool:
    """The peers' check-and-insert: a MinHash of the text's character 3-grams, inserted when
    nothing matches; True when stored."""
    from datasketch import MinHash

    text = doc["text"]
    m = MinHash(num_perm=128)
    m.update_batch([text[i:i + 3].encode() for i in range(max(1, len(text) - 2))])
    if lsh.query(m):
        return False
    lsh.insert(doc["id"], m)
    return True


def run_peer(args, documents: int, parts: int) -> dict:
    """datasketch MinHashLSH: check then insert, in memory, one process."""
    from datasketch import MinHashLSH

    dump = subprocess.run(dump_command(args, documents, parts, "P"), check=True, capture_output=True,
                          text=True).stdout
    docs = [json.loads(line) for line in dump.splitlines()]
    lsh = MinHashLSH(threshold=0.5, num_perm=128)
    latencies, stored = [], 0
    start = time.monotonic()
    for doc in docs:
        t = time.perf_counter()
        stored += check_then_insert(lsh, doc)
        latencies.append(time.perf_counter() - t)
    seconds = time.monotonic() - start
    latencies.sort()
    q = lambda p: latencies[min(len(latencies) - 1, int(len(latencies) * p))] * 1000
    return {"peer": "datasketch 2.0.0 MinHashLSH (in memory, 128 permutations, threshold 0.5)",
            "documents": documents, "documents_per_second": documents / seconds,
            "p50_ms": q(0.5), "p99_ms": q(0.99), "stored": stored,
            "memory": rss(os.getpid())}


def run_redis_peer(args, documents: int, parts: int, out: Path) -> dict:
    """datasketch MinHashLSH with its Redis storage: check then insert, one document at a
    time (the only way to keep the first of two copies), Redis with an append-only file
    synced every second. Rates per slice of 50,000 documents; Redis's memory at the end."""
    import redis
    from datasketch import MinHashLSH

    port = args.port + 1
    data = out / "redis-data"
    shutil.rmtree(data, ignore_errors=True)
    data.mkdir(parents=True)
    server = subprocess.Popen(["redis-server", "--port", str(port), "--dir", str(data), "--save", "",
                               "--appendonly", "yes", "--appendfsync", "everysec"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        r = redis.Redis(port=port)
        for _ in range(100):
            try:
                r.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.1)
        dump = subprocess.Popen(dump_command(args, documents, parts, "R"), stdout=subprocess.PIPE, text=True)
        lsh = MinHashLSH(threshold=0.5, num_perm=128, storage_config={
            "type": "redis", "basename": b"neardup-peer", "redis": {"host": "127.0.0.1", "port": port}})
        slices, stored, done = [], 0, 0
        start = slice_start = time.monotonic()
        latencies = []
        for line in dump.stdout:
            doc = json.loads(line)
            t = time.perf_counter()
            stored += check_then_insert(lsh, doc)
            latencies.append(time.perf_counter() - t)
            done += 1
            if done % 50_000 == 0:
                now = time.monotonic()
                latencies.sort()
                info = r.info("memory")
                slices.append({"documents": done, "documents_per_second": 50_000 / (now - slice_start),
                               "p99_ms": latencies[int(len(latencies) * 0.99)] * 1000,
                               "redis_used_memory": info["used_memory"], "redis_rss": info["used_memory_rss"]})
                print(f"[service] redis peer: {done:,}, last slice {slices[-1]['documents_per_second']:.0f}/s",
                      file=sys.stderr, flush=True)
                latencies, slice_start = [], now
                if now - start > args.redis_seconds:
                    break
        dump.kill()
        info = r.info("memory")
        return {"peer": "datasketch 2.0.0 MinHashLSH on Redis 7 (query then insert; 128 permutations, "
                        "threshold 0.5; appendonly, fsync every second)",
                "documents": done, "stored": stored, "seconds": time.monotonic() - start,
                "documents_per_second": done / (time.monotonic() - start), "slices": slices,
                "redis_used_memory": info["used_memory"], "redis_rss": info["used_memory_rss"],
                "redis_rss_per_stored": info["used_memory_rss"] / max(stored, 1),
                "python_rss": rss(os.getpid())["VmRSS"]}
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(data, ignore_errors=True)


NOTICE = ("【星辰银行】尊敬的客户您好，以下是您本月的账户变动通知。\n{body}。\n"
          "本消息由系统自动发送，请勿直接回复本短信。\n如有疑问请拨打客服热线，我们将竭诚为您服务。\n"
          "感谢您对我行一直以来的支持与信任，祝您生活愉快。")


def write_notices(path: Path, count: int) -> Path:
    """`count` notices of one template, each around a THUCNews title of its own (the
    template is most of the text: every notice is a near-duplicate of every other by raw
    similarity)."""
    with open(TITLES, encoding="utf-8") as titles, open(path, "w", encoding="utf-8") as out:
        for i, line in enumerate(titles):
            if i == count:
                break
            body = json.loads(line)["text"]
            out.write(json.dumps({"id": f"notice-{i}", "text": NOTICE.format(body=body)},
                                 ensure_ascii=False) + "\n")
    return path


def main(args) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    data_root = Path(args.data) if args.data else out
    if args.flood:
        args.corpus = str(write_notices(out / "notices.jsonl", args.flood))
    configs = args.config or [
        'default:10000000:8:{}',
        'k3:10000000:8:{"method": "simhash", "max_distance": 3}',
    ]
    results = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               "machine": f"{os.cpu_count()} cores, {os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB",
               "configs": []}
    for config in configs:
        if config == "none":  # only the peers
            continue
        name, documents, parts, settings = config.split(":", 3)
        results["configs"].append(run_config(args, name, int(documents), int(parts), settings, data_root))
        (out / "results.json").write_text(json.dumps(results, indent=1))
    if args.peer_docs:
        results["peer"] = run_peer(args, args.peer_docs, 8)
        (out / "results.json").write_text(json.dumps(results, indent=1))
    if args.redis_peer_docs:
        results["redis_peer"] = run_redis_peer(args, args.redis_peer_docs, 8, out)
        (out / "results.json").write_text(json.dumps(results, indent=1))
    print(json.dumps(results, indent=1))
    return 0
