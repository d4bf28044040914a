"""`neardup.spark`: the same clusters as `neardup dedup` on a local Spark, whatever the
partitioning."""

from __future__ import annotations

import random
import re

import pytest

import neardup
import neardup.spark
from conftest import as_result, run_cli

pytest.importorskip("pyspark")

#: The Spark path makes no corpus pass: the command line is run without one.
NO_CORPUS = ["--max-df", "off", "--boilerplate-df", "off"]


def frame(spark, rows, partitions=None):
    df = spark.createDataFrame([(r["id"], r["text"]) for r in rows], "id string, text string")
    return df.repartition(partitions) if partitions else df


@pytest.mark.parametrize("options", [
    [],
    ["--cluster", "connected"],
    ["--keep", "longest", "--threshold", "0.6"],
    ["--method", "exact"],
])
def test_same_clusters_as_the_command_line(spark, cli, tmp_path, corpus, options):
    expected = run_cli(cli, tmp_path, corpus, *NO_CORPUS, *options)
    kwargs = dict(zip((o[2:].replace("-", "_") for o in options[::2]), options[1::2]))
    got = as_result(neardup.spark.dedup(frame(spark, corpus, 3), **kwargs).collect())
    assert got == expected
    assert sum(1 for v in got.values() if v[1] is not None) > 10


def test_caps_and_budget_as_the_command_line(spark, cli, tmp_path, corpus):
    """A template flood over a small bucket cap and candidate budget: the Spark path cuts
    the same pairs as the engine (its water-filling partner limit)."""
    rng = random.Random(5)
    flood = [{"id": f"flood-{i:04d}",
              "text": f"尊敬的用户，您的验证码是{rng.randint(100000, 999999)}，请在五分钟内完成验证，"
                      f"请勿泄露给他人。编号{i % 7}"} for i in range(300)]
    rows = sorted(corpus[:400] + flood, key=lambda r: r["id"])
    options = ["--bucket-cap", "5", "--candidate-budget", "2", "--threshold", "0.7"]
    expected = run_cli(cli, tmp_path, rows, *NO_CORPUS, *options)
    got = as_result(neardup.spark.dedup(frame(spark, rows, 2), bucket_cap=5,
                                        candidate_budget=2, threshold=0.7).collect())
    assert got == expected


def test_deterministic_across_partitionings(spark, corpus):
    rows = corpus[:700]
    results = []
    for partitions, shuffle in ((1, 1), (5, 7), (2, 3)):
        spark.conf.set("spark.sql.shuffle.partitions", str(shuffle))
        try:
            results.append(as_result(neardup.spark.dedup(frame(spark, rows, partitions),
                                                         cluster="connected").collect()))
        finally:
            spark.conf.set("spark.sql.shuffle.partitions", "4")
    assert results[0] == results[1] == results[2]


def test_equal_to_the_python_api_and_kept_rows(spark, corpus):
    rows = corpus[:500]
    local = neardup.dedup([r["text"] for r in rows], ids=[r["id"] for r in rows],
                          max_df="off", boilerplate_df="off")
    df = frame(spark, rows, 2)
    assert as_result(neardup.spark.dedup(df).collect()) == as_result(local)
    kept = {r["id"] for r in neardup.spark.kept(df).collect()}
    assert kept == {i for i, k in zip(local.column("id").to_pylist(),
                                      local.column("keep").to_pylist()) if k}


def test_order_column_and_integer_ids(spark):
    texts = ["今天北京天气晴朗，适合出门散步，公园里人很多。", "今天北京天气晴朗,适合出门散步!公园里人很多。",
             "今天北京天气晴朗，适合出门散步，公园里人很多！！"]
    df = spark.createDataFrame([(30, texts[0], 3), (10, texts[1], 2), (20, texts[2], 1)],
                               "doc long, body string, arrived long")
    by_id = neardup.spark.dedup(df, text_col="body", id_col="doc").collect()
    assert {r["doc"] if "doc" in r else r["id"]: r["cluster"] for r in by_id} == {10: 10, 20: 10, 30: 10}
    by_arrival = neardup.spark.dedup(df, text_col="body", id_col="doc", order_col="arrived")
    assert {r["id"]: r["cluster"] for r in by_arrival.collect()} == {10: 20, 20: 20, 30: 20}


