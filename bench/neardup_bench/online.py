"""`online`: the service's quality on the labelled corpora, beside the batch command line.

Every corpus of `bench/run lengths` (which holds those of `bench/run quality`), built once
into OUT/corpora, is sent in its order to one `neardup serve` (a fresh data folder) through
`neardup client load --answers`, once per collection settings (`--settings`, repeatable; the
default `{}`, what a user gets). A stored document starts a cluster, a duplicate joins the
cluster of the document it names; the clusters are scored with `neardup eval` as the batch
runs are. The batch rows run `neardup dedup` at its defaults and with `--method simhash`.
Each online row also gives the load's documents a second (small corpora: a quality figure,
not a speed one; `bench/run service` measures speed).

The template-flood part (`--flood N`, default 5,000 notices; 0 skips it) feeds the floods of
`neardup synth-notices` (shapes `sms` and `mixed`: SMS notices, posts under dated headers,
posts in inline wrappers) to each settings in order, one document a request, and counts the
false duplicates (a notice's first arrival answered as a duplicate) and the missed copies (a
copy stored although its notice was stored before), as bench/notice_service.py does.

Writes OUT/results.json and OUT/report.md and prints the report.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import time

from . import common, lengths

SETTINGS = ["{}"]


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--settings", action="append", default=None,
                    help="collection settings as JSON (repeatable; default: {} alone)")
    ap.add_argument("--corpora", default=lengths.CORPORA)
    ap.add_argument("--batch", type=int, default=100, help="documents per request (in order, one in flight)")
    ap.add_argument("--flood", type=int, default=5000, help="notices of the template-flood part (0: skip)")
    ap.add_argument("--no-batch-rows", action="store_true", help="skip the batch command-line rows")
    ap.add_argument("--zh-titles-limit", type=int, default=20000)
    ap.add_argument("--en-limit", type=int, default=5000)
    ap.add_argument("--bin", help="neardup binary (default: cargo build, target/release/neardup)")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--data", help="shared data folder (default $NEARDUP_DATA or ../shared/data)")
    ap.add_argument("--out", default=os.path.join(common.DEFAULT_OUT, "online"),
                    help="output folder (corpora are kept and reused; runs are redone)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`neardup serve` on a fresh data folder, stopped on exit."""

    def __init__(self, n: str, data: str):
        shutil.rmtree(data, ignore_errors=True)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen([n, "serve", "--data-dir", data, "--listen", f"127.0.0.1:{self.port}"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        line = self.proc.stderr.readline()
        if "serving" not in line:
            raise SystemExit(f"neardup serve did not start: {line}{self.proc.stderr.read()}")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.proc.terminate()
        self.proc.wait()


def load_file(corpus: str, out: str) -> tuple[str, bool]:
    """`out`: the corpus with an `id` on every line (the record number, from 1, where the
    corpus has none, as `dedup` numbers them). Returns the path and whether ids were added
    (then the clusters name documents by number)."""
    numbered = False
    with open(corpus, encoding="utf-8") as fi, open(out, "w", encoding="utf-8") as fo:
        for number, line in enumerate(fi, 1):
            record = json.loads(line)
            if "id" not in record:
                numbered = True
            fo.write(json.dumps({"id": str(record.get("id", number)), "text": record["text"]},
                                ensure_ascii=False) + "\n")
    return out, numbered


def clusters_from_answers(answers: str, out: str, numbered: bool) -> dict:
    """Writes the clusters of a load's answers to `out`; counts stored, duplicates, refused."""
    cluster, counts = {}, {"stored": 0, "duplicates": 0, "refused": 0}
    rows = []
    for answer in common.read_jsonl(answers):
        doc = answer["id"]
        if answer.get("stored"):
            cluster[doc] = doc
            counts["stored"] += 1
        elif answer.get("duplicate_of") is not None:
            cluster[doc] = cluster.get(answer["duplicate_of"], answer["duplicate_of"])
            counts["duplicates"] += 1
        else:
            cluster[doc] = doc
            counts["refused"] += 1
        as_id = (lambda x: int(x)) if numbered else (lambda x: x)
        rows.append({"id": as_id(doc), "cluster": as_id(cluster[doc])})
    common.write_jsonl(out, rows)
    return counts


def evaluate(n: str, name: str, truth: str, clusters: str) -> dict:
    cmd = [n, "eval", "--truth", truth, "--predicted", clusters, "--json"]
    if name == "sohu-dd":
        cmd += ["--positive-label", "5"]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def online_row(n: str, server: Server, name: str, index: int, settings: str, loadable: str, numbered: bool,
               truth: str, d: str, batch: int) -> dict:
    collection = f"c{index}-{name}"
    subprocess.run([n, "client", "--url", server.url, "create", collection, "--settings", settings],
                   check=True, stdout=subprocess.DEVNULL)
    answers = os.path.join(d, f"c{index}.answers.jsonl")
    t = time.monotonic()
    subprocess.run([n, "client", "--url", server.url, "load", collection, loadable, "--id-field", "id",
                    "--batch", str(batch), "--concurrency", "1", "--answers", answers],
                   check=True, stdout=subprocess.DEVNULL)
    seconds = time.monotonic() - t
    clusters = os.path.join(d, f"c{index}.clusters.jsonl")
    counts = clusters_from_answers(answers, clusters, numbered)
    scores = evaluate(n, name, truth, clusters)
    total = sum(counts.values())
    return {"row": f"online {settings}", **counts, "scores": scores,
            "documents_per_second": round(total / seconds) if seconds else None}


def batch_row(n: str, name: str, corpus: str, numbered: bool, truth: str, d: str, label: str,
              extra: list[str]) -> dict:
    clusters = os.path.join(d, f"{label}.clusters.jsonl")
    idarg = [] if numbered else ["--id-field", "id"]
    subprocess.run([n, "dedup", corpus, "-o", os.path.join(d, f"{label}.kept.jsonl"), "--clusters", clusters,
                    *idarg, "--quiet", *extra], check=True)
    os.remove(os.path.join(d, f"{label}.kept.jsonl"))
    return {"row": f"batch {label}", "scores": evaluate(n, name, truth, clusters)}


def flood_part(n: str, args, out: str) -> list[dict]:
    """False duplicates and missed copies on the notice floods, per shape and settings."""
    return [row for shape in ("sms", "mixed") for row in flood_shape(n, args, out, shape)]


def flood_shape(n: str, args, out: str, shape: str) -> list[dict]:
    d = os.path.join(out, "runs", f"flood-{shape}")
    os.makedirs(d, exist_ok=True)
    flood, truth = os.path.join(d, "flood.jsonl"), os.path.join(d, "truth.jsonl")
    subprocess.run([n, "synth-notices", "-o", flood, "--truth", truth, "--notices", str(args.flood),
                    "--shape", shape, "--quiet"], check=True, stdout=subprocess.DEVNULL)
    notice = {r["id"]: r["cluster"] for r in common.read_jsonl(truth)}
    ids = [r["id"] for r in common.read_jsonl(flood)]
    rows = []
    with Server(n, os.path.join(d, "data")) as server:
        for index, settings in enumerate(args.settings):
            collection = f"f{index}"
            subprocess.run([n, "client", "--url", server.url, "create", collection, "--settings", settings],
                           check=True, stdout=subprocess.DEVNULL)
            answers = os.path.join(d, f"f{index}.answers.jsonl")
            subprocess.run([n, "client", "--url", server.url, "load", collection, flood, "--id-field", "id",
                            "--batch", "1", "--concurrency", "1", "--answers", answers],
                           check=True, stdout=subprocess.DEVNULL)
            seen, stored, false_dups, missed = set(), set(), 0, 0
            for document, answer in zip(ids, common.read_jsonl(answers)):
                first = notice[document] not in seen
                seen.add(notice[document])
                if answer.get("stored"):
                    missed += notice[document] in stored
                    stored.add(notice[document])
                else:
                    false_dups += first
            copies = len(ids) - len(seen)
            rows.append({"shape": shape, "settings": settings, "notices": len(seen), "false_duplicates": false_dups,
                         "copies": copies, "copies_stored": missed})
            common.log(f"flood {shape} {settings}: false duplicates {false_dups}/{len(seen)}, "
                       f"copies stored {missed}/{copies}")
    return rows


def report(results: dict, flood: list[dict], args) -> str:
    lines = ["| corpus | row | precision | recall | F1 | stored | duplicates | documents/s |",
             "|---|---|---|---|---|---|---|---|"]
    for name, rows in results.items():
        for r in rows:
            s = r["scores"]
            p = s.get("precision", s.get("pairwise", {}).get("precision"))
            rc = s.get("recall", s.get("pairwise", {}).get("recall"))
            f1 = s.get("f1", s.get("pairwise", {}).get("f1"))
            fmt = lambda x: "" if x is None else f"{x:.3f}"  # noqa: E731
            lines.append(f"| {name} | {r['row']} | {fmt(p)} | {fmt(rc)} | {fmt(f1)} | {r.get('stored', '')} | "
                         f"{r.get('duplicates', '')} | {r.get('documents_per_second') or ''} |")
    if flood:
        lines += ["", f"Notice floods (`neardup synth-notices --notices {args.flood} --shape S`, one document a "
                  "request):", "",
                  "| shape | settings | new notices answered as duplicates | copies stored |", "|---|---|---|---|"]
        for r in flood:
            lines.append(f"| {r['shape']} | `{r['settings']}` | {r['false_duplicates']} of {r['notices']} "
                         f"({r['false_duplicates'] / max(r['notices'], 1):.1%}) | {r['copies_stored']} of "
                         f"{r['copies']} ({r['copies_stored'] / max(r['copies'], 1):.1%}) |")
    return "\n".join(lines) + "\n"


def main(args) -> int:
    args.settings = args.settings or SETTINGS
    for s in args.settings:
        json.loads(s)
    data, out, n = common.start_run(args)
    results = {}
    with Server(n, os.path.join(out, "runs", "data")) as server:
        for name in args.corpora.split():
            corpus, truth = lengths.corpus(n, name, out, data, args)
            d = os.path.join(out, "runs", name)
            os.makedirs(d, exist_ok=True)
            loadable, numbered = load_file(corpus, os.path.join(d, "load.jsonl"))
            rows = []
            for index, settings in enumerate(args.settings):
                rows.append(online_row(n, server, name, index, settings, loadable, numbered, truth, d, args.batch))
                sc = rows[-1]["scores"]
                common.log(f"{name} online {settings}: precision {sc['precision']:.3f}, recall {sc['recall']:.3f}, "
                           f"F1 {sc['f1']:.3f}")
            if not args.no_batch_rows:
                rows.append(batch_row(n, name, corpus, numbered, truth, d, "defaults", []))
                rows.append(batch_row(n, name, corpus, numbered, truth, d, "simhash", ["--method", "simhash"]))
            results[name] = rows
    flood = flood_part(n, args, out) if args.flood else []
    text = report(results, flood, args)
    with open(os.path.join(out, "results.json"), "w") as fh:
        json.dump({"corpora": results, "flood": flood, "settings": args.settings, "date": common.machine()["date"],
                   "git": common.git_describe()}, fh, indent=1)
    with open(os.path.join(out, "report.md"), "w") as fh:
        fh.write(text)
    print(text)
    return 0
