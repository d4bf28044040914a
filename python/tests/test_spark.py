"""`neardup.spark`: the same clusters as `neardup dedup` on a local Spark, whatever the
partitioning."""

from __future__ import annotations

import json
import random
import re

import pytest

import neardup
import neardup.spark
from conftest import as_result, run_cli

pytest.importorskip("pyspark")

#: The Spark path learns what the command line learns from its corpus: both run at their
#: defaults.
NO_CORPUS: list = []

#: The two paths: on the executors, and a small input on the driver in one piece.
PATHS = [0, 100_000]


def spark_dedup(df, **options):
    """`neardup.spark.dedup` on the executors (the small-input shortcut off): these tests'
    inputs are small."""
    options.setdefault("small_input_rows", 0)
    return neardup.spark.dedup(df, **options)


def frame(spark, rows, partitions=None):
    df = spark.createDataFrame([(r["id"], r["text"]) for r in rows], "id string, text string")
    return df.repartition(partitions) if partitions else df


def test_the_corpus_is_in_the_order_spark_ranks_by(corpus):
    """Regression: without the shared data the corpus kept the news example's file order, the
    order the command line reads, while Spark ranks by id, and every comparison failed. It is
    sorted by id, with the data or without."""
    assert [r["id"] for r in corpus] == sorted(r["id"] for r in corpus)


@pytest.mark.parametrize("options", [
    [],
    ["--small-input-rows", "100000"],
    ["--small-input-rows", "100000", "--keep", "longest", "--cluster", "connected"],
    ["--max-driver-pairs", "0"],
    ["--cluster", "connected"],
    ["--keep", "longest", "--threshold", "0.6"],
    ["--method", "exact"],
    ["--method", "supershingle"],
    ["--method", "imatch"],
    ["--method", "topn"],
    ["--method", "simhash"],
    ["--method", "simhash", "--max-distance", "3", "--cluster", "connected"],
    ["--method", "simhash", "--verify", "jaccard", "--max-driver-pairs", "0"],
    ["--method", "join"],
    ["--method", "join", "--measure", "cosine", "--threshold", "0.7"],
])
def test_same_clusters_as_the_command_line(spark, cli, tmp_path, corpus, options):
    # max_driver_pairs and small_input_rows are Spark's own: 0 clusters on the executors, by
    # component; 100000 runs this small input on the driver in one piece.
    own = ("--max-driver-pairs", "--small-input-rows")
    cli_options = [o for i, o in enumerate(options)
                   if o not in own and (i == 0 or options[i - 1] not in own)]
    expected = run_cli(cli, tmp_path, corpus, *NO_CORPUS, *cli_options)
    kwargs = dict(zip((o[2:].replace("-", "_") for o in options[::2]), options[1::2]))
    kwargs = {k: int(v) if k in ("max_driver_pairs", "small_input_rows") else v
              for k, v in kwargs.items()}
    got = as_result(spark_dedup(frame(spark, corpus, 3), **kwargs).collect())
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
    got = as_result(spark_dedup(frame(spark, rows, 2), bucket_cap=5,
                                        candidate_budget=2, threshold=0.7).collect())
    assert got == expected
    # The flood is one large component: clustered on the executors, the same.
    got = as_result(spark_dedup(frame(spark, rows, 2), bucket_cap=5, candidate_budget=2,
                                        threshold=0.7, max_driver_pairs=0).collect())
    assert got == expected


def test_simhash_budget_as_the_command_line(spark, cli, tmp_path, corpus):
    """A flood of near-identical notices under a small candidate budget: the Hamming join
    on Spark keeps each document's nearest partners up to the engine's level."""
    rng = random.Random(7)
    flood = [{"id": f"flood-{i:04d}",
              "text": f"尊敬的用户，您的验证码是{rng.randint(100000, 999999)}，请在五分钟内完成验证，"
                      f"请勿泄露给他人。编号{i % 7}"} for i in range(300)]
    rows = sorted(corpus[:400] + flood, key=lambda r: r["id"])
    options = ["--method", "simhash", "--candidate-budget", "2"]
    stats = tmp_path / "stats.json"
    expected = run_cli(cli, tmp_path, rows, *options, "--stats", str(stats))
    assert json.loads(stats.read_text())["budget_hits"] > 0
    got = as_result(spark_dedup(frame(spark, rows, 2), method="simhash",
                                candidate_budget=2).collect())
    assert got == expected