def test_connected_components_against_union_find(spark):
    rng = random.Random(3)
    edges = [(rng.randrange(400), rng.randrange(400)) for _ in range(350)]
    edges += [(i, i + 1) for i in range(500, 560)]  # a long chain
    parent = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in edges:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    nodes = {n for e in edges for n in e if e[0] != e[1]}
    expected = {}
    for n in nodes:
        expected.setdefault(find(n), []).append(n)
    expected = {n: min(members) for members in expected.values() for n in members}
    df = spark.createDataFrame(edges, "a long, b long")
    got = {r["node"]: r["component"] for r in neardup.spark.connected_components(df).collect()}
    assert got == expected


@pytest.mark.parametrize("call,parameter,message", [
    (lambda df: neardup.spark.dedup(df, method="join"), "method", "one machine"),
    (lambda df: neardup.spark.dedup(df, max_df="1%"), "max_df", "only \"off\""),
    (lambda df: neardup.spark.dedup(df, threshold=3), "threshold", "3"),
    (lambda df: neardup.spark.dedup(df, text_col="body"), "columns", "no column 'body'"),
    (lambda df: neardup.spark.dedup(df, cluster="all"), "cluster", "all"),
    (lambda df: neardup.spark.dedup(df, bucket_cap=0), "bucket_cap", "at least 1"),
    (lambda df: neardup.spark.dedup(df, max_driver_pairs=0).collect(), "max_driver_pairs",
     "cluster=\"connected\""),
])
def test_errors_name_the_option(spark, call, parameter, message):
    texts = ["今天北京天气晴朗，适合出门散步，公园里人很多。", "今天北京天气晴朗,适合出门散步!公园里人很多！花开了。"]
    df = spark.createDataFrame([("a", texts[0]), ("b", texts[1])], "id string, text string")
    with pytest.raises(neardup.NeardupError, match=re.escape(message)) as raised:
        call(df)
    assert raised.value.parameter == parameter


def test_bad_rows_are_refused(spark):
    df = spark.createDataFrame([("a", "x"), ("a", "y")], "id string, text string")
    with pytest.raises(neardup.NeardupError, match="the id 'a' is on 2 rows"):
        neardup.spark.dedup(df)
    df = spark.createDataFrame([("a", "x"), ("b", None)], "id string, text string")
    with pytest.raises(neardup.NeardupError, match="null for id 'b'"):
        neardup.spark.dedup(df)
    df = spark.createDataFrame([("a", 1)], "id string, text long")
    with pytest.raises(neardup.NeardupError, match="expected string"):
        neardup.spark.dedup(df)


def test_an_empty_frame(spark):
    df = spark.createDataFrame([], "id string, text string")
    assert neardup.spark.dedup(df).collect() == []
    assert neardup.spark.dedup(df, cluster="connected").collect() == []


def test_the_job_never_overwrites_its_input(tmp_path):
    import subprocess
    import sys

    from conftest import REPO

    source = tmp_path / "in.jsonl"
    source.write_text('{"id": "a", "text": "x"}\n', encoding="utf-8")
    link = tmp_path / "link.jsonl"
    link.symlink_to(source)
    job = REPO / "python" / "spark" / "dedup_job.py"
    for output, extra in ((source, []), (link, []), (tmp_path, []),
                          (tmp_path / "out", ["--kept", str(tmp_path / "out" / "kept")])):
        done = subprocess.run([sys.executable, str(job), str(source), str(output), *extra],
                              capture_output=True, text=True)
        assert done.returncode == 2, done.stderr
        assert "would be deleted" in done.stderr or "overlap" in done.stderr
    assert source.read_text(encoding="utf-8") == '{"id": "a", "text": "x"}\n'
