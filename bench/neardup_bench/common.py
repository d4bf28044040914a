"""Paths, logging, the neardup binary and the measured run (wall time + peak RSS)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(BENCH)
DEFAULT_OUT = os.path.join(BENCH, "out")


def rel(path: str) -> str:
    """`path` relative to the repository root when it lies in or beside it (for reports),
    else absolute."""
    p = os.path.abspath(path)
    r = os.path.relpath(p, ROOT)
    return p if r.startswith(os.path.join(os.pardir, os.pardir)) else r


def find_data(given: str | None = None) -> str:
    """The shared data folder: --data, $NEARDUP_DATA, or ../shared/data beside the repository."""
    for d in (given, os.environ.get("NEARDUP_DATA"), os.path.join(ROOT, "..", "shared", "data")):
        if d and os.path.isdir(d):
            return os.path.normpath(os.path.abspath(d))
    sys.exit("shared data not found: give --data DIR or set NEARDUP_DATA")


LOG_FILE: str | None = None  # when set, every log line is appended there too


def log(msg: str) -> None:
    line = f"[{time.strftime('%H:%M:%S')}] {msg}"
    print(line, file=sys.stderr, flush=True)
    if LOG_FILE:
        with open(LOG_FILE, "a") as fh:
            fh.write(line + "\n")


def neardup_binary(given: str | None, build: bool) -> str:
    """--bin, $NEARDUP_BIN, or target/release/neardup (built first with cargo when `build`)."""
    path = given or os.environ.get("NEARDUP_BIN")
    if path:
        log(f"using {path} (no build)")
    else:
        target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
        path = os.path.join(target, "release", "neardup")
        if build:
            log("cargo build --release -p neardup-cli (waits if another build holds the lock)")
            subprocess.run(["cargo", "build", "--release", "-p", "neardup-cli"], cwd=ROOT, check=True)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        sys.exit(f"no neardup binary at {path} (give --bin PATH)")
    return os.path.abspath(path)


def methods_in_help(text: str) -> list[str]:
    """The values of `--method` in the text of `neardup dedup --help` ("[possible values: exact,
    minhash, ...]"), in the order the binary lists them (its registry's)."""
    start = text.find("--method <METHOD>")
    found = re.search(r"\[possible values: ([^\]]*)\]", text[start:]) if start >= 0 else None
    if not found:
        sys.exit("`neardup dedup --help` lists no method (no `--method <METHOD>` with possible values)")
    return [name.strip() for name in found.group(1).split(",") if name.strip()]


def listed_methods(binary: str) -> list[str]:
    """Every method `binary` offers (`dedup --help`), so that a bench runs what the binary has
    rather than a list of names kept by hand."""
    text = subprocess.run([binary, "dedup", "--help"], check=True, capture_output=True, text=True).stdout
    return methods_in_help(text)


def private_copy(binary: str, out_dir: str) -> str:
    """A copy of the binary, so that a rebuild by someone else during a run cannot change it."""
    os.makedirs(out_dir, exist_ok=True)
    dst = os.path.join(out_dir, "neardup")
    shutil.copy2(binary, dst)
    return dst


def measure(cmd: list[str], record: str | None, cwd: str | None = None, env: dict | None = None,
            stdout=None, stderr=None, timeout: float | None = None, max_as: int | None = None) -> dict:
    """Run `cmd` under `python -m neardup_bench.measure` (wall time and peak RSS of the whole
    process; see measure.py for why it is a process of its own); write the record as JSON to
    `record` (a temporary file when None) and return it."""
    tmp = None
    if record is None:
        fd, tmp = tempfile.mkstemp(prefix="measure-", suffix=".json")
        os.close(fd)
    opts = (["--timeout", str(timeout)] if timeout else []) + (["--max-as", str(max_as)] if max_as else [])
    try:
        subprocess.run([sys.executable, "-m", "neardup_bench.measure", record or tmp, *opts, "--", *cmd], cwd=cwd,
                       env=child_env(env), stdout=stdout, stderr=stderr)
        with open(record or tmp) as fh:
            rec = json.load(fh)
    finally:
        if tmp:
            os.remove(tmp)
    return rec


def bench_python() -> list[str]:
    """How to start a child of this package under the same interpreter and PYTHONPATH."""
    return [sys.executable, "-m"]


def child_env(extra: dict | None = None) -> dict:
    """The environment of a child: this one (or `extra` on top), with bench/ on PYTHONPATH."""
    env = dict(os.environ)
    env["PYTHONPATH"] = BENCH + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    if extra:
        env.update(extra)
    return env


def git_describe() -> str:
    try:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "none"
    dirty = subprocess.run(["git", "diff", "--quiet", "HEAD"], cwd=ROOT).returncode != 0
    return sha + (" + uncommitted changes" if dirty else "")


def machine() -> dict:
    def out(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True).stdout
        except OSError:
            return ""

    cpu = next((ln.split(":", 1)[1].strip() for ln in out(["lscpu"]).splitlines()
                if ln.startswith("Model name:")), "unknown")
    rustc = out(["rustc", "--version"]).strip() or "rustc not found"
    return {"cpu": cpu, "nproc": os.cpu_count(), "free_g": out(["free", "-g"]).rstrip(), "rustc": rustc,
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}


def read_jsonl(path: str):
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def write_jsonl(path: str, rows) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")


def start_run(args) -> tuple[str, str, str]:
    """What a quality-and-cost driver does first: the data folder, the output folder (its
    `runs` emptied, its log opened) and a private copy of the binary. Returns (data, out, n)."""
    data = find_data(args.data)
    out = os.path.abspath(args.out)
    shutil.rmtree(os.path.join(out, "runs"), ignore_errors=True)
    os.makedirs(out, exist_ok=True)
    global LOG_FILE
    LOG_FILE = os.path.join(out, "run.log")
    n = private_copy(neardup_binary(args.bin, build=not args.no_build), os.path.join(out, "env"))
    return data, out, n


def finish_run(out: str, results: dict, cost: dict | None, text: str) -> int:
    """What it does last: results.json and report.md in `out`, the report printed."""
    with open(os.path.join(out, "results.json"), "w") as fh:
        json.dump({"quality": results, "cost": cost}, fh, indent=1)
    with open(os.path.join(out, "report.md"), "w") as fh:
        fh.write(text + "\n")
    print(text)
    return 0
