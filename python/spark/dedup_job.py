"""A Spark job: deduplicate a JSONL or Parquet dataset with neardup and write its clusters.

    spark-submit [--master URL] [--archives env.tar.gz#environment \\
        --conf spark.pyspark.python=./environment/bin/python] \\
        python/spark/dedup_job.py INPUT OUTPUT [--text-col text] [--id-col id] \\
        [--method minhash] [--threshold T] [--cluster representative] [--keep first] \\
        [--bucket-cap N] [--candidate-budget N] [--order-col COL] \\
        [--ngram 5 --max-df 0.1% ... (every method option of `neardup dedup`)] \\
        [--option NAME=VALUE ...] [--kept KEPT]

OUTPUT receives the clusters as Parquet (id, cluster, duplicate_of, similarity); with --kept,
the kept rows are written there too. Prints the counts and the time as one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import neardup
import neardup.spark
from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def _overlap(a: str, b: str) -> bool:
    """Whether one path is the other or inside it (local paths resolved, links followed;
    URIs compared as written)."""
    def norm(path: str) -> str:
        return path.rstrip("/") if "://" in path else os.path.realpath(path)
    a, b = norm(a), norm(b)
    return a == b or a.startswith(b + "/") or b.startswith(a + "/")


def _add_method_options(parser: argparse.ArgumentParser) -> list[str]:
    """A flag for every parameter of every method, as `neardup dedup` has them (`--max-df`,
    `--ngram`, `--stopwords`...); returns their names (snake_case). A method refuses the
    parameters it does not take, naming them."""
    seen: dict[str, str] = {}
    for _method, _about, params in neardup._neardup.methods():
        for name, kind, _default, help_text in params:
            if name != "threshold" and name not in seen:
                help_text = help_text.replace("%", "%%")  # argparse formats help
                seen[name] = help_text
                flag = "--" + name.replace("_", "-")
                if str(kind).lower() == "flag":
                    parser.add_argument(flag, dest=name, action="store_true", default=False,
                                        help=help_text)
                else:
                    parser.add_argument(flag, dest=name, help=help_text)
    return list(seen)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--text-col", default="text")
    parser.add_argument("--id-col", default="id")
    parser.add_argument("--schema", help="a DDL schema for JSON input, e.g. 'id string, text string'")
    parser.add_argument("--method", default="minhash")
    parser.add_argument("--threshold", help="a number, or a rule by length (\"<25:0.43,0.4\")")
    parser.add_argument("--cluster", default="representative")
    parser.add_argument("--keep", default="first")
    parser.add_argument("--bucket-cap", type=int, default=1000)
    parser.add_argument("--candidate-budget", type=int, default=32)
    parser.add_argument("--order-col", help="the order keep=first follows (default: the id column)")
    parser.add_argument("--max-driver-pairs", type=int, default=1_000_000)
    parser.add_argument("--small-input-rows", type=int, default=100_000,
                        help="inputs of at most this many rows run on the driver in one piece "
                             "(0: never)")
    parser.add_argument("--shuffle-partitions", type=int,
                        help="shuffle partitions of the run (default: from the input's rows)")
    method_options = _add_method_options(parser)
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--kept", help="also write the kept rows (Parquet) here")
    args = parser.parse_args()
    # Spark's overwrite mode deletes an output before writing it: never an input or the other
    # output.
    outputs = [("OUTPUT", args.output)] + ([("--kept", args.kept)] if args.kept else [])
    for name, path in outputs:
        if _overlap(path, args.input):
            parser.error(f"{name} {path!r} is the input or holds it: it would be deleted")
    if args.kept and _overlap(args.output, args.kept):
        parser.error(f"OUTPUT {args.output!r} and --kept {args.kept!r} overlap")
    options = {name: value for name in method_options
               if (value := getattr(args, name)) is not None and value is not False}
    for option in args.option:
        name, _, value = option.partition("=")
        options[name.replace("-", "_")] = value

    spark = SparkSession.builder.appName("neardup-dedup").getOrCreate()
    started = time.time()
    if args.input.endswith(".parquet") or not args.input.endswith((".jsonl", ".json")):
        df = spark.read.parquet(args.input)
    else:
        reader = spark.read.schema(args.schema) if args.schema else spark.read
        df = reader.json(args.input)
    clusters = neardup.spark.dedup(
        df, text_col=args.text_col, id_col=args.id_col, method=args.method,
        threshold=args.threshold, cluster=args.cluster, keep=args.keep,
        bucket_cap=args.bucket_cap, candidate_budget=args.candidate_budget,
        order_col=args.order_col, max_driver_pairs=args.max_driver_pairs,
        small_input_rows=args.small_input_rows, shuffle_partitions=args.shuffle_partitions,
        **options,
    ).persist()
    clusters.write.mode("overwrite").parquet(args.output)
    if args.kept:
        keep = clusters.filter(F.col("duplicate_of").isNull()).select(
            F.col("id").alias(args.id_col))
        df.join(keep, args.id_col, "left_semi").write.mode("overwrite").parquet(args.kept)
    counts = clusters.agg(
        F.count("*").alias("documents"),
        F.sum(F.col("duplicate_of").isNull().cast("long")).alias("kept"),
    ).collect()[0]
    print(json.dumps({
        "documents": counts["documents"],
        "kept": counts["kept"],
        "removed": counts["documents"] - counts["kept"],
        "seconds": round(time.time() - started, 3),
        "master": spark.sparkContext.master,
    }))
    spark.stop()


if __name__ == "__main__":
    main()
