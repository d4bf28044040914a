#!/usr/bin/env python3
"""`neardup spans` and ExactSubstr on one corpus, in one run: time, peak memory, and whether
the removed byte ranges agree.

    python3 bench/spans/side_by_side.py CORPUS.jsonl --bin NEARDUP --peer-dir PEER_DIR \
        --bytes 100 --chars 100 --work DATA_DIR/work-en --reps 3

Ours runs with ExactSubstr's rule (`--count occurrences --remove all`) at `--chars`
characters, `--reps` times (median wall, largest peak RSS from `/usr/bin/time`); the peer runs
through `peer.py` at `--bytes` bytes (median of its per-run sums, peak RSS of its process
trees), its ranges shrunk to whole characters. Then `compare.py` (ours against the peer) and,
with `--reference FILE`, against an exact ranges file of the rule in characters
(`reference.py --unit chars`). Prints a Markdown table; writes everything in `--work`.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run_ours(args, ranges):
    """Median wall seconds and largest peak RSS (bytes) of `--reps` runs of ours."""
    walls, peaks = [], []
    for _ in range(args.reps):
        command = [
            "/usr/bin/time", "-f", "%e %M", args.bin, "spans", args.corpus,
            "-o", os.path.join(args.work, "ours-out.jsonl"), "--min-length", str(args.chars),
            "--count", "occurrences", "--remove", "all", "--ranges", ranges, "--quiet",
            "--id-field", "id",
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        wall, peak = done.stderr.strip().splitlines()[-1].split()
        walls.append(float(wall))
        peaks.append(int(peak) * 1024)
    return statistics.median(walls), max(peaks), walls


def run_peer(args):
    """The peer's stats file, written by peer.py."""
    work = os.path.join(args.work, "peer")
    command = [
        sys.executable, os.path.join(HERE, "peer.py"), args.corpus, "--length", str(args.bytes),
        "--work", work, "--reps", str(args.reps), "--cleanup", "--trim-chars",
    ]
    if args.peer_dir:
        command += ["--peer-dir", args.peer_dir]
    if args.peer_python:
        command += ["--python", args.peer_python]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(work, f"peer-stats-L{args.bytes}-trim.json")) as stats:
        return json.load(stats), os.path.join(work, f"peer-ranges-L{args.bytes}-trim.jsonl")


def verdict(a, b, names):
    command = [sys.executable, os.path.join(HERE, "compare.py"), a, b, "--names", names]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    lines = done.stdout.strip().splitlines()
    removed = next((line for line in lines if line.startswith("bytes removed")), "")
    return lines[-1], removed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus")
    parser.add_argument("--bin", required=True, help="the neardup binary")
    parser.add_argument("--peer-dir", default=os.environ.get("PEER_DIR"))
    parser.add_argument("--peer-python", default=None, help="Python with numpy for the peer")
    parser.add_argument("--bytes", type=int, required=True, help="the peer's threshold, bytes")
    parser.add_argument("--chars", type=int, required=True, help="ours, characters")
    parser.add_argument("--work", required=True)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--reference", default=None, help="exact ranges in characters")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    input_bytes = os.path.getsize(args.corpus)
    ours_ranges = os.path.join(args.work, "ours-ranges.jsonl")
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    wall, peak, walls = run_ours(args, ours_ranges)
    peer, peer_ranges = run_peer(args)
    steps = peer["steps"]
    peer_wall = peer["peer_wall_s"]
    peer_peak = peer.get("peer_peak_rss_bytes") or max(
        steps[s]["peak_rss_bytes"] for s in ("suffix_array", "self_similar", "collect"))
    print(f"corpus {os.path.basename(args.corpus)} ({input_bytes / 1e6:.1f} MB), {started}, "
          f"{args.reps} runs each")
    print()
    print("| | wall (median) | peak RSS | peak / input |")
    print("|---|---:|---:|---:|")
    print(f"| neardup spans, {args.chars} chars | {wall:.2f} s {walls} | {peak / 2**20:.0f} MiB "
          f"| {peak / input_bytes:.2f}x |")
    print(f"| ExactSubstr, {args.bytes} bytes | {peer_wall:.2f} s | {peer_peak / 2**20:.0f} MiB "
          f"| {peer_peak / input_bytes:.2f}x |")
    print(f"| ratio (peer / ours) | {peer_wall / wall:.1f}x | {peer_peak / peak:.1f}x | |")
    print()
    line, removed = verdict(peer_ranges, ours_ranges, "peer,ours")
    print(f"against the peer (whole characters): {removed}; {line}")
    if args.reference:
        line, removed = verdict(args.reference, ours_ranges, "reference,ours")
        print(f"against the exact rule in characters: {removed}; {line}")


if __name__ == "__main__":
    main()
