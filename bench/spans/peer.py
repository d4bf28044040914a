#!/usr/bin/env python3
"""Run ExactSubstr (google-research/deduplicate-text-datasets, Lee et al. 2022) on a JSONL
corpus and write its removed ranges per document.

    peer.py CORPUS.jsonl --length L --work DIR [--peer-dir PEER_DIR] [--out FILE]
            [--trim-chars] [--threads 2] [--cleanup] [--reuse] [--map-only]

Steps (each timed; the peer's steps also get their peak RSS):
  write         DIR/corpus.bin: every document as b"\\xff\\xff" + struct.pack("<I", i + 1) + its
                UTF-8 text, as the peer's scripts/load_dataset.py writes a dataset (document i
                is line i of the JSONL, counted from 0; the peer's counter starts at 1).
  suffix_array  python3 PEER_DIR/scripts/make_suffix_array.py DIR/corpus.bin, unchanged, run in
                DIR, where target/debug/dedup_dataset is a link to the release binary (the
                script calls that path) and tmp/ exists (the script merges into tmp/). The
                script needs numpy. It leaves the parts (corpus.bin.part.*) behind; they are
                deleted here.
  self_similar  dedup_dataset self-similar --data-file DIR/corpus.bin --length-threshold L
                --cache-dir DIR/cache-L --num-threads T
  collect       dedup_dataset collect --data-file DIR/corpus.bin --cache-dir DIR/cache-L
                --length-threshold L  > DIR/collect-L.txt   (byte ranges [a, b) after "out")
  map           each range clipped to the document bodies it touches (separator bytes
                dropped), per document sorted and merged; with --trim-chars a range loses a
                partial UTF-8 character at either end.

Output (--out, default DIR/peer-ranges-L.jsonl, or ...-trim.jsonl with --trim-chars): one line
per document with ranges, {"doc": i, "id": ..., "ranges": [[start, end], ...]}, byte offsets
into the document's UTF-8 text. DIR/peer-stats-L.json (-trim too) holds the numbers, which are
also printed.

Peak RSS is sampled every 0.05 s as the sum over the step's process tree (make_suffix_array.py
runs its parts at once) from /proc; "max_single_rss" is the largest single process (getrusage,
as /usr/bin/time -v reports it).
"""

import argparse
import bisect
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

PAGE = os.sysconf("SC_PAGE_SIZE")


# ---------------------------------------------------------------------------------------------
# measuring

def _proc_table():
    kids = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                data = f.read()
        except OSError:
            continue
        r = data.rfind(b")")
        fields = data[r + 2:].split()
        ppid = int(fields[1])
        kids.setdefault(ppid, []).append(int(name))
    return kids


def _tree_rss(root):
    kids = _proc_table()
    total = 0
    stack = [root]
    while stack:
        pid = stack.pop()
        try:
            with open(f"/proc/{pid}/statm") as f:
                total += int(f.read().split()[1]) * PAGE
        except OSError:
            pass
        stack.extend(kids.get(pid, ()))
    return total


def run_step(name, cmd, cwd=None, stdout_path=None, log_dir=None):
    """Run cmd, return {"wall_s", "peak_rss_bytes", "max_single_rss_bytes"}; raise on failure."""
    log = open(Path(log_dir) / f"{name}.log", "wb") if log_dir else subprocess.DEVNULL
    out = open(stdout_path, "wb") if stdout_path else log
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=log)
    peak = 0
    status = None
    rusage = None
    while True:
        pid, st, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            status, rusage = st, ru
            break
        peak = max(peak, _tree_rss(proc.pid))
        time.sleep(0.05)
    wall = time.monotonic() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    for f in (out, log):
        if f not in (subprocess.DEVNULL, None):
            f.close()
    if proc.returncode != 0:
        raise SystemExit(f"peer.py: step {name} failed (exit {proc.returncode}): "
                         f"{' '.join(map(str, cmd))}; see {log_dir}/{name}.log")
    single = rusage.ru_maxrss * 1024
    return {"wall_s": round(wall, 3), "peak_rss_bytes": max(peak, single),
            "max_single_rss_bytes": single}


