"""`quality`: neardup's methods vs datasketch, rensa, gaoya, simhash and text-dedup on the
shared data and on `neardup synth` corpora built from it (formerly bench/quality.sh).

Builds the corpora into OUT/corpora (OUT = bench/out/quality by default), runs every tool on
every corpus (wall time and peak RSS of each run), scores every clusters file with `neardup
eval`, and writes OUT/results.md and OUT/results.json; the same text replaces (or is appended
as) the section "## Quality against peers (P, R, F1, ARI)" of BENCHMARKS.md unless
--no-benchmarks. Wall time and peak RSS are medians over --reps runs (text-dedup, 10-30 s a
run, gets --td-reps); the clusters must be identical in every run (the report says so).
text-dedup runs when bench/.venv has it (a Python >= 3.12; bench/run prefers one).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time

from . import common, corpora, quality_report, textdedup
from .common import ROOT, bench_python, child_env, find_data, git_describe, log, machine, measure, neardup_binary

THRESHOLD = 0.7
NGRAM = 5
PERMS = 128
CORPORA = "zh-titles zh-news en-news sohu-dd clough"
TOOLS = ("neardup-minhash neardup-connected neardup-containment neardup-exact neardup-peer-settings "
         "neardup-simhash neardup-simhash-k3 datasketch "
         "rensa gaoya simhash text-dedup text-dedup-verified datasketch-auto rensa-auto")


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--reps", type=int, default=3, help="runs per tool and corpus (default 3)")
    ap.add_argument("--td-reps", type=int, default=1, help="runs of text-dedup (default 1)")
    ap.add_argument("--zh-titles-limit", type=int, default=20000, help="THUCNews headlines used as sources")
    ap.add_argument("--en-limit", type=int, default=5000, help="Reuters bodies used as sources")
    ap.add_argument("--corpora", default=CORPORA)
    ap.add_argument("--tools", default=TOOLS)
    ap.add_argument("--bin", help="neardup binary to use (default: cargo build, target/release/neardup; "
                                  "or $NEARDUP_BIN)")
    ap.add_argument("--no-build", action="store_true", help="use target/release/neardup as it is")
    ap.add_argument("--data", help="shared data folder (default $NEARDUP_DATA or ../shared/data)")
    ap.add_argument("--out", default=os.path.join(common.DEFAULT_OUT, "quality"),
                    help="output folder, emptied first (default bench/out/quality)")
    ap.add_argument("--no-benchmarks", action="store_true", help="do not write the section into BENCHMARKS.md")


def main(args, argv: list[str]) -> int:
    t_all = time.time()
    data = find_data(args.data)
    out = os.path.abspath(args.out)
    shutil.rmtree(out, ignore_errors=True)
    cdir_root = os.path.join(out, "corpora")
    envdir = os.path.join(out, "env")
    for d in (cdir_root, os.path.join(out, "runs"), envdir):
        os.makedirs(d)
    common.LOG_FILE = os.path.join(out, "run.log")

    n = common.private_copy(neardup_binary(args.bin, build=not args.no_build), envdir)

    # ------------------------------------------------------------ the environment
    with open(os.path.join(envdir, "python.freeze"), "w") as fh:
        subprocess.run([sys.executable, "-m", "pip", "freeze", "--disable-pip-version-check"], stdout=fh,
                       stderr=subprocess.DEVNULL)
    py_version = sys.version.split()[0]
    if importlib.util.find_spec("text_dedup") is not None:
        td_status = f"ok Python {py_version}, text-dedup {importlib.metadata.version('text-dedup')}"
        td_ok = True
    else:
        td_status = (f"not installed: bench/.venv has Python {py_version}, and text-dedup 0.4.1 requires "
                     "Python >= 3.12 (run with NEARDUP_BENCH_PYTHON pointing at one)")
        td_ok = False
    with open(os.path.join(envdir, "textdedup.status"), "w") as fh:
        fh.write(td_status + "\n")
    log(f"text-dedup: {td_status}")
    t_setup = time.time() - t_all

    # ------------------------------------------------------------ corpora
    names = args.corpora.split()
    for name in names:
        c = os.path.join(cdir_root, name)
        os.makedirs(c, exist_ok=True)
        build_corpus(n, name, c, data, args.zh_titles_limit, args.en_limit)

    # ------------------------------------------------------------ runs
    tools = args.tools.split()
    for name in names:
        for tool in tools:
            d = os.path.join(out, "runs", name, tool)
            os.makedirs(d, exist_ok=True)
            reps = args.td_reps if tool.startswith("text-dedup") else args.reps
            for rep in range(1, reps + 1):
                log(f"{name} {tool} rep{rep}")
                try:
                    ok = run_tool(n, out, name, tool, d, rep, td_ok)
                except subprocess.CalledProcessError as e:
                    log(f"  {e}")
                    ok = False
                if not ok:
                    with open(os.path.join(d, "FAILED"), "a") as fh:
                        fh.write(f"rep{rep} failed\n")
                    log(f"FAILED: {name} {tool} rep{rep}")
                    break
                if os.path.exists(os.path.join(d, "SKIPPED")):
                    break
                clusters = os.path.join(d, "clusters.jsonl")
                if os.path.exists(clusters):
                    with open(clusters, "rb") as fh, open(os.path.join(d, f"clusters_rep{rep}.sha256"), "w") as fo:
                        fo.write(hashlib.sha256(fh.read()).hexdigest() + "\n")
                if os.path.exists(os.path.join(d, "kept.jsonl")):
                    os.remove(os.path.join(d, "kept.jsonl"))
            if os.path.exists(os.path.join(d, "clusters.jsonl")) and not os.path.exists(os.path.join(d, "FAILED")):
                cmd = [n, "eval", "--truth", os.path.join(cdir_root, name, "truth.jsonl"),
                       "--predicted", os.path.join(d, "clusters.jsonl"), "--json"]
                if name == "sohu-dd":
                    cmd += ["--positive-label", "5"]
                with open(os.path.join(d, "eval.json"), "w") as fh:
                    subprocess.run(cmd, stdout=fh, check=True)

    # ------------------------------------------------------------ report
    mach = machine()
    meta = {
        "date": mach["date"], "cpu": mach["cpu"], "nproc": mach["nproc"], "free_g": mach["free_g"],
        "git": git_describe(), "rustc": mach["rustc"],
        "neardup": subprocess.run([n, "--version"], capture_output=True, text=True).stdout.strip(),
        "python": f"Python {py_version}",
        "command": "bench/run quality" + (" " + " ".join(argv) if argv else ""),
        "reps": args.reps, "td_reps": args.td_reps, "zh_titles_limit": args.zh_titles_limit,
        "en_limit": args.en_limit, "threshold": THRESHOLD, "ngram": NGRAM, "permutations": PERMS,
        "corpora": args.corpora, "tools": args.tools, "seconds_setup": round(t_setup),
        "seconds_before_report": round(time.time() - t_all),
    }
    with open(os.path.join(out, "meta.json"), "w") as fh:
        json.dump(meta, fh, indent=2)
    rargs = [out]
    if not args.no_benchmarks:
        rargs += ["--benchmarks", os.path.join(ROOT, "BENCHMARKS.md")]
    quality_report.main(rargs)
    log(f"done in {time.time() - t_all:.0f} s; results in {common.rel(os.path.join(out, 'results.md'))}"
        + ("" if args.no_benchmarks else " and BENCHMARKS.md"))
    return 0


def run_tool(n: str, out: str, name: str, tool: str, d: str, rep: int, td_ok: bool) -> bool:
    """One measured run of `tool` on corpus `name`; True when it succeeded (or was skipped)."""
    corpus = os.path.join(out, "corpora", name, "corpus.jsonl")
    idf = "" if name == "sohu-dd" else "id"
    idarg = ["--id-field", idf] if idf else []
    m = os.path.join(d, f"measure_rep{rep}.json")
    py = bench_python()
    # neardup rows run at neardup's defaults (auto shingles: 3 characters on CJK, 5 elsewhere;
    # Jaccard 0.4), except neardup-peer-settings, which takes the peers' settings.
    common_args = [n, "dedup", corpus, "-o", os.path.join(d, "kept.jsonl"), "--clusters", os.path.join(d, "clusters.jsonl"),
                   "--stats", os.path.join(d, "stats.json"), *idarg, "--permutations", str(PERMS), "--quiet",
                   "--threads", "2"]
    peer = py + ["neardup_bench.quality_peers", corpus, "--clusters", os.path.join(d, "clusters.jsonl"),
                 "--id-field", idf, "--permutations", str(PERMS), "--info", os.path.join(d, "info.json")]
    if tool == "neardup-minhash":
        cmd = common_args + ["--method", "minhash"]
    elif tool == "neardup-connected":
        cmd = common_args + ["--method", "minhash", "--cluster", "connected"]
    elif tool == "neardup-containment":
        cmd = common_args + ["--method", "minhash", "--measure", "containment", "--threshold", "0.7"]
    elif tool == "neardup-exact":
        cmd = common_args + ["--method", "exact"]
    elif tool == "neardup-simhash":
        cmd = [a for a in common_args if a not in ("--permutations", str(PERMS))] + ["--method", "simhash"]
    elif tool == "neardup-simhash-k3":
        cmd = [a for a in common_args if a not in ("--permutations", str(PERMS))] + [
            "--method", "simhash", "--max-distance", "3", "--verify", "none"]
    elif tool == "neardup-peer-settings":
        cmd = common_args + ["--method", "minhash", "--tokenizer", "token", "--ngram", str(NGRAM),
                             "--threshold", str(THRESHOLD)]
    elif tool in ("datasketch", "rensa", "gaoya", "simhash"):
        cmd = peer + ["--tool", tool, "--threshold", str(THRESHOLD), "--ngram", str(NGRAM), "--simhash-k", "3"]
    elif tool in ("datasketch-auto", "rensa-auto"):
        cmd = peer + ["--tool", tool[: -len("-auto")], "--threshold", "0.4", "--shingles", "auto", "--ngram", "3"]
    elif tool in ("text-dedup", "text-dedup-verified"):
        if not td_ok:
            with open(os.path.join(d, "SKIPPED"), "w") as fh:
                fh.write("text-dedup not available\n")
            return True
        wd = os.path.join(d, "work")
        shutil.rmtree(wd, ignore_errors=True)
        textdedup.prepare_config(corpus, wd, check_false_positive=tool == "text-dedup-verified",
                                 threshold=THRESHOLD, permutations=PERMS, ngram=NGRAM)
        # a fresh Hugging Face cache per run (no reuse of an earlier run's Arrow files), offline
        hf = {"HF_HOME": os.path.join(wd, "hf"), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
        logf = os.path.join(d, f"textdedup_rep{rep}.log")
        with open(logf, "w") as fh:
            rec = measure([sys.executable, "-m", "text_dedup.minhash"], m, cwd=wd, env=hf,
                          stdout=fh, stderr=subprocess.STDOUT)
        if rec["returncode"] != 0:
            with open(logf) as fh:
                sys.stderr.write("".join(fh.readlines()[-20:]))
            return False
        subprocess.run(py + ["neardup_bench.textdedup", "convert", corpus, wd, os.path.join(d, "clusters.jsonl"),
                             os.path.join(d, "info.json"), "--id-field", idf], env=child_env(hf), check=True)
        shutil.rmtree(os.path.join(wd, "hf"), ignore_errors=True)
        for f in os.listdir(os.path.join(wd, "out")):
            if f.endswith(".arrow"):
                os.remove(os.path.join(wd, "out", f))
        return True
    else:
        raise SystemExit(f"unknown tool {tool}")
    return measure(cmd, m)["returncode"] == 0


def build_corpus(n: str, name: str, c: str, data: str, zh_titles_limit: int, en_limit: int) -> None:
    """Builds corpus `name` in folder `c`: corpus.jsonl and truth.jsonl."""
    if name == "zh-titles":
        corpora.distinct_sources(n, c, os.path.join(data, "thucnews-titles", "titles.jsonl"), zh_titles_limit)
        corpora.synth(n, c, os.path.join(c, "sources.jsonl"), 101, "--id-field", "id")
    elif name == "zh-news":
        corpora.sohu_dc_articles(os.path.join(data, "sohu-news-pairs", "dc-test.jsonl"), os.path.join(c, "source.jsonl"))
        corpora.distinct_sources(n, c, os.path.join(c, "source.jsonl"), 1000000)
        corpora.synth(n, c, os.path.join(c, "sources.jsonl"), 102, "--id-field", "id")
    elif name == "en-news":
        corpora.distinct_sources(n, c, os.path.join(data, "reuters21578", "bodies.jsonl"), en_limit)
        corpora.synth(n, c, os.path.join(c, "sources.jsonl"), 103, "--id-field", "id")
    elif name == "zh-wrapped":
        corpora.distinct_sources(n, c, os.path.join(data, "thucnews-titles", "titles.jsonl"), 5000)
        corpora.synth(n, c, os.path.join(c, "sources.jsonl"), 104, "--id-field", "id",
                      "--wrappers", "40", "--rewrap", "0.2", "--templates", "500")
    elif name == "en-wrapped":
        corpora.distinct_sources(n, c, os.path.join(data, "reuters21578", "bodies.jsonl"), 2000)
        corpora.synth(n, c, os.path.join(c, "sources.jsonl"), 105, "--id-field", "id",
                      "--wrappers", "40", "--rewrap", "0.2", "--templates", "300")
    elif name == "sohu-dd":
        corpora.sohu_dd_corpus(os.path.join(data, "sohu-news-pairs", "dd-test.jsonl"), os.path.join(c, "corpus.jsonl"))
        shutil.copy(os.path.join(data, "sohu-news-pairs", "dd-test.jsonl"), os.path.join(c, "truth.jsonl"))
    elif name == "clough":
        corpora.clough(os.path.join(data, "clough-stevenson-plagiarism", "docs.jsonl"),
                       os.path.join(c, "corpus.jsonl"), os.path.join(c, "truth.jsonl"))
    else:
        raise SystemExit(f"unknown corpus {name}")