@pytest.mark.parametrize("method", ["simhash"])
def test_templates_duplicate_as_the_command_line(spark, cli, tmp_path, corpus, method):
    """A flood of one template's fillings with `templates="duplicate"`: the fillings'
    fingerprints are not within the distance, and the Spark path pairs them through their
    template keys as the engine does (one cluster of the flood, as on the command line)."""
    rng = random.Random(11)
    flood = [{"id": f"flood-{i:04d}",
              "text": f"尊敬的{rng.choice('张王李赵刘陈')}先生，您尾号{rng.randint(1000, 9999)}的账户于"
                      f"{rng.randint(1, 12)}月{rng.randint(1, 28)}日支出{rng.randint(10, 9999)}元，"
                      f"余额{rng.randint(10, 99999)}元。如有疑问请致电客服。"} for i in range(300)]
    rows = sorted(corpus[:400] + flood, key=lambda r: r["id"])
    options = ["--method", method, "--templates", "duplicate"]
    expected = run_cli(cli, tmp_path, rows, *options)
    flooded = {v[0] for k, v in expected.items() if k.startswith("flood-")}
    assert len(flooded) < 10, flooded
    got = as_result(spark_dedup(frame(spark, rows, 2), method=method,
                                templates="duplicate").collect())
    assert got == expected


@pytest.mark.parametrize("frequent", [0, 50])
def test_join_prefixes_under_any_broadcast_as_the_command_line(spark, cli, tmp_path, corpus,
                                                               monkeypatch, frequent):
    """The set join's prefixes are taken rarer first with the counts of at most
    `_FREQUENT_TOKENS` tokens broadcast (the others count 0): any such order finds the
    join's pairs, so few or none broadcast give the command line's clusters too."""
    monkeypatch.setattr(neardup.spark.set_join, "_FREQUENT_TOKENS", frequent)
    rows = corpus[:800]
    expected = run_cli(cli, tmp_path, rows, "--method", "join", "--threshold", "0.5")
    got = as_result(spark_dedup(frame(spark, rows, 3), method="join", threshold=0.5).collect())
    assert got == expected
    assert sum(1 for v in got.values() if v[1] is not None) > 10


def long_texts(corpus, count=20, length=2500):
    """`count` texts of at least `length` characters: the corpus's texts joined end to end,
    in order (the news example alone has enough for 20)."""
    texts = iter(r["text"] for r in corpus)
    rows = []
    while len(rows) < count:
        parts = []
        while sum(map(len, parts)) < length:
            parts.append(next(texts))
        rows.append({"id": f"long-{len(rows):02d}", "text": "\n".join(parts)})
    return rows


def test_join_of_long_texts_is_refused_with_the_reason(spark, corpus):
    """Texts of 2,500 characters and more (past the set join's mean of 1,000 join tokens)
    are refused for `join` on Spark, with the reason, on the parameter `method`."""
    long = long_texts(corpus)
    with pytest.raises(neardup.NeardupError, match="short texts") as raised:
        spark_dedup(frame(spark, long, 2), method="join")
    assert raised.value.parameter == "method"


def test_boilerplate_lines_are_learned_as_on_the_command_line(spark, cli, tmp_path, corpus):
    """Short posts in three accounts' wrappers, some re-wrapped by another account: the
    wrappers' lines are boilerplate that the corpus pass finds, on Spark as on the command
    line; without it, posts merge by their wrappers."""
    headers = [f"本文来源于{name}，版权归原作者所有，如有侵权请联系删除，转载请注明出处与作者。"
               for name in ("新华网", "人民网", "澎湃新闻")]
    footers = [f"关注{name}公众号，获取更多精彩内容，每日推送最新资讯与深度报道。"
               for name in ("新华网", "人民网", "澎湃新闻")]
    bodies = [r["text"] for r in corpus[:300]]
    rows = [{"id": f"w{i:04d}", "text": f"{headers[i % 3]}\n{body}\n{footers[i % 3]}"}
            for i, body in enumerate(bodies)]
    rewrapped = range(0, len(bodies), 10)  # 300 bodies, or the 227 of the news example alone
    rows += [{"id": f"r{i:04d}", "text": f"{headers[(i + 1) % 3]}\n{bodies[i]}\n{footers[(i + 1) % 3]}"}
             for i in rewrapped]
    rows.sort(key=lambda r: r["id"])
    expected = run_cli(cli, tmp_path, rows, *NO_CORPUS)
    assert expected != run_cli(cli, tmp_path, rows, *NO_CORPUS, "--boilerplate-df", "off")
    got = as_result(spark_dedup(frame(spark, rows, 3)).collect())
    assert got == expected
    # The re-wraps are found through another account's wrapper.
    assert all(got[f"r{i:04d}"][0] == got[f"w{i:04d}"][0] for i in rewrapped)


