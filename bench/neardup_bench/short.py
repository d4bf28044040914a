"""`short`: the exact short-text joins (`--method join`) at a million documents, side by side
with the seed's all-m-gram index (`--method ngram`), our MinHash-LSH and datasketch's
MinHashLSH, in one run.

Corpora (built into OUT/corpora, deterministic for a seed):
  zh  short Chinese texts: titles made of the first half of one THUCNews headline and the
      second half of another, and (one in five) weibo-length posts of 3-7 headlines up to
      140 characters; then `neardup synth` adds edited copies of every kind of edit
      (characters, words, script, insertions, deletions, punctuation, width, boilerplate,
      truncation, swaps) with its truth file.
  en  short English texts the same way from Reuters-21578 sentences (posts up to 280
      characters).
  zh-flood  the zh corpus with one phrase (`转发微博`) put before one document in ten: a
      bigram in 10% of the documents, to show that common tokens cost no quadratic work.

Runs per corpus (wall time and peak RSS of each process, `measure`):
  join   Jaccard 0.6 and 0.8 (token bigrams: one token per CJK character and per word, the
         shingles datasketch gets from shingles.py), edit similarity 0.8 and 0.9
  ngram  at Jaccard 0.8 and edit 0.9 (the settings with targets), with the default bucket cap
         (1000), and on zh once uncapped (the seed as written) at edit 0.9, under --ngram-timeout
  minhash  Jaccard 0.6 and 0.8, same shingles, boilerplate handling off
  datasketch  MinHashLSH at Jaccard 0.6 and 0.8, same shingles, candidates verified by exact
         Jaccard (peers.py)
Each approximate result is scored against the exact join at the same measure and threshold
(recall = its pairs found by the tool / the join's pairs; precision = its pairs that the join
also has / its pairs), and every neardup clusters file against the synth truth with
`neardup eval`. Writes OUT/results.md and OUT/results.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import time

from . import common
from .common import bench_python, find_data, git_describe, log, machine, measure, neardup_binary

SET_ARGS = ["--tokenizer", "token", "--ngram", "2", "--chinese-variant", "keep"]
SETTINGS = [("jaccard", 0.6), ("jaccard", 0.8), ("edit", 0.8), ("edit", 0.9)]


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--size", type=int, default=1_000_000, help="documents per corpus (about)")
    ap.add_argument("--langs", default="zh en zh-flood", help="corpora to run")
    ap.add_argument("--timeout", type=float, default=900, help="seconds before a run is stopped")
    ap.add_argument("--ngram-timeout", type=float, default=300,
                    help="seconds before a run of the all-m-gram reference is stopped")
    ap.add_argument("--tools", default="join ngram ngram-uncapped minhash datasketch")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bin", help="neardup binary (default: cargo build, target/release/neardup)")
    ap.add_argument("--no-build", action="store_true", help="use target/release/neardup as it is")
    ap.add_argument("--data", help="shared data folder (default $NEARDUP_DATA or ../shared/data)")
    ap.add_argument("--out", default=os.path.join(common.DEFAULT_OUT, "short"),
                    help="output folder, emptied first (default bench/out/short)")
    ap.add_argument("--report-only", action="store_true",
                    help="rewrite OUT/results.md from OUT/results.json, running nothing")


# ---------------------------------------------------------------------------------------------
# Corpora


def zh_sources(data: str, n: int, rng: random.Random) -> list[str]:
    titles = [r["text"].strip() for r in common.read_jsonl(os.path.join(data, "thucnews-titles/titles.jsonl"))]
    titles = [t for t in titles if len(t) >= 6]
    heads = [t[: len(t) // 2] for t in titles]
    tails = [t[len(t) // 2:] for t in titles]
    out: dict[str, None] = {}
    while len(out) < n:
        if rng.random() < 0.2:
            parts = [rng.choice(titles) for _ in range(rng.randint(3, 7))]
            text = ""
            for p in parts:
                if len(text) + len(p) + 1 > 140:
                    break
                text += p + rng.choice("，。！ ")
            text = text.strip()
        else:
            text = rng.choice(heads) + rng.choice(tails)
        out.setdefault(text)
    return list(out)


def en_sources(data: str, n: int, rng: random.Random) -> list[str]:
    sentences = []
    for r in common.read_jsonl(os.path.join(data, "reuters21578/bodies.jsonl")):
        for s in re.split(r"(?<=[.!?])\s+", " ".join(r["text"].split())):
            if 40 <= len(s) <= 240 and not s.lower().startswith("reuter"):
                sentences.append(s)
    words = [s.split() for s in sentences]
    out: dict[str, None] = {}
    while len(out) < n:
        if rng.random() < 0.2:
            text = ""
            for _ in range(rng.randint(2, 3)):
                s = rng.choice(sentences)
                if len(text) + len(s) + 1 > 280:
                    break
                text += s + " "
            text = text.strip()
        else:
            a, b = rng.choice(words), rng.choice(words)
            text = " ".join(a[: len(a) // 2] + b[len(b) // 2:])
        if text:
            out.setdefault(text)
    return list(out)


def build_corpus(binary: str, lang: str, data: str, size: int, seed: int, cdir: str) -> dict:
    os.makedirs(cdir, exist_ok=True)
    corpus, truth = os.path.join(cdir, "corpus.jsonl"), os.path.join(cdir, "truth.jsonl")
    rng = random.Random(seed)
    # synth adds about 0.1 x 1.5 edited copies and 0.02 hard negatives per source.
    n_src = round(size / 1.17)
    sources = (zh_sources if lang.startswith("zh") else en_sources)(data, n_src, rng)
    src = os.path.join(cdir, "sources.jsonl")
    common.write_jsonl(src, ({"id": f"s{i}", "text": t} for i, t in enumerate(sources)))
    subprocess.run([binary, "synth", src, "-o", corpus, "--truth", truth, "--id-field", "id",
                    "--duplicate-rate", "0.1", "--max-variants", "2", "--hard-negatives", "0.02",
                    "--seed", str(seed), "-q"], check=True)
    os.remove(src)
    if lang == "zh-flood":
        rows = list(common.read_jsonl(corpus))
        for i, row in enumerate(rows):
            if i % 10 == 0:
                row["text"] = "转发微博" + row["text"]
        common.write_jsonl(corpus, rows)
    docs = sum(1 for _ in open(corpus, encoding="utf-8"))
    chars = sum(len(r["text"]) for r in common.read_jsonl(corpus))
    return {"path": corpus, "truth": truth, "documents": docs, "mean_chars": chars / max(docs, 1),
            "bytes": os.path.getsize(corpus)}


# ---------------------------------------------------------------------------------------------
# Runs


def neardup_run(binary: str, corpus: dict, method: str, measure_name: str, threshold: float,
                rdir: str, timeout: float, extra: list[str] | None = None) -> dict:
    name = f"{method}-{measure_name}-{threshold}" + ("-uncapped" if extra and "--bucket-cap" in extra else "")
    os.makedirs(rdir, exist_ok=True)
    files = {k: os.path.join(rdir, f"{name}.{k}") for k in ("out", "clusters", "pairs", "stats")}
    method_args = ["--method", method, "--threshold", str(threshold)]
    if method == "minhash":
        method_args += SET_ARGS + ["--max-df", "off", "--boilerplate-df", "off"]
    else:
        method_args += ["--measure", measure_name] + (SET_ARGS if measure_name != "edit" else [])
    cmd = [binary, "dedup", corpus["path"], "-o", files["out"], "--clusters", files["clusters"],
           "--pairs", files["pairs"], "--stats", files["stats"], "--id-field", "id", "-q",
           *method_args, *(extra or [])]
    log(" ".join(os.path.relpath(c) if os.path.exists(c) else c for c in cmd))
    rec = measure(cmd, os.path.join(rdir, f"{name}.measure.json"), timeout=timeout)
    result = {"name": name, "tool": method + ("-uncapped" if "uncapped" in name else ""),
              "measure": measure_name, "threshold": threshold, "seconds": rec["wall_seconds"],
              "peak_rss_bytes": rec["peak_rss_bytes"], "timed_out": rec.get("timed_out", False),
              "returncode": rec["returncode"], "command": cmd}
    if rec["returncode"] == 0 and not result["timed_out"]:
        stats = json.load(open(files["stats"]))
        result["stats"] = {k: stats.get(k) for k in ("candidate_pairs", "verified_pairs", "largest_bucket",
                                                       "capped_buckets", "capped_out", "candidate_comparisons",
                                                       "removed", "seconds")}
        result["pairs_file"] = files["pairs"]
        result["clusters_file"] = files["clusters"]
        ev = subprocess.run([binary, "eval", "--truth", corpus["truth"], "--predicted", files["clusters"],
                             "--json"], capture_output=True, text=True)
        if ev.returncode == 0:
            result["eval"] = json.loads(ev.stdout)
    for k in ("out",):
        if os.path.exists(files[k]):
            os.remove(files[k])
    return result


def datasketch_run(corpus: dict, threshold: float, rdir: str, timeout: float) -> dict:
    name = f"datasketch-jaccard-{threshold}"
    d = os.path.join(rdir, name)
    os.makedirs(d, exist_ok=True)
    res = os.path.join(d, "result.json")
    cmd = [*bench_python(), "neardup_bench.peers", corpus["path"], "--tool", "datasketch", "--threshold",
           str(threshold), "--ngram", "2", "--out-dir", d, "--result", res]
    log(" ".join(cmd))
    rec = measure(cmd, os.path.join(rdir, f"{name}.measure.json"), timeout=timeout)
    result = {"name": name, "tool": "datasketch", "measure": "jaccard", "threshold": threshold,
              "seconds": rec["wall_seconds"], "peak_rss_bytes": rec["peak_rss_bytes"],
              "timed_out": rec.get("timed_out", False), "returncode": rec["returncode"], "command": cmd}
    if rec["returncode"] == 0 and os.path.exists(res):
        r = json.load(open(res))
        result["stats"] = {"candidate_pairs": r["candidate_pairs"], "verified_pairs": r.get("verified_pairs"),
                           "lsh": r["lsh"]}
        result["index_pairs_file"] = r.get("verified_file")
    return result


def load_pairs(result: dict, ids: list[str] | None) -> set[tuple[str, str]] | None:
    pairs: set[tuple[str, str]] = set()
    if result.get("pairs_file"):
        with open(result["pairs_file"], encoding="utf-8") as fh:
            for line in fh:
                p = json.loads(line)
                a, b = str(p["a"]), str(p["b"])
                pairs.add((a, b) if a < b else (b, a))
        return pairs
    if result.get("index_pairs_file") and ids is not None:
        with open(result["index_pairs_file"]) as fh:
            for line in fh:
                i, j = line.split("\t")[:2]
                a, b = ids[int(i)], ids[int(j)]
                pairs.add((a, b) if a < b else (b, a))
        return pairs
    return None


def score(results: list[dict], ids: list[str]) -> None:
    """Recall and precision of every run against the exact join at its measure and threshold."""
    exact = {(r["measure"], r["threshold"]): r for r in results if r["tool"] == "join"}
    cache: dict[str, set] = {}
    for r in results:
        ref = exact.get((r["measure"], r["threshold"]))
        if ref is None or r is ref:
            continue
        truth = cache.get(ref["name"])
        if truth is None:
            truth = load_pairs(ref, ids)
            if truth is None:
                continue
            cache[ref["name"]] = truth
        found = load_pairs(r, ids)
        if found is None:
            continue
        common_pairs = len(found & truth)
        r["vs_join"] = {"join_pairs": len(truth), "pairs": len(found),
                        "recall": common_pairs / len(truth) if truth else 1.0,
                        "precision": common_pairs / len(found) if found else 1.0}
        if r["tool"] != "datasketch":
            r["vs_join"]["speedup_of_join"] = r["seconds"] / ref["seconds"] if ref["seconds"] else None


# ---------------------------------------------------------------------------------------------
# Report


def fmt_mb(b) -> str:
    return f"{b / 2**20:,.0f}" if b else "-"


def report(results_by_corpus: dict, corpora: dict, meta: dict) -> str:
    lines = [f"Machine: {meta['machine']['cpu']}, {meta['machine']['nproc']} cores; {meta['machine']['rustc']}; "
             f"{meta['machine']['date']}; neardup {meta['git']}.", "",
             f"Command: `{meta['command']}`", ""]
    for lang, results in results_by_corpus.items():
        c = corpora[lang]
        lines += [f"### {lang}: {c['documents']:,} documents, {c['mean_chars']:.1f} characters on average", "",
                  "| tool | measure | threshold | seconds | peak MB | pairs (copies expanded) | recall vs join | precision vs join "
                  "| join faster by | P / R / F1 vs synth truth | notes |",
                  "|---|---|---|---:|---:|---:|---:|---:|---:|---|---|"]
        for r in results:
            if r["timed_out"] or r["returncode"] != 0:
                lines.append(f"| {r['tool']} | {r['measure']} | {r['threshold']} | "
                             f"{'>' if r['timed_out'] else ''}{r['seconds']:.1f} | {fmt_mb(r['peak_rss_bytes'])} | "
                             f"- | - | - | - | - | {'stopped at the timeout' if r['timed_out'] else 'failed'} |")
                continue
            st = r.get("stats", {})
            # Every verified pair, exact copies expanded (what --pairs lists), as scored.
            pairs = r.get("vs_join", {}).get("pairs")
            if pairs is None and r.get("pairs_file") and os.path.exists(r["pairs_file"]):
                pairs = sum(1 for _ in open(r["pairs_file"], encoding="utf-8"))
            v = r.get("vs_join", {})
            ev = r.get("eval")
            prf = (f"{ev['precision']:.3f} / {ev['recall']:.3f} / {ev['f1']:.3f}"
                   if ev and "precision" in ev else "-")
            notes = []
            if st.get("capped_out"):
                notes.append(f"{st['capped_buckets']} capped buckets left out {st['capped_out']:,} documents")
            if st.get("candidate_comparisons"):
                notes.append(f"{st['candidate_comparisons']:,} comparisons")
            if st.get("lsh"):
                notes.append(f"b={st['lsh']['bands']}, r={st['lsh']['rows']}")
            sp = v.get("speedup_of_join")
            cells = [r["tool"], r["measure"], str(r["threshold"]), f"{r['seconds']:.1f}",
                     fmt_mb(r["peak_rss_bytes"]), f"{pairs:,}" if pairs is not None else "-"]
            if v:
                cells += [f"{v['recall']:.4f}", f"{v['precision']:.4f}"]
            elif r["tool"] == "join":
                cells += ["(exact)", "(exact)"]
            else:
                cells += ["-", "-"]
            cells += [f"{sp:.1f}x" if sp else "-", prf, "; ".join(notes)]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def main(args) -> int:
    if args.report_only:
        saved = json.load(open(os.path.join(os.path.abspath(args.out), "results.json")))
        text = report(saved["results"], saved["corpora"], saved["meta"])
        with open(os.path.join(os.path.abspath(args.out), "results.md"), "w") as fh:
            fh.write(text + "\n")
        print(text)
        return 0
    t_all = time.time()
    data = find_data(args.data)
    out = os.path.abspath(args.out)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    binary = common.private_copy(neardup_binary(args.bin, not args.no_build), os.path.join(out, "bin"))
    tools = args.tools.split()
    corpora, results_by_corpus = {}, {}
    for lang in args.langs.split():
        log(f"building {lang} ({args.size:,} documents)")
        corpora[lang] = build_corpus(binary, lang, data, args.size, args.seed, os.path.join(out, "corpora", lang))
        corpus = corpora[lang]
        rdir = os.path.join(out, "runs", lang)
        results = []
        targets = [("jaccard", 0.8), ("edit", 0.9)]
        for measure_name, t in SETTINGS:
            if lang == "zh-flood" and (measure_name, t) not in targets:
                continue
            if "join" in tools:
                results.append(neardup_run(binary, corpus, "join", measure_name, t, rdir, args.timeout))
            # The reference at the two settings with targets, under its own (shorter) timeout.
            if "ngram" in tools and (measure_name, t) in targets:
                results.append(neardup_run(binary, corpus, "ngram", measure_name, t, rdir, args.ngram_timeout))
            if "ngram-uncapped" in tools and (measure_name, t) == ("edit", 0.9) and lang == "zh":
                results.append(neardup_run(binary, corpus, "ngram", measure_name, t, rdir, args.ngram_timeout,
                                           ["--bucket-cap", str(2**62)]))
            if measure_name == "jaccard" and "minhash" in tools:
                results.append(neardup_run(binary, corpus, "minhash", measure_name, t, rdir, args.timeout))
            if measure_name == "jaccard" and "datasketch" in tools and lang != "zh-flood":
                results.append(datasketch_run(corpus, t, rdir, args.timeout))
        ids = [str(r["id"]) for r in common.read_jsonl(corpus["path"])]
        score(results, ids)
        results_by_corpus[lang] = results
        with open(os.path.join(out, "results.json"), "w") as fh:
            json.dump({"corpora": corpora, "results": results_by_corpus}, fh, indent=2, default=str)
    meta = {"machine": machine(), "git": git_describe(),
            "command": "bench/run short " + " ".join(f"--{k.replace('_', '-')} {v}" for k, v in
                                                     (("size", args.size), ("langs", f"'{args.langs}'"),
                                                      ("tools", f"'{args.tools}'"), ("timeout", args.timeout),
                                                      ("ngram_timeout", args.ngram_timeout)))}
    with open(os.path.join(out, "results.json"), "w") as fh:
        json.dump({"corpora": corpora, "results": results_by_corpus, "meta": meta}, fh, indent=2, default=str)
    text = report(results_by_corpus, corpora, meta)
    with open(os.path.join(out, "results.md"), "w") as fh:
        fh.write(text + "\n")
    print(text)
    log(f"done in {time.time() - t_all:.0f} s: {os.path.relpath(out)}/results.md")
    return 0
