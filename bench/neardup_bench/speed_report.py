"""Scoring and tables of `speed` (formerly bench/evaluate.py).

- `neardup_pairs(corpus, pairs_jsonl, out_tsv)`: neardup's {"a": id, "b": id, "similarity"}
  rows as input indices ("a<TAB>b<TAB>s", a < b), for pooling and scoring.
- `report(manifest, out_md, out_json)`: reads every run under the manifest's run directory,
  scores each tool's predicted pairs against the corpus's truth file, writes the tables.

Layout read by `report` (written by speed.py):
  <runs>/<corpus>/<tool>/rep<k>/measure.json   wall seconds + peak RSS (common.measure)
  neardup:    stats.json, pairs.tsv (from neardup_pairs)
  datasketch/rensa: result.json, <tool>.candidates.tsv, <tool>.verified.tsv
"""

from __future__ import annotations

import glob
import json
import os
import statistics
import sys


def load_ids(corpus: str, id_field: str) -> dict[str, int]:
    ids: dict[str, int] = {}
    with open(corpus, encoding="utf-8") as fh:
        i = 0
        for line in fh:
            if not line.strip():
                continue
            d = json.loads(line)
            ids.setdefault(str(d.get(id_field)), i)
            i += 1
    return ids


def neardup_pairs(corpus: str, pairs: str, out: str, id_field: str = "id") -> int:
    ids = load_ids(corpus, id_field)
    n = 0
    unknown = 0
    rows = {}
    with open(pairs, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            d = json.loads(line)
            a, b = ids.get(str(d["a"])), ids.get(str(d["b"]))
            if a is None or b is None:
                unknown += 1
                continue
            if a == b:
                continue
            if a > b:
                a, b = b, a
            rows[(a, b)] = d.get("similarity", "")
            n += 1
    with open(out, "w") as fh:
        for (a, b), s in sorted(rows.items()):
            fh.write(f"{a}\t{b}\t{s}\n")
    if unknown:
        print(f"warning: {unknown} neardup pairs with ids not in the corpus", file=sys.stderr)
    print(f"neardup pairs: {n} rows, {len(rows)} distinct pairs", file=sys.stderr)
    return 0


def read_pairs(path: str) -> set[tuple[int, int]]:
    out = set()
    if not os.path.exists(path):
        return out
    with open(path) as fh:
        for line in fh:
            f = line.split("\t")
            if len(f) >= 2:
                a, b = int(f[0]), int(f[1])
                out.add((a, b) if a < b else (b, a))
    return out


def prf(pred: set, truth: set) -> tuple[float, float, float]:
    tp = len(pred & truth)
    p = tp / len(pred) if pred else (1.0 if not truth else 0.0)
    r = tp / len(truth) if truth else 1.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, nd=2):
    if x is None:
        return "n/a"
    if isinstance(x, int):
        return f"{x:,}"
    return f"{x:,.{nd}f}"


def load_json(p):
    with open(p) as fh:
        return json.load(fh)


