"""The Markdown of `bench/run hamming` (OUT/hamming.md) from its JSON report."""

from __future__ import annotations

import statistics

TARGETS = {"k3_p99_us": 20.0, "k10_p99_us": 2000.0, "bytes_per_fingerprint": 40.0, "join_2m_seconds": 0.3}


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def results(row: dict) -> list[dict]:
    """The per-k result of every successful run of a row (neardup nests it under `results`)."""
    found = []
    for run in row["runs"]:
        res = run.get("result")
        if not res or run.get("failure"):
            continue
        if "results" in res:
            res = next((r for r in res["results"] if r["k"] == row["k"]), None)
        if res:
            found.append(res | {"_peak_rss": run["peak_rss_bytes"], "_wall": run["wall_seconds"]})
    return found


def latency_cell(rs: list[dict], kind: str) -> str:
    parts = [r[kind] for r in rs if r.get(kind)]
    if not parts:
        return "n/a"
    p50, p99 = median(p["p50_us"] for p in parts), median(p["p99_us"] for p in parts)
    q = min(p["queries"] for p in parts)
    return f"{fmt_us(p50)} / {fmt_us(p99)}" + ("" if q >= 1000 else f" ({q} q)")


def fmt_us(v: float) -> str:
    return f"{v:,.0f}" if v >= 100 else f"{v:.1f}"


def join_cell(rs: list[dict], n: int) -> tuple[str, str]:
    """Median seconds per thread count; a peer join stopped by its budget is extrapolated
    linearly from the share of stored fingerprints it had queried."""
    joins = [r.get("self_join") or [] for r in rs]
    if not any(joins):
        return "-", "-"
    by_threads: dict[int, list] = {}
    for js in joins:
        for j in js:
            by_threads.setdefault(j["threads"], []).append(j)
    cells, pairs = [], "-"
    for threads in sorted(by_threads, reverse=True):
        js = by_threads[threads]
        done = [j for j in js if j.get("seconds") is not None]
        if done:
            cells.append(f"{median(j['seconds'] for j in done):.3g} ({threads} thr)")
            pairs = f"{done[0]['pairs']:,}"
        else:
            j = js[0]
            estimate = j["stopped_after_s"] * n / j["stored_queried"]
            cells.append(f"~{estimate:,.0f} (stopped at {j['stopped_after_s']:g} s after {j['stored_queried']:,} "
                         f"queries; {threads} thr)")
            pairs = f">= {j['pairs_so_far']:,}"
    return " / ".join(cells), pairs


def row_line(row: dict) -> str:
    head = f"| {row['n']:,} | {row['tool']} | {row['k']} |"
    if row.get("skipped"):
        return head + f" not run: {row['skipped']} ||||||||"
    failures = [r["failure"] for r in row["runs"] if r.get("failure")]
    rs = results(row)
    if not rs:
        return head + f" failed: {(failures or ['no result'])[0][:150]} ||||||||"
    build = median(r["build_seconds"] for r in rs)
    rss = median(r["_peak_rss"] for r in rs)
    if row["tool"] == "neardup":
        memory = f"{median(r['bytes_per_fingerprint'] for r in rs):.1f}"
        blocks = str(rs[0]["blocks"])
    else:
        memory = f"({rss / row['n']:.0f})"
        blocks = str(row["k"] + 1)
    join, pairs = join_cell(rs, row["n"])
    runs = f"{len(rs)}" + (f" (+{len(failures)} failed)" if failures else "")
    return (head + f" {blocks} | {build:.3g} | {memory} | {rss / 2**20:,.0f} | {latency_cell(rs, 'near')} | "
            f"{latency_cell(rs, 'random')} | {join} | {pairs} | {runs} |")


