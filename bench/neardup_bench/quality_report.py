"""Tables of `quality`: reads its output folder, writes results.md and results.json,
and puts the same text into BENCHMARKS.md as the section SECTION (replacing an earlier
copy of that section, or appending it).

usage: main([OUT_DIR, "--benchmarks", BENCHMARKS.md, "--notes", quality_notes.md])
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import statistics
import sys

SECTION = "## Quality against peers (P, R, F1, ARI)"

CORPUS_INFO = {
    "zh-titles": ("zh", "`neardup synth` of THUCNews headlines (`thucnews-titles/titles.jsonl`)",
                  "short Chinese texts (about 20 characters)"),
    "zh-news": ("zh", "`neardup synth` of the Sohu dc-test `sentence2` articles (`sohu-news-pairs/dc-test.jsonl`)",
                "long Chinese news articles (about 1,000 characters)"),
    "en-news": ("en", "`neardup synth` of Reuters-21578 bodies (`reuters21578/bodies.jsonl`)",
                "English newswire (sources thinned of near-duplicates first)"),
    "zh-wrapped": ("zh", "`neardup synth --wrappers 40 --rewrap 0.2 --templates 500` of the first 5,000 distinct THUCNews "
                   "headlines (`thucnews-titles/titles.jsonl`)",
                   "short Chinese bodies inside shared account headers and footers longer than they are (hard negatives), "
                   "re-wrapped copies (positives) and template notices differing only in numbers and names"),
    "en-wrapped": ("en", "`neardup synth --wrappers 40 --rewrap 0.2 --templates 300` of the first 2,000 distinct Reuters-21578 "
                   "bodies (`reuters21578/bodies.jsonl`)",
                   "English newswire inside shared publisher headers and footers (hard negatives), re-wrapped copies "
                   "(positives) and template notices differing only in numbers and names"),
    "sohu-dd": ("zh", "Sohu dd-test pairs (`sohu-news-pairs/dd-test.jsonl`), sentence1 and sentence2 of each row as two records",
                "labelled pairs: label 5 = same event (positive), 3 = same topic, 0 = unrelated"),
    "clough": ("en", "Clough & Stevenson short answers (`clough-stevenson-plagiarism/docs.jsonl`)",
               "labelled: cut/light answers clustered with their task's source text; heavy and non singletons"),
}

TOOL_INFO = {
    "neardup-minhash": "neardup `--method minhash` at its defaults: Jaccard 0.4 on `auto` shingles (3 characters on CJK "
                       "text, 5 elsewhere), 128 permutations, bands derived (42 x 3), every candidate verified, "
                       "`--cluster representative`, traditional Chinese converted to simplified",
    "neardup-connected": "same, `--cluster connected` (union-find over verified pairs, like the peers' clustering)",
    "neardup-containment": "same shingles, `--measure containment --threshold 0.7` (|A∩B| / min(|A|,|B|) >= 0.7; LSH tuned for 0.28)",
    "neardup-peer-settings": "neardup `--method minhash --tokenizer token --ngram 5 --threshold 0.7`: the peers' settings and "
                             "shingles (neardup's defaults before 2026-11-22), every candidate verified",
    "neardup-exact": "neardup `--method exact` (128-bit hash of the normalised text)",
    "neardup-simhash": "neardup `--method simhash` at its defaults (64-bit SimHash of 2-character shingles, 4 on "
                       "non-CJK text, with term-frequency weights; exact Hamming join within the length-aware "
                       "`--max-distance`; every candidate verified by Jaccard >= 0.4)",
    "neardup-simhash-k3": "neardup `--method simhash --max-distance 3 --verify none`: the seeds' and the PyPI "
                          "`simhash` index's setting, the distance alone decides",
    "datasketch": "datasketch 2.0.0 MinHash + MinHashLSH (its own 14 x 9 bands), union-find over LSH query results, no verification",
    "rensa": "rensa 0.5.0 RMinHash + RMinHashLSH (16 x 8 bands), union-find over LSH query results, no verification",
    "gaoya": "gaoya 0.2.2 MinHashStringIndex (32-bit hashes, its own 32 x 4 bands; its query keeps results whose "
             "signature-estimated Jaccard is >= 0.7), union-find over query results",
    "simhash": "PyPI `simhash` 2.1.2: Simhash(text) with its default features (4-character windows), 64 bits, "
               "SimhashIndex k = 3, union-find over get_near_dups",
    "text-dedup": "text-dedup 0.4.1 CLI `python -m text_dedup.minhash` (config.toml), its own tokeniser (split on \\W) "
                  "and defaults; `ngram_size` 5, threshold 0.7, 128 permutations; `check_false_positive` false (its default)",
    "text-dedup-verified": "same with `check_false_positive = true` (candidates in a cluster checked by exact Jaccard)",
    "datasketch-auto": "datasketch as above, given neardup's default shingles and threshold instead (`shingles.py` "
                       "`auto_shingles`: 3 characters on CJK, 5 elsewhere; threshold 0.4), no verification",
    "rensa-auto": "rensa as above, given neardup's default shingles and threshold (0.4), no verification",
}

EDIT_ORDER = ["char-sub", "word-sub", "script", "insert", "delete", "punct", "width", "boilerplate", "truncate", "swap"]


def load(path, default=None):
    try:
        with open(path) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return default


def read_text(path, default=""):
    try:
        with open(path) as fh:
            return fh.read()
    except OSError:
        return default


def fmt(x, nd=4):
    return "" if x is None else f"{x:.{nd}f}"


def fmt_int(x):
    return "" if x is None else f"{x:,}"


def corpus_stats(path):
    n = b = chars = 0
    with open(path, "rb") as fh:
        for line in fh:
            if line.strip():
                n += 1
                b += len(line)
                chars += len(json.loads(line).get("text") or "")
    return n, b, chars / n if n else 0


def distinct_clusters(path):
    seen = set()
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                seen.add(json.dumps(json.loads(line)["cluster"]))
    return len(seen)


def run_record(out, corpus, tool):
    d = os.path.join(out, "runs", corpus, tool)
    rec = {"corpus": corpus, "tool": tool, "status": "ok"}
    if os.path.exists(os.path.join(d, "SKIPPED")):
        rec["status"] = "skipped: " + read_text(os.path.join(d, "SKIPPED")).strip()
        return rec
    if os.path.exists(os.path.join(d, "FAILED")):
        rec["status"] = "failed (" + read_text(os.path.join(d, "FAILED")).strip().replace("\n", ", ") + ")"
    ms = [load(p) for p in sorted(glob.glob(os.path.join(d, "measure_rep*.json")))]
    ms = [m for m in ms if m and m.get("returncode") == 0]
    if ms:
        walls = [m["wall_seconds"] for m in ms]
        rss = [m["peak_rss_bytes"] / 2**20 for m in ms]
        rec["wall_s"] = statistics.median(walls)
        rec["walls"] = walls
        rec["rss_mb"] = statistics.median(rss)
    shas = {read_text(p).strip() for p in glob.glob(os.path.join(d, "clusters_rep*.sha256"))}
    rec["reps"] = len(ms)
    rec["identical_across_reps"] = len(shas) <= 1
    ev = load(os.path.join(d, "eval.json"))
    if ev is None:
        if rec["status"] == "ok":
            rec["status"] = "no eval"
        return rec
    rec["eval"] = ev
    rec["precision"] = ev.get("precision")
    rec["recall"] = ev.get("recall")
    rec["f1"] = ev.get("f1")
    rec["ari"] = ev.get("adjusted_rand_index")
    info = load(os.path.join(d, "info.json"), {})
    rec["info"] = info
    stats = load(os.path.join(d, "stats.json"), {})
    if tool.startswith("text-dedup") and "output_documents" in info:
        rec["output_docs"] = info["output_documents"]
    elif stats.get("kept") is not None:
        rec["output_docs"] = stats["kept"]
    elif os.path.exists(os.path.join(d, "clusters.jsonl")):
        rec["output_docs"] = distinct_clusters(os.path.join(d, "clusters.jsonl"))
    if stats:
        rec["neardup_params"] = stats.get("method", {}).get("params")
    return rec


def edit_table(recs, corpus):
    """rows = edit types, columns = tools; cell = recall over the copies whose edits include it."""
    tools = [r for r in recs if r.get("eval") and "categories" in r["eval"]]
    if not tools:
        return []
    cats = tools[0]["eval"]["categories"]
    rows = []

    def agg(r, pred):
        t = c = p = docs = 0
        for name, v in r["eval"]["categories"].items():
            if pred(name):
                t += v["partners"]["truth"]
                c += v["partners"]["common"]
                p += v["partners"]["predicted"]
                docs += v["documents"]
        return docs, t, c, p

    present = set()
    for name in cats:
        present.update(name.split("+"))
    specs = [("original (the source document)", lambda n: n == "original")]
    for e in EDIT_ORDER:
        if e in present:
            specs.append((f"{e}", lambda n, e=e: n not in ("original", "hard_negative") and e in n.split("+")))
    extra = sorted(present - set(EDIT_ORDER) - {"original", "hard_negative"})
    for e in extra:
        specs.append((f"{e}", lambda n, e=e: e in n.split("+")))
    specs.append(("one edit", lambda n: n not in ("original", "hard_negative") and "+" not in n))
    specs.append(("two edits", lambda n: "+" in n))
    lines = ["| edit type | docs | partners | " + " | ".join(r["tool"] for r in tools) + " |",
             "|---|---:|---:|" + "---:|" * len(tools)]
    for label, pred in specs:
        docs, t, _, _ = agg(tools[0], pred)
        if docs == 0:
            continue
        cells = []
        for r in tools:
            _, tt, c, _ = agg(r, pred)
            cells.append(fmt(c / tt, 3) if tt else "")
        lines.append(f"| {label} | {docs:,} | {t:,} | " + " | ".join(cells) + " |")
    if "hard_negative" in cats:
        docs = cats["hard_negative"]["documents"]
        cells = []
        for r in tools:
            v = r["eval"]["categories"].get("hard_negative", {"partners": {"predicted": 0, "common": 0}})
            cells.append(str(v["partners"]["predicted"] - v["partners"]["common"]))
        lines.append(f"| hard negatives: false partners (count, lower is better) | {docs:,} | 0 | " + " | ".join(cells) + " |")
    rows.extend(lines)
    return rows


def clough_table(recs):
    tools = [r for r in recs if r.get("eval") and "categories" in r["eval"]]
    if not tools:
        return []
    lines = ["| category | docs | truth partners | " + " | ".join(r["tool"] for r in tools) + " |",
             "|---|---:|---:|" + "---:|" * len(tools)]
    cats = tools[0]["eval"]["categories"]
    for cat in ["orig", "cut", "light", "heavy", "non"]:
        if cat not in cats:
            continue
        v0 = cats[cat]
        cells = []
        for r in tools:
            v = r["eval"]["categories"][cat]["partners"]
            if v0["partners"]["truth"]:
                cells.append(f"{v['common']}/{v['truth']}" + (f" (+{v['predicted'] - v['common']} false)" if v["predicted"] > v["common"] else ""))
            else:
                cells.append(f"{v['predicted'] - v['common']} false")
        lines.append(f"| {cat} | {v0['documents']} | {v0['partners']['truth']} | " + " | ".join(cells) + " |")
    return lines


def sohu_table(recs):
    tools = [r for r in recs if r.get("eval") and "labels" in r["eval"]]
    if not tools:
        return []
    lines = ["| label | pairs | " + " | ".join(r["tool"] for r in tools) + " |", "|---|---:|" + "---:|" * len(tools)]
    for lab in sorted(tools[0]["eval"]["labels"], key=lambda s: -float(s)):
        pairs = tools[0]["eval"]["labels"][lab]["pairs"]
        cells = [str(r["eval"]["labels"][lab]["predicted_duplicates"]) for r in tools]
        lines.append(f"| {lab} | {pairs} | " + " | ".join(cells) + " |")
    return lines


def false_pair_sources(out, corpus, recs, threshold):
    """For a synth corpus: each tool's false pairs, and how many of them join documents of two
    sources whose own shingle Jaccard (shingles.py, 5-token) is >= threshold, i.e. real
    near-duplicates among the source texts that the synth truth keeps apart."""
    from neardup_bench import shingles as sh

    cdir = os.path.join(out, "corpora", corpus)
    truth, text = {}, {}
    with open(os.path.join(cdir, "truth.jsonl"), encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                d = json.loads(line)
                truth[json.dumps(d["id"])] = json.dumps(d["cluster"])
    with open(os.path.join(cdir, "corpus.jsonl"), encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                d = json.loads(line)
                text[json.dumps(d["id"])] = d.get("text") or ""
    cache: dict = {}

    def sim(ca, cb):
        key = (ca, cb) if ca < cb else (cb, ca)
        if key not in cache:
            if ca in text and cb in text:
                cache[key] = sh.jaccard(sh.shingles(text[ca]), sh.shingles(text[cb]))
            else:
                cache[key] = None
        return cache[key]

    rows = []
    for r in recs:
        p = os.path.join(out, "runs", corpus, r["tool"], "clusters.jsonl")
        if not r.get("eval") or not os.path.exists(p):
            continue
        groups: dict = {}
        with open(p, encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    d = json.loads(line)
                    groups.setdefault(json.dumps(d["cluster"]), []).append(json.dumps(d["id"]))
        false = near = 0
        for members in groups.values():
            if len(members) < 2 or len(members) > 5000:
                continue
            by_src: dict = {}
            for m in members:
                by_src[truth.get(m)] = by_src.get(truth.get(m), 0) + 1
            srcs = list(by_src)
            for i in range(len(srcs)):
                for j in range(i + 1, len(srcs)):
                    n = by_src[srcs[i]] * by_src[srcs[j]]
                    false += n
                    s_ = sim(srcs[i], srcs[j]) if srcs[i] and srcs[j] else None
                    if s_ is not None and s_ >= threshold:
                        near += n
        rows.append((r["tool"], false, near))
    return rows


def synth_summary(out, corpus):
    txt = read_text(os.path.join(out, "corpora", corpus, "synth.log")).strip()
    return [ln.replace("neardup: ", "") for ln in txt.splitlines() if ln.startswith("neardup: ")]


def freeze_version(path, pkg):
    for ln in read_text(path).splitlines():
        if ln.lower().startswith(pkg.lower() + "=="):
            return ln.split("==", 1)[1]
    return None


def parse_args(argv):
    """The command line: the output folder of `quality`, where to put the section, the notes."""
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--benchmarks")
    ap.add_argument("--notes", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "quality_notes.md"))
    return ap.parse_args(argv)


def header_section(meta: dict, env: str) -> list[str]:
    """The section's title and introduction, then how the run was made: command, date, code,
    machine, Python packages, settings and timing (ENV = the run's env/ folder)."""
    md = [SECTION, ""]
    md.append("How neardup's methods compare with the usual open-source near-duplicate tools on the shared "
              "data and on `neardup synth` corpora made from it, Chinese and English. Every tool writes one "
              "`{\"id\",\"cluster\"}` row per document and `neardup eval` scores all of them the same way.")
    md.append("")
    md.append(f"- **Command:** `{meta.get('command', 'bench/run quality')}`. "
              f"The whole run took **{meta.get('seconds_before_report', 0)} s** "
              f"(about {round(meta.get('seconds_before_report', 0) / 60)} min), of which {meta.get('seconds_setup', '?')} s "
              "were the cargo build (a no-op build takes seconds); `bench/run` makes the Python environment "
              "`bench/.venv` before that (about 1.5 min on a fresh machine, seconds when it exists).")
    md.append(f"- **Date:** {meta.get('date')}. **Code:** git commit {meta.get('git')}; `{meta.get('neardup')}`, {meta.get('rustc')}.")
    md.append(f"- **Machine:** {meta.get('cpu')} (lscpu model name), `nproc` = {meta.get('nproc')}; `free -g`:")
    md.append("")
    md.append("```")
    md.append(meta.get("free_g", ""))
    md.append("```")
    md.append("")
    fz = os.path.join(env, "python.freeze")
    md.append(f"- **Python:** {meta.get('python')} (`bench/.venv`, from `bench/requirements.txt`) for datasketch "
              f"{freeze_version(fz, 'datasketch')}, rensa {freeze_version(fz, 'rensa')}, gaoya "
              f"{freeze_version(fz, 'gaoya')}, simhash {freeze_version(fz, 'simhash')} (numpy "
              f"{freeze_version(fz, 'numpy')}).")
    td = read_text(os.path.join(env, "textdedup.status")).strip()
    if td.startswith("ok"):
        md.append(f"- **text-dedup:** {freeze_version(fz, 'text-dedup')} in the same environment (it requires "
                  f"Python >= 3.12), with datasets {freeze_version(fz, 'datasets')}, polars "
                  f"{freeze_version(fz, 'polars')}. (text-dedup 0.4.0, the newest release pip accepts on 3.11, has a "
                  "different command line (click options instead of config.toml) and is not run.)")
    else:
        md.append(f"- **text-dedup:** {td}. The text-dedup rows are absent.")
    md.append(f"- **Settings:** the peers run at threshold {meta.get('threshold')}, {meta.get('permutations')} permutations, "
              f"{meta.get('ngram')}-token shingles where the tool takes shingles (datasketch, rensa and gaoya get the "
              "shingles of `neardup --tokenizer token` from `bench/neardup_bench/shingles.py`, checked against the binary by "
              "`bench/tests/test_shingles.py`: NFKC, lowercase, punctuation to spaces, "
              "one token per CJK character, one per word otherwise); simhash and text-dedup tokenise the text themselves. "
              "The `neardup-*` rows run at neardup's own defaults (Jaccard 0.4 on `auto` character shingles), "
              "`neardup-peer-settings` at the peers' settings, and `datasketch-auto` / `rensa-auto` give the peers "
              "neardup's default shingles and threshold, so both differences (shingles, verification) can be read off. "
              "neardup runs with `--threads 2`; gaoya's bulk calls and text-dedup use both cores too.")
    md.append(f"- **Timing:** wall seconds and peak RSS (`measure` in `bench/neardup_bench/common.py`) around the whole process "
              f"(interpreter start, imports, reading, clustering, writing the clusters), median of {meta.get('reps')} runs "
              f"(text-dedup: {meta.get('td_reps', meta.get('reps'))} run{'s' if meta.get('td_reps', 1) != 1 else ''} each, "
              "because each takes 10-30 s). "
              "Peak RSS is the `ru_maxrss` that `wait4` returns for the process: for text-dedup, which forks worker processes, it is the "
              "largest single process, not their sum. The machine is shared and noisy, so small differences in seconds mean little.")
    md.append("")
    return md


def corpora_table(out: str, corpora: list[str], recs: dict) -> list[str]:
    """### Corpora: one row per corpus (language, source, size, truth, what it tests)."""
    md = []
    md.append("### Corpora")
    md.append("")
    md.append("| corpus | lang | made from | docs | MB | chars/doc | truth | what |")
    md.append("|---|---|---|---:|---:|---:|---|---|")
    for c in corpora:
        p = os.path.join(out, "corpora", c, "corpus.jsonl")
        if not os.path.exists(p):
            continue
        n, b, avg = corpus_stats(p)
        lang, src, what = CORPUS_INFO.get(c, ("", c, ""))
        ev = next((r["eval"] for r in recs[c] if r.get("eval")), None)
        if ev and "pairs" in ev and isinstance(ev["pairs"], dict):
            truth = f"{ev['pairs']['truth']:,} duplicate pairs, {ev['clusters']['truth']:,} clusters"
        elif ev:
            lab = ev.get("labels", {})
            truth = f"{ev['pairs']} labelled pairs, {lab.get('5', {}).get('pairs', '?')} positive"
        else:
            truth = ""
        cmd = read_text(os.path.join(out, "corpora", c, "synth.cmd")).strip()
        if cmd:
            src += f"; `{cmd}`"
        md.append(f"| {c} | {lang} | {src} | {n:,} | {b / 1e6:.2f} | {avg:,.0f} | {truth} | {what} |")
    md.append("")
    return md


def corpora_notes(out: str, corpora: list[str], meta: dict) -> list[str]:
    """Below the corpora table: the source limits and thinning, what synth made of each corpus,
    and how the labelled sets are scored."""
    md = []
    thinned = {}
    for c in corpora:
        try:
            with open(os.path.join(out, "corpora", c, "sources.count")) as fh:
                a, k = fh.read().split()
            thinned[c] = (int(a), int(k))
        except (OSError, ValueError):
            pass
    zl = meta.get("zh_titles_limit", 0)
    el = meta.get("en_limit", 0)
    md.append("Sizes: zh-titles uses " + (f"all 20,000 headlines" if zl >= 20000 else f"the first {zl:,} of the 20,000 headlines")
              + " as sources (`--limit`), en-news " + (f"all 19,043 Reuters bodies" if el >= 19043 else f"the first {el:,} of Reuters' 19,043 bodies")
              + "; zh-news uses all 500 dc-test articles, sohu-dd all 500 pairs, and clough all 100 distinct documents. "
              "The shared Clough file lists each of the 5 `orig` texts twice under one id; the corpus keeps the first. "
              "The limits keep the script well inside 20 minutes: text-dedup and simhash are the slow runs. "
              "Synth settings are its defaults: 30% of the sources get 1-3 edited copies (one or two edits each, strength "
              "0.05), and 5% get a hard negative (same opening, other text). "
              "**Distinct sources:** synth assumes its sources are distinct, and real corpora are not (Reuters repeats "
              "stories with small updates; headlines repeat), which would make the truth call true duplicates false "
              "positives. So the sources are thinned first (`distinct_sources` in `bench/neardup_bench/corpora.py`): neardup clusters "
              "them with a deliberately loose rule (`--tokenizer char --ngram 4 --threshold 0.3 --cluster connected`, "
              "far below any setting scored here) and only the first record of each cluster is kept"
              + "".join(f"; {c}: {a:,} records -> {k:,} sources" for c, (a, k) in thinned.items())
              + ". What synth made:")
    for c in corpora:
        s = synth_summary(out, c)
        if s:
            md.append(f"- {c}: " + "; ".join(s))
    md.append("")
    md.append("Truth of the labelled sets: **sohu-dd** is scored as pairs (`neardup eval` Sohu format, "
              "`--positive-label 5`): a labelled pair is predicted duplicate when both texts are in one cluster; labels "
              "3 and 0 are negatives, and pairs the file does not label are not scored (no ARI). **clough** is scored as "
              "clusters, a choice of this harness: each task's `orig` text with all its `cut` and `light` answers is one "
              "cluster (so two `cut` answers of one task also count as a duplicate pair), every `heavy` and `non` answer "
              "is a singleton; category = the label.")
    md.append("")
    return md


def tools_section(tools: list[str]) -> list[str]:
    """### Tools: what each tool name runs."""
    md = []
    md.append("### Tools")
    md.append("")
    md.append("| tool | what runs |")
    md.append("|---|---|")
    for t in tools:
        md.append(f"| {t} | {TOOL_INFO.get(t, '')} |")
    md.append("")
    return md


def results_section(corpora: list[str], recs: dict) -> list[str]:
    """### Results: P, R, F1, ARI, output size, time and memory of every tool on every corpus,
    the best F1 of each corpus in bold."""
    md = []
    md.append("### Results")
    md.append("")
    md.append("P, R, F1 are over duplicate pairs (two documents in one cluster), for sohu-dd over the labelled pairs. "
              "ARI = adjusted Rand index of the whole clustering (cluster truth only). *out docs* = documents the "
              "tool keeps (one per predicted cluster; for text-dedup, the rows of its output dataset). "
              "Best F1 of each corpus in bold.")
    md.append("")
    md.append("| corpus | tool | P | R | F1 | ARI | out docs (truth) | wall s | peak RSS MB | notes |")
    md.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for c in corpora:
        ok = [r for r in recs[c] if r.get("f1") is not None]
        best = max((r["f1"] for r in ok), default=None)
        ev = next((r["eval"] for r in ok), {})
        truth_kept = ev.get("clusters", {}).get("truth") if isinstance(ev.get("clusters"), dict) else None
        for r in recs[c]:
            notes = []
            if r["status"] != "ok":
                notes.append(r["status"])
            if r.get("reps", 0) > 1 and not r.get("identical_across_reps", True):
                notes.append("**clusters differ between runs**")
            info = r.get("info") or {}
            if r["tool"].startswith("text-dedup") and info:
                if info.get("dropped_short"):
                    notes.append(f"{info['dropped_short']:,} docs with < 5 tokens dropped from its output unscored as duplicates")
            if r["tool"] == "gaoya" and info.get("index"):
                m = re.search(r"bands = (\d+), rows_per_band = (\d+)", info["index"])
                if m and (m.group(1), m.group(2)) != ("32", "4"):
                    notes.append(f"bands {m.group(1)} x {m.group(2)}")
            f1 = fmt(r.get("f1"))
            if f1 and best is not None and abs(r["f1"] - best) < 1e-12:
                f1 = f"**{f1}**"
            od = r.get("output_docs")
            odt = fmt_int(od) + (f" ({truth_kept:,})" if truth_kept is not None and od is not None else "")
            md.append(f"| {c} | {r['tool']} | {fmt(r.get('precision'))} | {fmt(r.get('recall'))} | {f1} | "
                      f"{fmt(r.get('ari'))} | {odt} | {fmt(r.get('wall_s'), 2)} | "
                      f"{fmt(r.get('rss_mb'), 0)} | {'; '.join(notes)} |")
    md.append("")
    if "en-news" in corpora:
        md.append("**en-news:** Reuters-21578 itself contains exact repeats and updated versions of the same "
                  "story; the thinning above removes them from the sources, and the table below counts the false "
                  "pairs that near-duplicate sources would still explain.")
        md.append("")
    return md


def false_pairs_section(out: str, corpora: list[str], tools: list[str], recs: dict, meta: dict) -> list[str]:
    """On the synth corpora: each tool's false pairs, and how many of them the sources explain
    (near-duplicate sources that the synth truth keeps apart)."""
    md = []
    synth_list = [c for c in corpora if os.path.exists(os.path.join(out, "corpora", c, "synth.cmd"))]
    if synth_list:
        thr = meta.get("threshold", 0.7)
        md.append(f"False pairs that the sources explain: a predicted pair is false when its two documents come from "
                  f"different sources; the column *sources J >= {thr}* counts the false pairs whose two sources have a "
                  f"shingle Jaccard of at least {thr} themselves (real near-duplicates among the source texts, which "
                  "the synth truth keeps apart).")
        md.append("")
        fp_rows = {c: false_pair_sources(out, c, recs[c], thr) for c in synth_list}
        md.append("| tool | " + " | ".join(f"{c} false pairs | {c} sources J >= {thr}" for c in synth_list) + " |")
        md.append("|---|" + "---:|---:|" * len(synth_list))
        for t in tools:
            cells = []
            for c in synth_list:
                row = next((x for x in fp_rows[c] if x[0] == t), None)
                cells += [fmt_int(row[1]), fmt_int(row[2])] if row else ["", ""]
            md.append(f"| {t} | " + " | ".join(cells) + " |")
        md.append("")
    return md


def f1_matrix(corpora: list[str], tools: list[str], recs: dict) -> list[str]:
    """F1 at a glance: rows = tools, columns = corpora (the status where a run has no F1)."""
    md = []
    md.append("F1 at a glance (rows = tools, columns = corpora):")
    md.append("")
    md.append("| tool | " + " | ".join(corpora) + " |")
    md.append("|---|" + "---:|" * len(corpora))
    for t in tools:
        cells = []
        for c in corpora:
            r = next(x for x in recs[c] if x["tool"] == t)
            cells.append(fmt(r.get("f1"), 3) if r.get("f1") is not None else r["status"].split(":")[0])
        md.append(f"| {t} | " + " | ".join(cells) + " |")
    md.append("")
    return md


def category_sections(out: str, corpora: list[str], recs: dict) -> list[str]:
    """The per-category tables: recall by edit type on the synth corpora, clough and sohu-dd by
    label."""
    md = []
    synth_corpora = [c for c in corpora if os.path.exists(os.path.join(out, "corpora", c, "synth.cmd"))]
    if synth_corpora:
        md.append("### Recall by edit type (synth corpora)")
        md.append("")
        md.append("From `neardup eval`'s per-category output. A document's *partners* are the other members of its "
                  "truth cluster; a cell is the fraction of the partners of the row's documents that the tool put "
                  "in the same cluster. Row *original* = the source documents; an edit row = the copies whose one or "
                  "two edits include that edit (`script` = traditional/simplified conversion, `width` = full-width/"
                  "half-width). Because partners include the other copies of the same source, a copy that is "
                  "identical to its source after normalisation can still score below 1 when a sibling copy is far "
                  "from it. The last row counts the hard negatives' predicted partners, which are all false.")
        md.append("")
        for c in synth_corpora:
            md.append(f"**{c}**")
            md.append("")
            md.extend(edit_table(recs[c], c))
            md.append("")
    if "clough" in corpora:
        md.append("### clough by label")
        md.append("")
        md.append("Partners found / truth partners per label (false = predicted partners that are not in the truth "
                  "cluster); `heavy` and `non` have no truth partners, so every partner there is false.")
        md.append("")
        md.extend(clough_table(recs["clough"]))
        md.append("")
    if "sohu-dd" in corpora:
        md.append("### sohu-dd by label")
        md.append("")
        md.append("Labelled pairs predicted duplicate, per label (label 5 = found, labels 3 and 0 = false positives).")
        md.append("")
        md.extend(sohu_table(recs["sohu-dd"]))
        md.append("")
    return md


def files_section() -> list[str]:
    """### Files: the command, its options, the modules and where the outputs go."""
    md = []
    md.append("### Files")
    md.append("")
    md.append("- `bench/run quality`: the whole comparison. Options: `--reps N` (default 3), `--td-reps N` (default 1), "
              "`--zh-titles-limit N`, `--en-limit N`, `--corpora \"...\"`, `--tools \"...\"`, `--bin PATH`, "
              "`--no-benchmarks`; `NEARDUP_BENCH_PYTHON=...` picks the interpreter of `bench/.venv`.")
    md.append("- `bench/neardup_bench/`: `quality.py` (the run), `quality_peers.py` (datasketch, rensa, gaoya and simhash "
              "to a clusters file), `textdedup.py` (text-dedup's config.toml and its clusters.pickle to a clusters file), "
              "`corpora.py` (the Sohu and Clough-Stevenson inputs and truth, the synth sources), `quality_report.py` "
              "(these tables), `quality_notes.md` (the reading of the results).")
    md.append("- Outputs in `bench/out/quality/` (git-ignored): `results.md`, `results.json`, `corpora/<corpus>/`, "
              "`runs/<corpus>/<tool>/` (clusters.jsonl, eval.json, measure_rep*.json), `env/` (the binary, versions), `run.log`.")
    return md


def write_results(out: str, text: str, meta: dict, recs: dict, corpora: list[str]) -> None:
    """OUT/results.md (the section) and OUT/results.json (meta and every run's record, without
    its eval)."""
    with open(os.path.join(out, "results.md"), "w") as fh:
        fh.write(text)
    slim = {c: [{k: v for k, v in r.items() if k != "eval"} for r in recs[c]] for c in corpora}
    with open(os.path.join(out, "results.json"), "w") as fh:
        json.dump({"meta": meta, "runs": slim}, fh, indent=2)


def update_benchmarks(path: str, text: str) -> None:
    """Puts the section into the file at PATH: in place of an earlier copy of SECTION (up to
    the next `## ` heading), or appended."""
    cur = read_text(path)
    lines = cur.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.strip() == SECTION), None)
    if start is None:
        new = cur.rstrip("\n") + "\n\n" + text
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        before = "\n".join(lines[:start]).rstrip("\n")
        after = "\n".join(lines[end:])
        new = before + "\n\n" + text + ("\n" + after.rstrip("\n") + "\n" if after.strip() else "")
    with open(path, "w") as fh:
        fh.write(new)


def main(argv=None) -> int:
    args = parse_args(argv)
    out = args.out
    meta = load(os.path.join(out, "meta.json"), {})
    corpora = meta.get("corpora", "").split()
    tools = meta.get("tools", "").split()
    env = os.path.join(out, "env")

    recs = {c: [run_record(out, c, t) for t in tools] for c in corpora}

    md = header_section(meta, env)
    md += corpora_table(out, corpora, recs)
    md += corpora_notes(out, corpora, meta)
    md += tools_section(tools)
    md += results_section(corpora, recs)
    md += false_pairs_section(out, corpora, tools, recs, meta)
    md += f1_matrix(corpora, tools, recs)
    md += category_sections(out, corpora, recs)
    notes = read_text(args.notes).strip() if args.notes else ""
    if notes:
        md.append(notes)
        md.append("")
    md += files_section()
    text = "\n".join(md).rstrip() + "\n"

    write_results(out, text, meta, recs, corpora)
    if args.benchmarks:
        update_benchmarks(args.benchmarks, text)
    print(f"wrote {os.path.join(out, 'results.md')}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