def edit_breakdown(man, rows_preds) -> str:
    """Recall per edit type on a `neardup synth` corpus: a true pair is labelled by the
    category (synth's edits) of its copy when the other member is the original, "two edits"
    when that copy has two, "variant/variant" when both are copies, "hard negative" when one
    is a hard negative of the other's source, "cross-family" when the sources differ."""
    out = []
    for c in man["corpora"]:
        if not c.get("families"):
            continue
        cl, cat = {}, {}
        with open(c["families"], encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    d = json.loads(line)
                    cl[str(d["id"])] = str(d["cluster"])
                    cat[str(d["id"])] = d.get("category") or ""
        fam, edit = [], []
        with open(c["path"], encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    continue
                i = str(json.loads(line).get("id"))
                fam.append(cl.get(i, i))
                edit.append(cat.get(i, ""))
        truth = read_pairs(c["truth"])

        def label(a, b):
            if fam[a] != fam[b]:
                if "hard_negative" in (edit[a], edit[b]):
                    return "hard negative"
                return "cross-family"
            ea, eb = edit[a], edit[b]
            if ea != "original" and eb != "original":
                return "variant/variant"
            e = eb if ea == "original" else ea
            return "two edits" if "+" in e else e

        # all within-family pairs, to show how many fell below the threshold
        members: dict = {}
        for i, f in enumerate(fam):
            members.setdefault(f, []).append(i)
        fam_pairs: dict = {}
        for ms in members.values():
            for x in range(len(ms)):
                for y in range(x + 1, len(ms)):
                    lab = label(ms[x], ms[y])
                    fam_pairs[lab] = fam_pairs.get(lab, 0) + 1
        by = {}
        for a, b in truth:
            by.setdefault(label(a, b), set()).add((a, b))
        tools = [k[1] for k in rows_preds if k[0] == c["name"] and not k[1].endswith(" raw")]
        out.append("| edit type | family pairs | true pairs (J >= t) | " + " | ".join(f"R {t}" for t in tools) + " |")
        out.append("|---|---:|---:|" + "---:|" * len(tools))
        for lab in sorted(set(by) | set(fam_pairs)):
            tp = by.get(lab, set())
            cells = []
            for t in tools:
                pred = rows_preds[(c["name"], t)]
                cells.append(f"{len(tp & pred) / len(tp):.4f}" if tp else "n/a")
            out.append(f"| {lab} | {fam_pairs.get(lab, 0):,} | {len(tp):,} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def neardup_scores(corpus: str, reps: list[str], ok: list[dict], truth: set, ndocs: int,
                   nbytes: int) -> tuple[set, dict, dict]:
    """neardup's runs on one corpus: its predicted pairs (the first run's), its row of the
    main table, and its row of the self-reported stats (STATS.json)."""
    mb = nbytes / 1e6
    preds = [read_pairs(os.path.join(r, "pairs.tsv")) for r in reps]
    stats = [load_json(os.path.join(r, "stats.json")) for r in reps if os.path.exists(os.path.join(r, "stats.json"))]
    secs = med([m["wall_seconds"] for m in ok])
    rss = med([m["peak_rss_bytes"] for m in ok])
    pred = preds[0] if preds else set()
    p, r, f = prf(pred, truth)
    sk = []
    for s in stats:
        sec = s.get("seconds", {}) or {}
        if sec.get("sketch"):
            sk.append(s.get("bytes_in", nbytes) / 1e6 / sec["sketch"])
    cand = None
    for s in stats[:1]:
        for k, v in s.items():
            if "candidate" in k and isinstance(v, (int, float)):
                cand = int(v)
    par = ((stats[0].get("method") or {}).get("params") or {}) if stats else {}
    vlabel = "verified pairs" + (f" (b={par['bands']}x r={par['rows']})" if "bands" in par else "")
    row = dict(tool="neardup", variant=vlabel, corpus=corpus, docs=ndocs, mb=mb,
               secs=secs, verify=None, rss=rss, cand=cand, pairs=len(pred), p=p, r=r, f=f,
               runs=len(ok), all_runs=[m["wall_seconds"] for m in ok],
               identical=all(x == preds[0] for x in preds))
    ext = dict(corpus=corpus, sketch_mbps=med(sk),
               stats_total=med([(s.get("seconds") or {}).get("total") for s in stats]),
               stats_rss=med([s.get("peak_rss_bytes") for s in stats]),
               stages={k: med([(s.get("seconds") or {}).get(k) for s in stats])
                       for k in (stats[0].get("seconds") or {}) } if stats else {},
               kept=stats[0].get("kept") if stats else None,
               removed=stats[0].get("removed") if stats else None)
    return pred, row, ext


def peer_scores(corpus: str, tool: str, reps: list[str], truth: set, ndocs: int,
                mb: float) -> list[tuple[str, set, dict]]:
    """A peer's (datasketch, rensa) runs on one corpus, as two variants: its raw LSH
    candidates, timed without the verification, and the candidates verified by exact Jaccard.
    Each is (label in rows_preds, predicted pairs of the first run, row of the main table)."""
    res = [load_json(os.path.join(r, "result.json")) for r in reps if os.path.exists(os.path.join(r, "result.json"))]
    cands = [read_pairs(os.path.join(r, f"{tool}.candidates.tsv")) for r in reps]
    vers = [read_pairs(os.path.join(r, f"{tool}.verified.tsv")) for r in reps]
    walls = {os.path.dirname(m_path): load_json(m_path) for m_path in
             (os.path.join(r, "measure.json") for r in reps) if os.path.exists(m_path)}
    raw_secs, ver_secs, vsecs, raw_rss, ver_rss = [], [], [], [], []
    for r, x in zip(reps, res):
        m = walls.get(r)
        if not m or m["returncode"] != 0:
            continue
        v = x.get("verify_seconds", 0.0)
        raw_secs.append(m["wall_seconds"] - v)
        ver_secs.append(m["wall_seconds"])
        vsecs.append(v)
        raw_rss.append(x["peak_rss_lsh_bytes"])
        ver_rss.append(m["peak_rss_bytes"])
    lsh = res[0].get("lsh", {}) if res else {}
    label = f"b={lsh.get('bands')}x r={lsh.get('rows')}"
    p, r_, f = prf(cands[0], truth)
    raw = dict(tool=tool, variant=f"raw LSH candidates ({label})", corpus=corpus, docs=ndocs, mb=mb,
               secs=med(raw_secs), verify=None, rss=med(raw_rss), cand=len(cands[0]),
               pairs=len(cands[0]), p=p, r=r_, f=f, runs=len(raw_secs), all_runs=raw_secs,
               identical=all(x == cands[0] for x in cands))
    p, r_, f = prf(vers[0], truth)
    verified = dict(tool=tool, variant="candidates + exact Jaccard verify", corpus=corpus, docs=ndocs,
                    mb=mb, secs=med(ver_secs), verify=med(vsecs), rss=med(ver_rss), cand=len(cands[0]),
                    pairs=len(vers[0]), p=p, r=r_, f=f, runs=len(ver_secs), all_runs=ver_secs,
                    identical=all(x == vers[0] for x in vers))
    return [(f"{tool} raw", cands[0], raw), (f"{tool} verified", vers[0], verified)]


def score_corpus(man: dict, c: dict, rows: list, extra: list, rows_preds: dict) -> None:
    """Scores every tool's runs on corpus `c` against its truth: appends to `rows` (the main
    table), `extra` (neardup's stats) and `rows_preds`, and notes the truth's counts in `c`
    (so in the manifest that results.json repeats)."""
    truth = read_pairs(c["truth"])
    tmeta = load_json(c["truth_meta"])
    truth_exact = read_pairs(c["truth_exact"]) if c.get("truth_exact") else None
    if truth_exact is not None:
        c["exact_true_pairs"] = len(truth_exact)
        c["pooled_missing"] = len(truth_exact - truth)
        c["pooled_extra"] = len(truth - truth_exact)
    n_rows_before = len(rows)
    base = os.path.join(man["runs_dir"], c["name"])
    nbytes = os.path.getsize(c["path"])
    mb = nbytes / 1e6
    ndocs = tmeta["documents"]
    for tool in man["tools"]:
        reps = sorted(glob.glob(os.path.join(base, tool, "rep*")))
        if not reps:
            continue
        meas = [load_json(os.path.join(r, "measure.json")) for r in reps if os.path.exists(os.path.join(r, "measure.json"))]
        ok = [m for m in meas if m["returncode"] == 0]
        if tool == "neardup":
            pred, row, ext = neardup_scores(c["name"], reps, ok, truth, ndocs, nbytes)
            rows_preds[(c["name"], "neardup")] = pred
            rows.append(row)
            extra.append(ext)
        else:
            for label, pred, row in peer_scores(c["name"], tool, reps, truth, ndocs, mb):
                rows_preds[(c["name"], label)] = pred
                rows.append(row)
    if truth_exact is not None:
        for x in rows[n_rows_before:]:
            key = (c["name"], "neardup") if x["tool"] == "neardup" else None
            if x["tool"] != "neardup":
                key = (c["name"], f"{x['tool']} {'verified' if 'verify' in x['variant'] else 'raw'}")
            pred = rows_preds.get(key, set())
            x["exact"] = prf(pred, truth_exact)
    c["true_pairs"] = len(truth)
    c["truth_note"] = tmeta.get("note")


def main_table(rows: list) -> str:
    """Throughput and accuracy: one row per tool, variant and corpus."""
    lines = []
    lines.append("| tool | variant | corpus | docs | MB | median s | docs/s | MB/s | peak RSS MB | candidate pairs | predicted pairs | P | R | F1 | verify s | runs (s) |")
    lines.append("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for x in rows:
        s = x["secs"]
        lines.append(
            "| {tool} | {variant} | {corpus} | {docs} | {mb} | {s} | {dps} | {mbps} | {rss} | {cand} | {pairs} | {p} | {r} | {f} | {v} | {runs} |".format(
                tool=x["tool"], variant=x["variant"], corpus=x["corpus"], docs=fmt(x["docs"]), mb=fmt(x["mb"], 1),
                s=fmt(s), dps=fmt(x["docs"] / s, 0) if s else "n/a", mbps=fmt(x["mb"] / s, 2) if s else "n/a",
                rss=fmt(x["rss"] / 2**20, 0) if x["rss"] else "n/a",
                cand=fmt(x["cand"]) if x["cand"] is not None else "n/a", pairs=fmt(x["pairs"]),
                p=fmt(x["p"], 4), r=fmt(x["r"], 4), f=fmt(x["f"], 4),
                v=fmt(x["verify"]) if x["verify"] is not None else "",
                runs=", ".join(f"{t:.2f}" for t in x["all_runs"]) + ("" if x["identical"] else " (outputs differ between runs!)"),
            )
        )
    return "\n".join(lines)


def ratio_table(man: dict, rows: list) -> str:
    """neardup's median seconds against each peer variant's, per corpus."""
    ratio_lines = []
    for c in man["corpora"]:
        nd = [x for x in rows if x["corpus"] == c["name"] and x["tool"] == "neardup"]
        if not nd or not nd[0]["secs"]:
            continue
        for tool in ("datasketch", "rensa"):
            for x in rows:
                if x["corpus"] == c["name"] and x["tool"] == tool and x["secs"]:
                    ratio_lines.append(
                        f"| {c['name']} | neardup / {tool} ({x['variant'].split(' (')[0]}) | {nd[0]['secs'] / x['secs']:.3f} | {x['secs'] / nd[0]['secs']:.1f}x |"
                    )
    return "| corpus | comparison (median end-to-end seconds) | neardup s / peer s | peer s / neardup s |\n|---|---|---:|---:|\n" + "\n".join(ratio_lines)


def stats_table(extra: list) -> str:
    """neardup's self-reported stats (STATS.json), one row per corpus."""
    ex_lines = ["| corpus | signature-stage MB/s (bytes_in / seconds.sketch) | STATS seconds.total | STATS peak_rss MB | kept | removed | per-stage seconds (median) |",
                "|---|---:|---:|---:|---:|---:|---|"]
    for e in extra:
        stages = ", ".join(f"{k} {v:.2f}" for k, v in e["stages"].items() if isinstance(v, (int, float)))
        ex_lines.append(
            f"| {e['corpus']} | {fmt(e['sketch_mbps'])} | {fmt(e['stats_total'])} | "
            f"{fmt(e['stats_rss'] / 2**20, 0) if e['stats_rss'] else 'n/a'} | {fmt(e['kept']) if e['kept'] is not None else 'n/a'} | "
            f"{fmt(e['removed']) if e['removed'] is not None else 'n/a'} | {stages} |"
        )
    return "\n".join(ex_lines)


def truth_notes(man: dict) -> str:
    """The ground truth of each corpus: its pairs, how it was made, and its own checks."""
    truth_lines = []
    for c in man["corpora"]:
        tm = load_json(c["truth_meta"])
        truth_lines.append(f"- **{c['name']}** (`{c['path']}`): {c['true_pairs']:,} true pairs; {tm.get('note')}.")
        if c.get("exact_true_pairs") is not None:
            truth_lines.append(
                f"  The exact all-pairs join on the same corpus finds {c['exact_true_pairs']:,} pairs: the pooled truth "
                f"misses {c['pooled_missing']:,} of them (pairs no tool reported) and has {c['pooled_extra']:,} that the join lacks (must be 0)."
            )
        if tm.get("mode") == "family":
            truth_lines.append(
                f"  Within-family pairs checked {tm['family_pairs_checked']:,} (true {tm['family_pairs_true']:,}); "
                f"cross-family pairs reported by a tool checked {tm['cross_family_pool_pairs_checked']:,} "
                f"(true {tm['cross_family_pool_pairs_true']:,})."
            )
        else:
            truth_lines.append(
                f"  Join verified {tm.get('join_candidates_verified', 0):,} candidates; pairs reported by tools with "
                f"Jaccard >= t missed by the join: {tm.get('pool_pairs_above_threshold_missed_by_join', 'n/a')} (must be 0)."
            )
    return "\n".join(truth_lines)


def report(manifest: str, out_md: str, out_json: str) -> str:
    man = load_json(manifest)
    rows = []
    extra = []
    rows_preds = {}  # (corpus, tool label) -> predicted pair set
    for c in man["corpora"]:
        score_corpus(man, c, rows, extra, rows_preds)

    breakdown = edit_breakdown(man, rows_preds)
    table = main_table(rows)
    ratios = ratio_table(man, rows)
    neardup_extra = stats_table(extra)
    truth_text = truth_notes(man)
    md = []
    md.append("## Results\n")
    md.append(man.get("header", ""))
    md.append("\n### Throughput and accuracy (median of %d runs)\n" % man.get("reps", 3))
    md.append(table)
    md.append("\n### Speed ratios\n")
    md.append(ratios)
    md.append("\n### neardup self-reported stats (STATS.json, median over runs)\n")
    md.append(neardup_extra)
    if breakdown:
        md.append("\n### Recall by edit type (`neardup synth` Chinese corpus)\n")
        md.append(breakdown)
    md.append("\n### Ground truth\n")
    md.append(truth_text)
    ex_rows = [x for x in rows if x.get("exact")]
    if ex_rows:
        md.append("\nAccuracy against the exact all-pairs truth of the same corpus (prefix-filter join, not pooled):\n")
        md.append("| tool | variant | corpus | P | R | F1 |\n|---|---|---|---:|---:|---:|")
        for x in ex_rows:
            p, r, f = x["exact"]
            md.append(f"| {x['tool']} | {x['variant']} | {x['corpus']} | {p:.4f} | {r:.4f} | {f:.4f} |")
    text = "\n".join(md) + "\n"
    with open(out_md, "w") as fh:
        fh.write(text)
    with open(out_json, "w") as fh:
        json.dump({"rows": rows, "neardup_stats": extra, "manifest": man}, fh, indent=2, default=str)
    return text


def versions() -> str:
    from importlib.metadata import version

    return (f"CPython {sys.version.split()[0]}, datasketch {version('datasketch')}, rensa {version('rensa')}, "
            f"numpy {version('numpy')}")