def targets(report: dict) -> list[str]:
    lines = []
    for kind in report["sets"]:
        rows = [r for r in report["rows"] if r["set"] == kind and r["tool"] == "neardup" and results(r)]
        if not rows:
            continue
        n = max(r["n"] for r in rows)
        k3 = [results(r) for r in rows if r["n"] == n and r["k"] == 3]
        k10 = [results(r) for r in rows if r["n"] == n and r["k"] == 10]
        checks = []
        for name, rs, limit, unit in (("k = 3 query p99", k3, TARGETS["k3_p99_us"], "µs"),
                                      ("k = 10 query p99", k10, TARGETS["k10_p99_us"], "µs")):
            if rs:
                worst = max(median(x[kind_]["p99_us"] for x in rs[0]) for kind_ in ("near", "random"))
                checks.append(f"{name} {fmt_us(worst)} {unit} (target <= {limit:g}): "
                              f"{'met' if worst <= limit else 'missed'}")
        memory = [median(x["bytes_per_fingerprint"] for x in rs) for rs in k3 + k10 if rs]
        if memory:
            worst = max(memory)
            checks.append(f"memory {worst:.1f} B per fingerprint with its id (target <= 40): "
                          f"{'met' if worst <= 40 else 'missed'}")
        join_rows = [results(r) for r in report["rows"] if r["set"] == kind and r["tool"] == "neardup"
                     and r["n"] == 2_000_000 and r["k"] == 3]
        joins = [j["seconds"] for rs in join_rows for x in rs for j in x.get("self_join", []) if j["threads"] == 2]
        if joins:
            s = median(joins)
            checks.append(f"self-join of 2,000,000 at k = 3, 2 threads {s:.3g} s (target < 0.3): "
                          f"{'met' if s < 0.3 else 'missed'}")
        lines.append(f"- **{kind}**, n = {n:,} (worst of near/random queries): " + "; ".join(checks) + ".")
    return lines


def markdown(report: dict, elapsed: float) -> str:
    m = report["machine"]
    v = report["versions"]
    out = ["# SimHash Hamming index vs PyPI simhash and gaoya", "",
           f"- Command: `{report['command']}`",
           f"- Date: {m['date']}; {'finished in' if report.get('wall_seconds') else 'partial, after'} "
           f"{elapsed:,.0f} s",
           f"- Machine: {m['cpu']}, nproc {m['nproc']}; {m['rustc']}",
           f"- Code: {report['commit']}; Python {v['python']}, simhash {v['simhash']}, gaoya {v['gaoya']}, "
           f"numpy {v['numpy']}",
           f"- Settings: {report['settings']}", ""]
    out += ["## Targets (issue 8)", "", *targets(report), ""]
    for kind, info in report["sets"].items():
        out += [f"## Set `{kind}`", "", f"File `{info['file']}`, made by {info['generator']}."]
        extra = {k: info[k] for k in ("segments", "mean_tokens") if k in info}
        if extra:
            out.append(f"Segments {extra.get('segments')}, mean tokens per document {extra.get('mean_tokens')}.")
        out.append("")
        out += ["| n | distinct | collision ratio on 16-bit blocks (1 = uniform) | largest 16-bit bucket (uniform) |",
                "|---:|---:|---:|---:|"]
        for n, s in info["skew"].items():
            out.append(f"| {int(n):,} | {s['distinct']:,} | {s['collision_ratio_16bit']:.2f} | "
                       f"{s['largest_16bit_bucket']:,.0f} ({s['uniform_bucket']:,.1f}) |")
        out += ["", "| n | tool | k | blocks | build s | bytes / fp | peak RSS MB | near p50 / p99 µs | "
                "random p50 / p99 µs | self-join k = 3, s | pairs | runs |",
                "|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---|"]
        out += [row_line(r) for r in report["rows"] if r["set"] == kind]
        out.append("")
    out += ["Columns: medians over the runs. `bytes / fp` for neardup is `HammingIndex::memory_bytes()` "
            "(the index, ids included) over n; in parentheses, for the peers, the whole process's peak RSS over n "
            "(interpreter, input lists and Simhash objects included: an upper bound). `near` queries are stored "
            "fingerprints with 1..k random bits flipped; `random` are uniform 64-bit values; gaoya cannot take a "
            "precomputed fingerprint (see hamming_peers.py), so it indexes SipHash values of the fingerprints (uniform "
            "whatever the set) and has no near queries. Peer self-joins query every stored fingerprint on one thread.",
            ""]
    return "\n".join(out)


if __name__ == "__main__":
    import json
    import sys

    # python -m neardup_bench.hamming_report OUT/hamming.json: the Markdown again, on stdout.
    with open(sys.argv[1]) as fh:
        report = json.load(fh)
    print(markdown(report, report.get("wall_seconds") or 0.0))