# ---------------------------------------------------------------------------------------------
# corpus

def clear_intermediate(work):
    """What make_suffix_array.py leaves: the parts and tmp/out.table.bin.table.bin.NNNN."""
    for p in list(work.glob("corpus.bin.part.*")) + list((work / "tmp").glob("out.table.bin*")):
        p.unlink()


def read_corpus(path, field):
    ids, bodies = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            ids.append(d.get("id"))
            bodies.append(d[field].encode("utf-8"))
    return ids, bodies


def separator(i):
    return b"\xff\xff" + struct.pack("<I", i + 1)


def body_starts(bodies):
    starts, pos = [], 0
    for i, b in enumerate(bodies):
        pos += len(separator(i))
        starts.append(pos)
        pos += len(b)
    return starts, pos


def write_input(path, bodies):
    with open(path, "wb") as f:
        for i, b in enumerate(bodies):
            f.write(separator(i))
            f.write(b)


def read_collect(path):
    ranges = []
    seen_out = False
    with open(path) as f:
        for line in f:
            if not seen_out:
                if line.strip() == "out":
                    seen_out = True
                continue
            parts = line.split()
            if len(parts) == 2:
                ranges.append((int(parts[0]), int(parts[1])))
    return ranges


def trim_chars(t, a, b):
    while a < b and (t[a] & 0xC0) == 0x80:
        a += 1
    while b > a and b < len(t) and (t[b] & 0xC0) == 0x80:
        b -= 1
    return a, b


def map_ranges(raw, bodies, starts, trim):
    """Raw file ranges -> {doc: [[s, e], ...]} plus counts about separator bytes."""
    per_doc = {}
    sep_bytes = 0
    crossing = 0
    for a, b in raw:
        i = max(0, bisect.bisect_right(starts, a) - 1)
        inside = 0
        touched = 0
        while i < len(bodies) and starts[i] - 6 < b:
            s, e = starts[i], starts[i] + len(bodies[i])
            lo, hi = max(a, s), min(b, e)
            if lo < hi:
                inside += hi - lo
                touched += 1
                x, y = lo - s, hi - s
                if trim:
                    x, y = trim_chars(bodies[i], x, y)
                if x < y:
                    lst = per_doc.setdefault(i, [])
                    if lst and lst[-1][1] >= x:
                        lst[-1][1] = max(lst[-1][1], y)
                    else:
                        lst.append([x, y])
            i += 1
        sep_bytes += (b - a) - inside
        if touched > 1:
            crossing += 1
    return per_doc, sep_bytes, crossing


# ---------------------------------------------------------------------------------------------

