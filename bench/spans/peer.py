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


def main(argv=None):
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
    args = ap.parse_args(argv)

    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    logs = work / "logs"
    logs.mkdir(exist_ok=True)
    L = args.length
    data = work / "corpus.bin"
    cache = work / f"cache-L{L}"
    collect_txt = work / f"collect-L{L}.txt"
    suffix = "-trim" if args.trim_chars else ""
    out_path = Path(args.out) if args.out else work / f"peer-ranges-L{L}{suffix}.jsonl"
    stats_path = work / f"peer-stats-L{L}{suffix}.json"

    steps = {}
    t0 = time.monotonic()
    ids, bodies = read_corpus(args.corpus, args.text_field)
    starts, file_size = body_starts(bodies)
    steps["read_corpus"] = {"wall_s": round(time.monotonic() - t0, 3)}

    if not args.map_only:
        if not args.peer_dir and not args.bin:
            sys.exit("peer.py: give --peer-dir (or $PEER_DIR) or --bin")
        peer_dir = Path(args.peer_dir).resolve() if args.peer_dir else None
        binary = Path(args.bin).resolve() if args.bin else peer_dir / "target/release/dedup_dataset"
        if not binary.exists():
            sys.exit(f"peer.py: no binary at {binary} (cargo build --release in the peer)")
        table = Path(str(data) + ".table.bin")
        reuse = (args.reuse and data.exists() and table.exists()
                 and data.stat().st_size == file_size)
        if not reuse:
            if peer_dir is None:
                sys.exit("peer.py: the suffix array step needs --peer-dir (its scripts/)")
            chk = subprocess.run([args.python, "-c", "import numpy"], capture_output=True)
            if chk.returncode != 0:
                sys.exit(f"peer.py: {args.python} has no numpy (the peer's "
                         "make_suffix_array.py needs it); use --python")
            t = time.monotonic()
            write_input(data, bodies)
            steps["write"] = {"wall_s": round(time.monotonic() - t, 3)}
            # the peer's script calls ./target/debug/dedup_dataset and merges into ./tmp
            link = work / "target" / "debug" / "dedup_dataset"
            link.parent.mkdir(parents=True, exist_ok=True)
            if link.is_symlink() or link.exists():
                link.unlink()
            link.symlink_to(binary)
            (work / "tmp").mkdir(exist_ok=True)
        runs = []
        digests = []
        for rep in range(args.reps):
            run = {}
            if not reuse:
                clear_intermediate(work)
                run["suffix_array"] = run_step(
                    "suffix_array",
                    [args.python, str(peer_dir / "scripts" / "make_suffix_array.py"), str(data)],
                    cwd=work, log_dir=logs)
                if not table.exists() or table.stat().st_size % file_size:
                    sys.exit(f"peer.py: no suffix array at {table}; see {logs}/suffix_array.log")
                run["suffix_array"]["table_bytes"] = table.stat().st_size
                clear_intermediate(work)
            if cache.exists():
                shutil.rmtree(cache)
            run["self_similar"] = run_step(
                "self_similar",
                [str(binary), "self-similar", "--data-file", str(data), "--length-threshold",
                 str(L), "--cache-dir", str(cache), "--num-threads", str(args.threads)],
                cwd=work, log_dir=logs)
            run["self_similar"]["cache_bytes"] = sum(p.stat().st_size for p in cache.iterdir())
            run["collect"] = run_step(
                "collect",
                [str(binary), "collect", "--data-file", str(data), "--cache-dir", str(cache),
                 "--length-threshold", str(L)],
                cwd=work, stdout_path=collect_txt, log_dir=logs)
            digests.append(hashlib.sha256(collect_txt.read_bytes()).hexdigest())
            runs.append(run)
        for name in runs[0]:
            vals = [r[name] for r in runs]
            walls = sorted(v["wall_s"] for v in vals)
            merged = dict(vals[0])
            merged["wall_s"] = walls[len(walls) // 2]
            merged["wall_s_runs"] = [v["wall_s"] for v in vals]
            merged["peak_rss_bytes"] = max(v["peak_rss_bytes"] for v in vals)
            merged["max_single_rss_bytes"] = max(v["max_single_rss_bytes"] for v in vals)
            steps[name] = merged
        totals = sorted(sum(r[k]["wall_s"] for k in r) for r in runs)
        peer_total_median = totals[len(totals) // 2]
        same_output = len(set(digests)) == 1

    if not collect_txt.exists():
        sys.exit(f"peer.py: no {collect_txt} (run without --map-only first)")
    t = time.monotonic()
    raw = read_collect(collect_txt)
    per_doc, sep_bytes, crossing = map_ranges(raw, bodies, starts, args.trim_chars)
    removed = 0
    with open(out_path, "w", encoding="utf-8") as out:
        for i in sorted(per_doc):
            rs = per_doc[i]
            removed += sum(e - s for s, e in rs)
            out.write(json.dumps({"doc": i, "id": ids[i], "ranges": rs}) + "\n")
    steps["map"] = {"wall_s": round(time.monotonic() - t, 3)}

    if args.cleanup and not args.map_only:
        for p in [data, Path(str(data) + ".table.bin"), work / "tmp", work / "target"]:
            if p.is_dir():
                shutil.rmtree(p)
            elif p.exists() or p.is_symlink():
                p.unlink()
        for p in work.glob("corpus.bin.part.*"):
            p.unlink()
        shutil.rmtree(cache, ignore_errors=True)

    peer_steps = [s for s in ("suffix_array", "self_similar", "collect") if s in steps]
    total_bytes = sum(len(b) for b in bodies)
    stats = {
        "corpus": str(Path(args.corpus).resolve().name),
        "length_threshold": L,
        "trim_chars": args.trim_chars,
        "docs": len(bodies),
        "text_bytes": total_bytes,
        "input_file_bytes": file_size,
        "steps": steps,
        "peer_wall_s": (round(peer_total_median, 3) if not args.map_only else None),
        "reps": args.reps if not args.map_only else None,
        "collect_identical_across_reps": same_output if not args.map_only else None,
        "peer_peak_rss_bytes": max((steps[s]["peak_rss_bytes"] for s in peer_steps), default=None),
        "raw_ranges": len(raw),
        "raw_bytes": sum(b - a for a, b in raw),
        "raw_separator_bytes": sep_bytes,
        "raw_ranges_across_documents": crossing,
        "docs_with_ranges": len(per_doc),
        "bytes_removed": removed,
        "fraction_removed": round(removed / max(1, total_bytes), 5),
        "out": str(out_path),
    }
    if args.map_only:
        # keep the peer's numbers from the run that made collect-L.txt
        for prev in (stats_path, work / f"peer-stats-L{L}.json", work / f"peer-stats-L{L}-trim.json"):
            if prev.exists():
                old = json.loads(prev.read_text())
                for k, v in old.get("steps", {}).items():
                    if k in ("write", "suffix_array", "self_similar", "collect"):
                        stats["steps"][k] = v
                for k in ("peer_wall_s", "peer_peak_rss_bytes", "reps",
                          "collect_identical_across_reps"):
                    stats[k] = old.get(k)
                break
    order = ["read_corpus", "write", "suffix_array", "self_similar", "collect", "map"]
    stats["steps"] = {k: stats["steps"][k] for k in order if k in stats["steps"]}
    stats_path.write_text(json.dumps(stats, indent=1) + "\n")

    print(f"peer ExactSubstr, L={L} bytes{' (trimmed to characters)' if args.trim_chars else ''}: "
          f"{stats['corpus']}, {len(bodies)} docs, {human(total_bytes)}")
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
    print(f"  removed {removed} bytes ({100 * stats['fraction_removed']:.2f}%) in "
          f"{len(per_doc)} docs; {len(raw)} raw ranges, {sep_bytes} separator bytes inside them, "
          f"{crossing} ranges across a separator")
    print(f"  -> {out_path}")


if __name__ == "__main__":
    main()
