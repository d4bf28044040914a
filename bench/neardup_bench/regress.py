"""`regress`: this working tree's neardup against another revision's, side by side.

    bench/run regress --base REV            # builds REV's binary and this tree's, then runs both
    bench/run regress --base-bin OLD --bin NEW   # two binaries already built

Builds REV's release binary in a git worktree (bench/out/regress/src-SHA) with a target
directory of its own (`target/regress` beside this tree's: the first base build compiles the
dependencies, later ones only the workspace crates, and this tree's `target/release/neardup`
is never overwritten by a base build) and keeps it as bench/out/regress/neardup-SHA (built
once per revision), then this tree's (`cargo build --release -p neardup-cli`). Each binary is copied before it runs, so a rebuild during the run
cannot change it.

Runs `BIN dedup CORPUS --id-field id -o OUT --stats STATS -q [EXTRA]` on three corpora
(made once under bench/out/regress/corpora): Chinese long (`neardup synth` over documents of
600-2,000 characters joined from the Chinese sentences of ../shared/data, --zh-mb MB),
English long (Reuters-21578 bodies), and Chinese short (40-130 characters, --short-mb MB).
Base and new alternate, REPS times each after one warm-up pair; each run is a process of its
own under `neardup_bench.measure` (wall, user + system CPU, peak RSS).

Prints, per corpus, one Markdown table: wall, CPU and peak memory of the whole process, and
per stage the seconds and the peak RSS the stats file reports (`seconds`, `peak_rss_by_stage`),
each as the median of base and of new and the ratio new/base of the medians; and whether the
kept outputs were byte-identical. The machine is noisy: quote medians and ratios from one run.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import statistics
import subprocess
import sys
import tempfile

from . import common, corpora
from .common import ROOT, log, measure

OUT = os.path.join(common.DEFAULT_OUT, "regress")


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--base", help="the revision to compare against (a commit, tag or branch)")
    ap.add_argument("--base-bin", help="the base binary, already built (instead of --base)")
    ap.add_argument("--bin", help="the new binary (default: build this tree's target/release/neardup)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--zh-mb", type=float, default=30, help="size of the Chinese long corpus")
    ap.add_argument("--short-mb", type=float, default=10, help="size of the Chinese short corpus")
    ap.add_argument("--corpora", default="zh-long,en-long,zh-short",
                    help="which corpora, comma-separated")
    ap.add_argument("--data", help="the shared data folder (default ../shared/data)")
    ap.add_argument("--out", default=OUT)
    ap.add_argument("extra", nargs="*", help="after --: extra dedup arguments for both binaries")


def base_target_dir() -> str:
    """The base builds' own target directory, beside this tree's."""
    return os.path.join(os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target"), "regress")


def build_base(rev: str, out: str) -> str:
    """The release binary of `rev`, built once in a worktree and kept by its full commit id."""
    sha = subprocess.run(["git", "rev-parse", "--verify", f"{rev}^{{commit}}"], cwd=ROOT, capture_output=True,
                         text=True).stdout.strip()
    if not sha:
        raise SystemExit(f"no such revision: {rev}")
    kept = os.path.join(out, f"neardup-{sha[:12]}")
    if os.access(kept, os.X_OK):
        log(f"base {rev} = {sha[:12]}: {common.rel(kept)} (built before)")
        return kept
    src = os.path.join(out, f"src-{sha[:12]}")
    if not os.path.isdir(src):
        subprocess.run(["git", "worktree", "add", "--detach", src, sha], cwd=ROOT, check=True,
                       stdout=sys.stderr)
    log(f"cargo build --release -p neardup-cli at {sha[:12]} (in {common.rel(src)})")
    subprocess.run(["cargo", "build", "--release", "-p", "neardup-cli"], cwd=src, check=True,
                   env=dict(os.environ, CARGO_TARGET_DIR=base_target_dir()))
    common.private_copy(os.path.join(base_target_dir(), "release", "neardup"), out)
    os.replace(os.path.join(out, "neardup"), kept)
    subprocess.run(["git", "worktree", "remove", "--force", src], cwd=ROOT, stdout=sys.stderr)
    return kept


def make_corpora(binary: str, args, out: str) -> list[tuple[str, str]]:
    data = common.find_data(args.data)
    cdir = os.path.join(out, "corpora")
    made = {}
    wanted = [c.strip() for c in args.corpora.split(",") if c.strip()]
    for name in wanted:
        if name == "zh-long":
            made[name] = corpora.zh_synth(binary, data, cdir, args.zh_mb, 1)[0]
        elif name == "zh-short":
            made[name] = corpora.zh_synth(binary, data, cdir, args.short_mb, 1, short=True)[0]
        elif name == "en-long":
            made[name] = os.path.join(data, "reuters21578", "bodies.jsonl")
        else:
            raise SystemExit(f"unknown corpus {name!r} (zh-long, en-long, zh-short)")
    return [(name, made[name]) for name in wanted]


def run_once(binary: str, corpus: str, extra: list[str], work: str, side: str) -> dict:
    kept = os.path.join(work, f"{side}.kept")
    stats = os.path.join(work, f"{side}.stats.json")
    rec = measure([binary, "dedup", corpus, "--id-field", "id", "-o", kept, "--stats", stats, "-q", *extra], None)
    if rec["returncode"] != 0:
        raise SystemExit(f"{binary} failed on {corpus} (exit {rec['returncode']})")
    with open(stats) as fh:
        s = json.load(fh)
    row = {"wall": rec["wall_seconds"], "cpu": rec["user_seconds"] + rec["sys_seconds"],
           "peak MB": rec["peak_rss_bytes"] / 2**20}
    for stage, seconds in s.get("seconds", {}).items():
        if stage != "total":
            row[f"{stage} s"] = seconds
    for stage, rss in (s.get("peak_rss_by_stage") or {}).items():
        row[f"{stage} MB"] = rss / 2**20
    return row


def ratio_table(base: list[dict], new: list[dict]) -> list[str]:
    keys = [k for k in base[0] if k in new[0]]
    lines = ["| figure | base (median) | new (median) | new / base |", "|---|---:|---:|---:|"]
    for k in keys:
        b = statistics.median(r[k] for r in base)
        n = statistics.median(r[k] for r in new)
        ratio = f"{n / b:.3f}" if b > 0 else "-"
        fmt = "{:.0f}" if k.endswith("MB") else "{:.3f}"
        lines.append(f"| {k} | {fmt.format(b)} | {fmt.format(n)} | {ratio} |")
    return lines


def main(args) -> int:
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    if args.base_bin:
        base_bin = args.base_bin
    elif args.base:
        base_bin = build_base(args.base, out)
    else:
        raise SystemExit("give --base REV or --base-bin PATH")
    new_bin = common.neardup_binary(args.bin, build=not args.bin)
    base_bin = common.private_copy(base_bin, os.path.join(out, "run-base"))
    new_bin = common.private_copy(new_bin, os.path.join(out, "run-new"))
    info = common.machine()
    print(f"# regress: {args.base or args.base_bin} vs {common.git_describe()}\n")
    print(f"{info['date']}, {info['cpu']}, {info['nproc']} cores; {args.reps} runs each, alternating; "
          f"extra arguments: {' '.join(args.extra) or 'none'}\n")
    identical_everywhere = True
    for name, corpus in make_corpora(new_bin, args, out):
        with tempfile.TemporaryDirectory(prefix="regress-", dir=out) as work:
            log(f"{name}: warm-up")
            run_once(base_bin, corpus, args.extra, work, "base")
            run_once(new_bin, corpus, args.extra, work, "new")
            base, new = [], []
            for i in range(args.reps):
                log(f"{name}: run {i + 1} of {args.reps}")
                base.append(run_once(base_bin, corpus, args.extra, work, "base"))
                new.append(run_once(new_bin, corpus, args.extra, work, "new"))
            same = filecmp.cmp(os.path.join(work, "base.kept"), os.path.join(work, "new.kept"), shallow=False)
            identical_everywhere &= same
        mb = os.path.getsize(corpus) / 1e6
        print(f"## {name}: {common.rel(corpus)} ({mb:.1f} MB); kept files {'identical' if same else 'DIFFERENT'}\n")
        print("\n".join(ratio_table(base, new)) + "\n", flush=True)
    return 0 if identical_everywhere else 1