def human(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{n} B"
        n /= 1024


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", help="JSONL, one document a line")
    ap.add_argument("--length", "-L", type=int, required=True, help="byte threshold L")
    ap.add_argument("--work", required=True, help="work folder (input file, suffix array, cache)")
    ap.add_argument("--peer-dir", default=os.environ.get("PEER_DIR"),
                    help="the peer's source tree (default $PEER_DIR)")
    ap.add_argument("--bin", default=None,
                    help="dedup_dataset binary (default PEER_DIR/target/release/dedup_dataset)")
    ap.add_argument("--python", default=sys.executable,
                    help="interpreter for the peer's make_suffix_array.py (needs numpy)")
    ap.add_argument("--threads", type=int, default=2, help="self-similar --num-threads")
    ap.add_argument("--reps", type=int, default=1,
                    help="run the peer's steps this many times; times are medians")
    ap.add_argument("--text-field", default="text")
    ap.add_argument("--out", default=None)
    ap.add_argument("--trim-chars", action="store_true",
                    help="shrink ranges to whole UTF-8 characters")
    ap.add_argument("--reuse", action="store_true",
                    help="keep an existing corpus.bin + suffix array of the same corpus")
    ap.add_argument("--map-only", action="store_true",
                    help="only map an existing DIR/collect-L.txt (after --cleanup too)")
    ap.add_argument("--cleanup", action="store_true",
                    help="delete corpus.bin, its suffix array and the cache at the end")
    return ap.parse_args(argv)


@dataclass
class WorkFiles:
    """The paths of one run: the work folder, its logs/ and what the steps read and write."""
    root: Path
    logs: Path
    data: Path         # corpus.bin
    table: Path        # corpus.bin.table.bin, its suffix array
    cache: Path        # cache-L
    collect_txt: Path  # collect-L.txt
    out: Path          # the ranges file
    stats: Path        # peer-stats-L(-trim).json


def work_files(args):
    """The paths for args, with the work folder and its logs/ made."""
    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    logs = work / "logs"
    logs.mkdir(exist_ok=True)
    L = args.length
    data = work / "corpus.bin"
    suffix = "-trim" if args.trim_chars else ""
    return WorkFiles(
        root=work, logs=logs, data=data, table=Path(str(data) + ".table.bin"),
        cache=work / f"cache-L{L}", collect_txt=work / f"collect-L{L}.txt",
        out=Path(args.out) if args.out else work / f"peer-ranges-L{L}{suffix}.jsonl",
        stats=work / f"peer-stats-L{L}{suffix}.json")


# ---------------------------------------------------------------------------------------------
# the peer's steps

def find_binary(args):
    """The peer's source tree (None when only --bin is given) and its dedup_dataset binary."""
    if not args.peer_dir and not args.bin:
        sys.exit("peer.py: give --peer-dir (or $PEER_DIR) or --bin")
    peer_dir = Path(args.peer_dir).resolve() if args.peer_dir else None
    binary = Path(args.bin).resolve() if args.bin else peer_dir / "target/release/dedup_dataset"
    if not binary.exists():
        sys.exit(f"peer.py: no binary at {binary} (cargo build --release in the peer)")
    return peer_dir, binary


def prepare_suffix_array(args, files, peer_dir, binary, bodies):
    """Write corpus.bin and lay out the work folder as make_suffix_array.py expects; return the
    write step's time."""
    if peer_dir is None:
        sys.exit("peer.py: the suffix array step needs --peer-dir (its scripts/)")
    chk = subprocess.run([args.python, "-c", "import numpy"], capture_output=True)
    if chk.returncode != 0:
        sys.exit(f"peer.py: {args.python} has no numpy (the peer's "
                 "make_suffix_array.py needs it); use --python")
    t = time.monotonic()
    write_input(files.data, bodies)
    step = {"wall_s": round(time.monotonic() - t, 3)}
    # the peer's script calls ./target/debug/dedup_dataset and merges into ./tmp
    link = files.root / "target" / "debug" / "dedup_dataset"
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(binary)
    (files.root / "tmp").mkdir(exist_ok=True)
    return step


def run_suffix_array(args, files, peer_dir, file_size):
    clear_intermediate(files.root)
    step = run_step(
        "suffix_array",
        [args.python, str(peer_dir / "scripts" / "make_suffix_array.py"), str(files.data)],
        cwd=files.root, log_dir=files.logs)
    if not files.table.exists() or files.table.stat().st_size % file_size:
        sys.exit(f"peer.py: no suffix array at {files.table}; see {files.logs}/suffix_array.log")
    step["table_bytes"] = files.table.stat().st_size
    clear_intermediate(files.root)
    return step


def run_peer_once(args, files, peer_dir, binary, file_size, reuse):
    """One rep of the peer's steps: {step: its numbers} and the sha256 of the ranges of
    collect-L.txt (the lines after `out`)."""
    L = args.length
    run = {}
    if not reuse:
        run["suffix_array"] = run_suffix_array(args, files, peer_dir, file_size)
    if files.cache.exists():
        shutil.rmtree(files.cache)
    run["self_similar"] = run_step(
        "self_similar",
        [str(binary), "self-similar", "--data-file", str(files.data), "--length-threshold",
         str(L), "--cache-dir", str(files.cache), "--num-threads", str(args.threads)],
        cwd=files.root, log_dir=files.logs)
    run["self_similar"]["cache_bytes"] = sum(p.stat().st_size for p in files.cache.iterdir())
    run["collect"] = run_step(
        "collect",
        [str(binary), "collect", "--data-file", str(files.data), "--cache-dir", str(files.cache),
         "--length-threshold", str(L)],
        cwd=files.root, stdout_path=files.collect_txt, log_dir=files.logs)
    # The ranges only: collect's header lines (cluster sizes) come in any order.
    collected = files.collect_txt.read_bytes()
    ranges = collected[collected.find(b"\nout\n"):] if b"\nout\n" in collected else collected
    return run, hashlib.sha256(ranges).hexdigest()


def merge_reps(runs):
    """Per step over the reps: the median wall time, every rep's and the largest peak RSS."""
    steps = {}
    for name in runs[0]:
        vals = [r[name] for r in runs]
        walls = sorted(v["wall_s"] for v in vals)
        merged = dict(vals[0])
        merged["wall_s"] = walls[len(walls) // 2]
        merged["wall_s_runs"] = [v["wall_s"] for v in vals]
        merged["peak_rss_bytes"] = max(v["peak_rss_bytes"] for v in vals)
        merged["max_single_rss_bytes"] = max(v["max_single_rss_bytes"] for v in vals)
        steps[name] = merged
    return steps


def run_peer(args, files, bodies, file_size, steps):
    """The peer's steps, --reps times, their numbers added to steps; return the run's entries
    of the stats (peer_wall_s, reps, collect_identical_across_reps)."""
    peer_dir, binary = find_binary(args)
    reuse = (args.reuse and files.data.exists() and files.table.exists()
             and files.data.stat().st_size == file_size)
    if not reuse:
        steps["write"] = prepare_suffix_array(args, files, peer_dir, binary, bodies)
    runs = []
    digests = []
    for _ in range(args.reps):
        run, digest = run_peer_once(args, files, peer_dir, binary, file_size, reuse)
        digests.append(digest)
        runs.append(run)
    steps.update(merge_reps(runs))
    totals = sorted(sum(r[k]["wall_s"] for k in r) for r in runs)
    return {"peer_wall_s": round(totals[len(totals) // 2], 3), "reps": args.reps,
            "collect_identical_across_reps": len(set(digests)) == 1}


def remove_peer_files(files):
    """--cleanup: corpus.bin, its suffix array and parts, tmp/, target/ and the cache."""
    for p in [files.data, files.table, files.root / "tmp", files.root / "target"]:
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists() or p.is_symlink():
            p.unlink()
    for p in files.root.glob("corpus.bin.part.*"):
        p.unlink()
    shutil.rmtree(files.cache, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# the map step and the stats

def write_ranges(path, per_doc, ids):
    """One line per document with ranges; return the bytes they cover."""
    removed = 0
    with open(path, "w", encoding="utf-8") as out:
        for i in sorted(per_doc):
            rs = per_doc[i]
            removed += sum(e - s for s, e in rs)
            out.write(json.dumps({"doc": i, "id": ids[i], "ranges": rs}) + "\n")
    return removed


def map_step(args, files, ids, bodies, starts, steps):
    """collect-L.txt mapped to the documents and written to the ranges file, its time added to
    steps; return the map's entries of the stats."""
    if not files.collect_txt.exists():
        sys.exit(f"peer.py: no {files.collect_txt} (run without --map-only first)")
    t = time.monotonic()
    raw = read_collect(files.collect_txt)
    per_doc, sep_bytes, crossing = map_ranges(raw, bodies, starts, args.trim_chars)
    removed = write_ranges(files.out, per_doc, ids)
    steps["map"] = {"wall_s": round(time.monotonic() - t, 3)}
    return {
        "raw_ranges": len(raw),
        "raw_bytes": sum(b - a for a, b in raw),
        "raw_separator_bytes": sep_bytes,
        "raw_ranges_across_documents": crossing,
        "docs_with_ranges": len(per_doc),
        "bytes_removed": removed,
    }


def make_stats(args, files, bodies, file_size, steps, peer, mapped):
    peer_steps = [s for s in ("suffix_array", "self_similar", "collect") if s in steps]
    total_bytes = sum(len(b) for b in bodies)
    return {
        "corpus": str(Path(args.corpus).resolve().name),
        "length_threshold": args.length,
        "trim_chars": args.trim_chars,
        "docs": len(bodies),
        "text_bytes": total_bytes,
        "input_file_bytes": file_size,
        "steps": steps,
        **peer,
        "peer_peak_rss_bytes": max((steps[s]["peak_rss_bytes"] for s in peer_steps), default=None),
        **mapped,
        "fraction_removed": round(mapped["bytes_removed"] / max(1, total_bytes), 5),
        "out": str(files.out),
    }


def keep_peer_numbers(stats, files, L):
    """--map-only: the peer's numbers from the run that made collect-L.txt."""
    for prev in (files.stats, files.root / f"peer-stats-L{L}.json",
                 files.root / f"peer-stats-L{L}-trim.json"):
        if prev.exists():
            old = json.loads(prev.read_text())
            for k, v in old.get("steps", {}).items():
                if k in ("write", "suffix_array", "self_similar", "collect"):
                    stats["steps"][k] = v
            for k in ("peer_wall_s", "peer_peak_rss_bytes", "reps",
                      "collect_identical_across_reps"):
                stats[k] = old.get(k)
            break


def print_stats(stats):
    print(f"peer ExactSubstr, L={stats['length_threshold']} bytes"
          f"{' (trimmed to characters)' if stats['trim_chars'] else ''}: "
          f"{stats['corpus']}, {stats['docs']} docs, {human(stats['text_bytes'])}")
    for s, v in stats["steps"].items():
        extra = ""
        if "peak_rss_bytes" in v:
            extra = (f"  peak RSS {human(v['peak_rss_bytes'])} (largest process "
                     f"{human(v['max_single_rss_bytes'])})")
        runs = v.get("wall_s_runs")
        if runs and len(runs) > 1:
            extra += f"  runs {', '.join(f'{x:.2f}' for x in runs)}"
        print(f"  {s:13s} {v['wall_s']:9.2f} s{extra}")
    if stats["peer_wall_s"] is not None:
        print(f"  peer total    {stats['peer_wall_s']:9.2f} s  max peak RSS "
              f"{human(stats['peer_peak_rss_bytes'])}"
              + (f"  (median of {stats['reps']} runs; same output every run: "
                 f"{stats['collect_identical_across_reps']})" if (stats.get('reps') or 1) > 1 else ""))
    print(f"  removed {stats['bytes_removed']} bytes ({100 * stats['fraction_removed']:.2f}%) in "
          f"{stats['docs_with_ranges']} docs; {stats['raw_ranges']} raw ranges, "
          f"{stats['raw_separator_bytes']} separator bytes inside them, "
          f"{stats['raw_ranges_across_documents']} ranges across a separator")
    print(f"  -> {stats['out']}")


def main(argv=None):
    args = parse_args(argv)
    files = work_files(args)

    steps = {}
    t0 = time.monotonic()
    ids, bodies = read_corpus(args.corpus, args.text_field)
    starts, file_size = body_starts(bodies)
    steps["read_corpus"] = {"wall_s": round(time.monotonic() - t0, 3)}

    peer = {"peer_wall_s": None, "reps": None, "collect_identical_across_reps": None}
    if not args.map_only:
        peer = run_peer(args, files, bodies, file_size, steps)
    mapped = map_step(args, files, ids, bodies, starts, steps)
    if args.cleanup and not args.map_only:
        remove_peer_files(files)

    stats = make_stats(args, files, bodies, file_size, steps, peer, mapped)
    if args.map_only:
        keep_peer_numbers(stats, files, args.length)
    order = ["read_corpus", "write", "suffix_array", "self_similar", "collect", "map"]
    stats["steps"] = {k: stats["steps"][k] for k in order if k in stats["steps"]}
    files.stats.write_text(json.dumps(stats, indent=1) + "\n")
    print_stats(stats)


if __name__ == "__main__":
    main()
