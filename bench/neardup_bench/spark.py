"""The Python package and the Spark path against the command line, on Chinese synth corpora.

Run by bench/spark.sh (with the interpreter of target/python-venv, where scripts/test
installed the wheel and PySpark). For each corpus size (MB) and each tool, `--runs` runs;
the table gives the median wall time and its ratio to the CLI's median in the same session,
the peak RSS of the measured process (for Spark: the driver JVM and its children, not the
standalone workers), the kept count, pairwise P/R/F1 against synth's truth (documents of one
truth cluster are duplicates of each other), and whether the clusters equal the CLI's.

Tools (all at their defaults: the Spark path learns boilerplate lines and common shingles as
the command line does). Every tool reads the corpus with its lines sorted by id (the order the
Spark path ranks by).

- cli:          neardup dedup CORPUS -o /dev/null --clusters clusters.jsonl --id-field id
- python-arrow: pyarrow.json.read_json, then neardup.dedup(table["text"], ids=table["id"]),
                clusters written as Parquet
- python-list:  the same with the texts as a Python list of str
- spark-local1, spark-local2: spark-submit --master local[N] python/spark/dedup_job.py
- spark-standalone: the same on python/spark/standalone.sh's two one-core workers
- spark-standalone1: the same job on the standalone cluster, one worker's core only
                (`--total-executor-cores 1`): the scale-out ratio is standalone1 / standalone
- mllib-local2: Spark MLlib's MinHashLSH on local[2], the usual recipe: the text without
                spaces and punctuation, character 3-grams (NGram), HashingTF (2^20, binary),
                MinHashLSH (`--mllib-tables` hash tables, default 5),
                approxSimilarityJoin at Jaccard distance 0.6 (similarity 0.4, our default
                threshold), clusters by connected components of the pairs on the driver
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from .common import ROOT, find_data, git_describe, log, machine, measure
from . import corpora

TOOLS = ["cli", "python-arrow", "python-list", "spark-local1", "spark-local2", "spark-standalone",
         "spark-standalone1", "mllib-local2"]

PY_API = r"""
import sys, time, json
import pyarrow.json as pj, pyarrow.parquet as pq
import neardup
corpus, out, kind = sys.argv[1:4]
t0 = time.perf_counter()
table = pj.read_json(corpus)
texts = table["text"] if kind == "arrow" else table["text"].to_pylist()
result = neardup.dedup(texts, ids=table["id"])
pq.write_table(result.drop_columns(["keep"]), out)
print(json.dumps({"seconds": time.perf_counter() - t0}))
"""


MLLIB = r"""
import json, sys, time
from pyspark.ml.feature import HashingTF, MinHashLSH, NGram
from pyspark.sql import SparkSession, functions as F
import pyarrow as pa, pyarrow.parquet as pq
corpus, out, tables = sys.argv[1], sys.argv[2], int(sys.argv[3])
spark = SparkSession.builder.appName("mllib-minhashlsh").getOrCreate()
t0 = time.perf_counter()
df = spark.read.schema("id string, text string").json(corpus)
chars = df.select("id", F.split(F.regexp_replace(F.lower("text"), r"[\s\p{P}\p{S}]", ""), "").alias("chars"))
grams = NGram(n=3, inputCol="chars", outputCol="grams").transform(chars)
tf = HashingTF(inputCol="grams", outputCol="features", numFeatures=1 << 20, binary=True).transform(grams)
tf = tf.filter(F.size("grams") > 0).select("id", "features").persist()
model = MinHashLSH(inputCol="features", outputCol="hashes", numHashTables=tables, seed=1).fit(tf)
pairs = (model.approxSimilarityJoin(tf, tf, 0.6, distCol="distance")
         .select(F.col("datasetA.id").alias("a"), F.col("datasetB.id").alias("b"))
         .filter(F.col("a") < F.col("b")).collect())
ids = [r["id"] for r in df.select("id").collect()]
parent = {i: i for i in ids}
def find(x):
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x
for r in pairs:
    ra, rb = find(r["a"]), find(r["b"])
    if ra != rb:
        parent[max(ra, rb)] = min(ra, rb)