def test_common_shingles_are_marked_as_on_the_command_line(spark, cli, tmp_path, corpus):
    """A flood of one template's notices: their wording is common (in more than `max_df`
    leaders), so two notices must also agree on their rare shingles, on Spark as on the
    command line. The slot check is off, so that the common marks alone tell them apart."""
    rng = random.Random(11)
    flood = [{"id": f"n{i:04d}",
              "text": f"【{rng.choice(['招商银行', '工商银行'])}】您尾号{rng.randint(1000, 9999)}的储蓄卡于"
                      f"{rng.randint(1, 12)}月{rng.randint(1, 28)}日支出人民币{rng.randint(10, 999)}元，"
                      f"当前余额{rng.randint(100, 99999)}元。如非本人操作请致电客服，谨防电信诈骗。"}
             for i in range(400)]
    rows = sorted(corpus[:300] + flood, key=lambda r: r["id"])
    expected = run_cli(cli, tmp_path, rows, "--slots", "off")
    assert expected != run_cli(cli, tmp_path, rows, "--slots", "off", "--max-df", "off")
    got = as_result(spark_dedup(frame(spark, rows, 3), slots="off").collect())
    assert got == expected


def test_deterministic_across_partitionings(spark, corpus):
    rows = corpus[:700]
    results = []
    for partitions, shuffle in ((1, 1), (5, 7), (2, 3), (3, None)):
        results.append(as_result(spark_dedup(frame(spark, rows, partitions), cluster="connected",
                                             shuffle_partitions=shuffle).collect()))
    assert results[0] == results[1] == results[2] == results[3]
    # The session's setting is restored.
    assert spark.conf.get("spark.sql.shuffle.partitions") == "4"


def test_equal_to_the_python_api_and_kept_rows(spark, corpus):
    rows = corpus[:500]
    local = neardup.dedup([r["text"] for r in rows], ids=[r["id"] for r in rows])
    df = frame(spark, rows, 2)
    assert as_result(spark_dedup(df).collect()) == as_result(local)
    kept = {r["id"] for r in neardup.spark.kept(df).collect()}
    assert kept == {i for i, k in zip(local.column("id").to_pylist(),
                                      local.column("keep").to_pylist()) if k}


@pytest.mark.parametrize("small", PATHS)
def test_order_column_and_integer_ids(spark, small):
    texts = ["今天北京天气晴朗，适合出门散步，公园里人很多。", "今天北京天气晴朗,适合出门散步!公园里人很多。",
             "今天北京天气晴朗，适合出门散步，公园里人很多！！"]
    df = spark.createDataFrame([(30, texts[0], 3), (10, texts[1], 2), (20, texts[2], 1)],
                               "doc long, body string, arrived long")
    by_id = neardup.spark.dedup(df, text_col="body", id_col="doc",
                                small_input_rows=small).collect()
    assert {r["doc"] if "doc" in r else r["id"]: r["cluster"] for r in by_id} == {10: 10, 20: 10, 30: 10}
    by_arrival = neardup.spark.dedup(df, text_col="body", id_col="doc", order_col="arrived",
                                     small_input_rows=small)
    assert {r["id"]: r["cluster"] for r in by_arrival.collect()} == {10: 20, 20: 20, 30: 20}
    assert dict(by_arrival.dtypes)["duplicate_of"] == "bigint"


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
    (lambda df: neardup.spark.dedup(df, method="ngram"), "method", "one machine"),
    (lambda df: neardup.spark.dedup(df, method="join", measure="edit"), "measure", "squared"),
    (lambda df: neardup.spark.dedup(df, weighting="idf"), "weighting", "'idf'"),
    (lambda df: neardup.spark.dedup(df, threshold=3), "threshold", "3"),
    (lambda df: neardup.spark.dedup(df, text_col="body"), "columns", "no column 'body'"),
    (lambda df: neardup.spark.dedup(df, cluster="all"), "cluster", "all"),
    (lambda df: neardup.spark.dedup(df, bucket_cap=0), "bucket_cap", "at least 1"),
    (lambda df: neardup.spark.dedup(df, max_driver_pairs=-1), "max_driver_pairs", "0 or more"),
    (lambda df: neardup.spark.dedup(df, small_input_rows=-1), "small_input_rows", "0 or more"),
    (lambda df: neardup.spark.dedup(df, shuffle_partitions=0), "shuffle_partitions", "at least 1"),
])
def test_errors_name_the_option(spark, call, parameter, message):
    texts = ["今天北京天气晴朗，适合出门散步，公园里人很多。", "今天北京天气晴朗,适合出门散步!公园里人很多！花开了。"]
    df = spark.createDataFrame([("a", texts[0]), ("b", texts[1])], "id string, text string")
    with pytest.raises(neardup.NeardupError, match=re.escape(message)) as raised:
        call(df)
    assert raised.value.parameter == parameter