cluster = [find(i) for i in ids]
pq.write_table(pa.table({"id": ids, "cluster": cluster,
                         "duplicate_of": [c if c != i else None for i, c in zip(ids, cluster)],
                         "similarity": [None] * len(ids)}), out)
print(json.dumps({"seconds": time.perf_counter() - t0, "pairs": len(pairs)}))
spark.stop()
"""


def mllib_command(venv_python: str, corpus: str, out: str, driver_memory: str, tables: int) -> list[str]:
    import pyspark

    submit = os.path.join(os.path.dirname(pyspark.__file__), "bin", "spark-submit")
    script = out + ".mllib.py"
    with open(script, "w") as fh:
        fh.write(MLLIB)
    return [
        submit, "--master", "local[2]", "--driver-memory", driver_memory,
        "--conf", f"spark.pyspark.python={venv_python}",
        "--conf", f"spark.pyspark.driver.python={venv_python}",
        "--conf", "spark.sql.files.maxPartitionBytes=16m",
        "--conf", "spark.sql.shuffle.partitions=32",
        "--conf", "spark.ui.enabled=false",
        script, corpus, out + ".parquet", str(tables),
    ]


def by_id(corpus: str) -> str:
    """A copy of `corpus` with its lines sorted by id, made once: a DataFrame has no line
    order, and the Spark path ranks documents by id, so every tool reads this order."""
    out = corpus[: -len(".jsonl")] + ".byid.jsonl"
    if os.path.exists(out) and os.path.getmtime(out) >= os.path.getmtime(corpus):
        return out
    with open(corpus, "rb") as fh:
        lines = fh.readlines()
    lines.sort(key=lambda line: json.loads(line)["id"])
    with open(out + ".tmp", "wb") as fh:
        fh.writelines(lines)
    os.replace(out + ".tmp", out)
    return out


def spark_command(venv_python: str, master: str, corpus: str, out: str, driver_memory: str,
                  job_args: tuple = ()) -> list[str]:
    import pyspark

    submit = os.path.join(os.path.dirname(pyspark.__file__), "bin", "spark-submit")
    return [
        submit, "--master", master, "--driver-memory", driver_memory,
        "--conf", f"spark.pyspark.python={venv_python}",
        "--conf", f"spark.pyspark.driver.python={venv_python}",
        "--conf", "spark.executor.memory=5g",
        "--conf", "spark.sql.files.maxPartitionBytes=16m",
        "--conf", "spark.sql.shuffle.partitions=32",
        "--conf", "spark.ui.enabled=false",
        os.path.join(ROOT, "python", "spark", "dedup_job.py"), corpus, out,
        "--schema", "id string, text string", *job_args,
    ]


def read_clusters(path: str) -> dict:
    if path.endswith(".jsonl"):
        out = {}
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                out[row["id"]] = (row["cluster"], row["duplicate_of"], row["similarity"])
        return out
    import pyarrow.parquet as pq

    t = pq.read_table(path).to_pydict()
    return {i: (c, d, s) for i, c, d, s in zip(t["id"], t["cluster"], t["duplicate_of"], t["similarity"])}


def pair_scores(clusters: dict, truth: dict) -> tuple[float, float, float]:
    """Pairwise precision, recall and F1 of the output clusters against the truth clusters."""
    from collections import Counter

    both = Counter((clusters[i][0], truth[i]) for i in truth)
    predicted = Counter(clusters[i][0] for i in truth)
    actual = Counter(truth.values())
    pairs = lambda counts: sum(n * (n - 1) // 2 for n in counts.values())  # noqa: E731
    tp, p, t = pairs(both), pairs(predicted), pairs(actual)
    precision = tp / p if p else 1.0
    recall = tp / t if t else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def parse_args(argv):
    """The command line of bench/spark.sh."""
    parser = argparse.ArgumentParser(prog="bench/spark.sh", description=__doc__.split("\n")[0])
    parser.add_argument("--bin", required=True, help="the release neardup binary")
    parser.add_argument("--sizes", default="100,1000", help="corpus sizes in MB")
    parser.add_argument("--runs", default="3,1", help="runs per size (one per size, or one for all)")
    parser.add_argument("--tools", default=",".join(TOOLS))
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "out", "spark"))
    parser.add_argument("--data", default=None)
    parser.add_argument("--driver-memory", default="12g")
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument("--mllib-tables", type=int, default=5, help="MinHashLSH hash tables")
    parser.add_argument("--job-args", default="",
                        help="extra arguments of dedup_job.py, e.g. \"--small-input-rows 0\" (the "
                             "distributed path on an input small enough for the driver)")
    parser.add_argument("--method-args", default="",
                        help="method options given to both the command line and the job, e.g. "
                             "\"--method simhash\" (the job takes every option of dedup)")
    parser.add_argument("--timeout", type=float, default=3600,
                        help="seconds a run may take before it is stopped and reported as such")
    return parser.parse_args(argv)


def tool_command(args, tool: str, corpus: str, out: str, master: str | None) -> tuple[str, list[str]]:
    """The clusters file one run of `tool` writes, and the command that runs it."""
    if tool == "cli":
        target = out + ".jsonl"
        cmd = [args.bin, "dedup", corpus, "-o", "/dev/null", "--clusters", target,
               "--id-field", "id", "--quiet", *args.method_args.split()]
    elif tool == "mllib-local2":
        target = out + ".parquet"
        cmd = mllib_command(sys.executable, corpus, out, args.driver_memory, args.mllib_tables)
    elif tool.startswith("python"):
        target = out + ".parquet"
        kind = tool.split("-")[1]
        cmd = [sys.executable, "-c", PY_API, corpus, target, kind]
    else:
        target = out
        where = {"spark-local1": "local[1]", "spark-local2": "local[2]"}.get(tool, master)
        cmd = spark_command(sys.executable, where, corpus, target, args.driver_memory,
                            tuple(args.method_args.split())
                            + tuple(args.job_args.split()))
        if tool == "spark-standalone1":
            cmd[1:1] = ["--total-executor-cores", "1"]
    return target, cmd


def run_tool(args, tool: str, size: float, n_runs: int, corpus: str, master: str | None):
    """`n_runs` measured runs of `tool`: the wall seconds (None for a run stopped at
    --timeout, which ends the runs), the peak RSS, and the clusters of the first run (None
    when it was stopped). A failed run ends the benchmark."""
    walls, rss, clusters = [], [], None
    for run in range(n_runs):
        out = os.path.join(args.out, "runs", f"{size:g}mb-{tool}-{run}")
        subprocess.run(["rm", "-rf", out])
        os.makedirs(os.path.dirname(out), exist_ok=True)
        target, cmd = tool_command(args, tool, corpus, out, master)
        log(f"{size:g} MB {tool} run {run + 1}/{n_runs}")
        with open(out + ".log", "w") as err:
            record = measure(cmd, None, stdout=err, stderr=err, timeout=args.timeout,
                             env={"SPARK_LOCAL_IP": "127.0.0.1"})
        if record.get("timed_out"):
            log(f"  {tool} stopped after {args.timeout:.0f} s")
            walls.append(None)
            break
        if record["returncode"] != 0 or not os.path.exists(target):
            raise SystemExit(f"{tool} failed; see {out}.log")
        walls.append(record["wall_seconds"])
        rss.append(record["peak_rss_bytes"])
        if clusters is None:
            clusters = read_clusters(target)
    return walls, rss, clusters


def run_size(args, size: float, n_runs: int, data: str, tools: list[str], master: str | None) -> dict:
    """Every tool on the synth corpus of `size` MB (its lines sorted by id): the entry of
    results.json for that size."""
    corpus, truth_path = corpora.zh_synth(args.bin, data, os.path.join(args.out, "corpora"), size,
                                          20240601)
    corpus = by_id(corpus)
    truth = {}
    with open(truth_path, encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            truth[row["id"]] = row["cluster"]
    entry = {"mb": os.path.getsize(corpus) / 1e6, "documents": len(truth),
             "corpus": os.path.relpath(corpus, ROOT), "tools": {}}
    reference = None
    for tool in tools:
        walls, rss, clusters = run_tool(args, tool, size, n_runs, corpus, master)
        if tool == "cli":
            reference = clusters
        if clusters is None:
            entry["tools"][tool] = {"timed_out": args.timeout}
            continue
        precision, recall, f1 = pair_scores(clusters, truth)
        entry["tools"][tool] = {
            "runs": walls, "median_s": statistics.median(walls),
            "peak_rss_mb": max(rss) / 2**20,
            "kept": sum(1 for v in clusters.values() if v[1] is None),
            "precision": precision, "recall": recall, "f1": f1,
            "same_as_cli": None if reference is None else clusters == reference,
        }
        log(f"  median {entry['tools'][tool]['median_s']:.1f} s, same as CLI: "
            f"{entry['tools'][tool]['same_as_cli']}")
    return entry


def run_benchmark(args, results_path: str) -> None:
    """Every size, writing results.json after each one; the standalone cluster (when a
    spark-standalone tool runs) is started first and stopped however the runs end."""
    data = find_data(args.data)
    sizes = [float(s) for s in args.sizes.split(",")]
    runs = [int(r) for r in args.runs.split(",")]
    runs = runs * len(sizes) if len(runs) == 1 else runs
    tools = args.tools.split(",")
    results = {"machine": machine(), "commit": git_describe(), "sizes": [],
               "method_args": args.method_args, "job_args": args.job_args}
    master = None
    logs = os.path.join(args.out, "standalone")
    script = os.path.join(ROOT, "python", "spark", "standalone.sh")
    env = dict(os.environ, PYTHON=sys.executable, WORKER_MEMORY="6g", SPARK_LOCAL_IP="127.0.0.1")
    try:
        if "spark-standalone" in tools:
            master = subprocess.run([script, "start", logs, "7097"], check=True, env=env,
                                    capture_output=True, text=True).stdout.split()[-1]
        for size, n_runs in zip(sizes, runs):
            results["sizes"].append(run_size(args, size, n_runs, data, tools, master))
            with open(results_path, "w") as fh:
                json.dump(results, fh, indent=1)
    finally:
        if master:
            subprocess.run([script, "stop", logs], env=env)


def render(results: dict) -> str:
    """results.md: the machine line, then one table per corpus size."""
    report = [f"Machine: {results['machine']['cpu']}, {results['machine']['nproc']} cores; "
              f"{results['machine']['date']}; commit {results['commit']}."]
    for name in ("method_args", "job_args"):
        if results.get(name):
            report[-1] += f" --{name.replace('_', '-')} \"{results[name]}\"."
    report.append("")
    for entry in results["sizes"]:
        report += [f"**{entry['mb']:.0f} MB, {entry['documents']:,} documents** (`{entry['corpus']}`)", "",
                   "| tool | median s | x CLI | runs (s) | peak RSS MiB | kept | P | R | F1 | same clusters as CLI |",
                   "|---|---:|---:|---|---:|---:|---:|---:|---:|---|"]
        cli = entry["tools"].get("cli", {}).get("median_s")
        for tool, r in entry["tools"].items():
            if "timed_out" in r:
                report.append(f"| {tool} | > {r['timed_out']:.0f} (stopped) | | | | | | | | |")
                continue
            ratio = f"{r['median_s'] / cli:.2f}" if cli else "-"
            runs = ", ".join(f"{w:.1f}" for w in r["runs"])
            same = "-" if r["same_as_cli"] is None else ("yes" if r["same_as_cli"] else "**no**")
            report.append(f"| {tool} | {r['median_s']:.1f} | {ratio} | {runs} | {r['peak_rss_mb']:.0f} | "
                          f"{r['kept']:,} | {r['precision']:.4f} | {r['recall']:.4f} | {r['f1']:.4f} | {same} |")
        report.append("")
    return "\n".join(report)


def main(argv=None) -> int:
    args = parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    results_path = os.path.join(args.out, "results.json")
    if not args.report_only:
        run_benchmark(args, results_path)
    with open(results_path) as fh:
        results = json.load(fh)
    text = render(results)
    with open(os.path.join(args.out, "results.md"), "w") as fh:
        fh.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