@pytest.mark.parametrize("small", PATHS)
def test_bad_rows_are_refused(spark, small):
    df = spark.createDataFrame([("a", "x"), ("a", "y")], "id string, text string")
    with pytest.raises(neardup.NeardupError, match="the id 'a' is on 2 rows"):
        neardup.spark.dedup(df, small_input_rows=small)
    df = spark.createDataFrame([("a", "x"), ("b", None)], "id string, text string")
    with pytest.raises(neardup.NeardupError, match="null for id 'b'"):
        neardup.spark.dedup(df, small_input_rows=small)
    df = spark.createDataFrame([("a", 1)], "id string, text long")
    with pytest.raises(neardup.NeardupError, match="expected string"):
        neardup.spark.dedup(df, small_input_rows=small)


@pytest.mark.parametrize("small", PATHS)
def test_an_empty_frame(spark, small):
    df = spark.createDataFrame([], "id string, text string")
    assert neardup.spark.dedup(df, small_input_rows=small).collect() == []
    assert neardup.spark.dedup(df, cluster="connected", small_input_rows=small).collect() == []


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


def test_executors_without_the_package_get_a_clear_error():
    """A session whose executors run another Python (no neardup there) is refused with what
    to set, not with a ModuleNotFoundError from deep in a task."""

    class Failing:
        applicationId = "app-without-neardup"

        def parallelize(self, *_):
            return self

        def map(self, _):
            return self

        def collect(self):
            raise RuntimeError("Python worker failed: ModuleNotFoundError: No module named 'neardup'")

    class Session:
        sparkContext = Failing()

    with pytest.raises(neardup.NeardupError, match="PYSPARK_PYTHON=") as raised:
        neardup.spark._check_executors(Session())
    assert raised.value.parameter == "executors"
    # Any other failure is not disguised.
    Failing.collect = lambda self: (_ for _ in ()).throw(RuntimeError("disk full"))
    with pytest.raises(RuntimeError, match="disk full"):
        neardup.spark._check_executors(Session())


def test_the_job_takes_the_command_lines_options(tmp_path, cli, corpus):
    """`dedup_job.py` has a flag for every method option of `neardup dedup`, and they reach
    the method: a run with options gives the command line's clusters with the same options."""
    import json
    import os
    import subprocess
    import sys

    import pyarrow.parquet as pq
    from conftest import REPO

    job = REPO / "python" / "spark" / "dedup_job.py"
    shown = subprocess.run([sys.executable, str(job), "--help"], capture_output=True, text=True)
    for flag in ("--max-df", "--boilerplate-df", "--ngram", "--slots", "--slot-agreement",
                 "--bucket-cap", "--candidate-budget", "--order-col", "--stopwords"):
        assert flag in shown.stdout, flag
    rows = sorted(corpus[:400], key=lambda r: r["id"])
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                      encoding="utf-8")
    options = ["--threshold", "<25:0.5,0.6", "--ngram", "2", "--slots", "off",
               "--cluster", "connected"]
    expected = run_cli(cli, tmp_path, rows, *options)
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable)
    done = subprocess.run([sys.executable, str(job), str(source), str(tmp_path / "out"),
                           "--schema", "id string, text string", *options],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    got = as_result(pq.read_table(tmp_path / "out").to_pylist())
    assert got == expected
    assert expected != run_cli(cli, tmp_path, rows, "--cluster", "connected")
