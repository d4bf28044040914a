"""`neardup.spans` and `neardup.spark.spans`: the spans `neardup spans` removes, from Python
over every input kind and on Spark, on texts that repeat footers, navigation lines and cookie
banners in Chinese, English and emoji."""

from __future__ import annotations

import json
import random
import subprocess

import neardup
import neardup.spark
import pyarrow as pa
import pytest
from conftest import REPO

FOOTER = "本文转载自新华网，版权归原作者所有。如有侵权，请联系删除。"
NAVIGATION = "首页 | 新闻 | 体育 | 财经 | Home | World | Contact us"
COOKIES = "We use cookies 🍪 to improve your experience. By continuing, you agree to our Cookie Policy."
EDITOR = "（责任编辑：王小明）"
BODIES = [
    "今天北京天气晴朗，适合出门散步。公园里人很多！",
    "The market rallied on Tuesday after the central bank held rates. Analysts were surprised.",
    "沪指今天收涨百分之二，成交量明显放大？分析人士称：“行情还会继续。”",
    "Scientists found a new species of frog 🐸 in the rainforest! It glows in the dark.",
    "喜大普奔🎉！球队赢得了冠军。Fans celebrated all night.",
]
LEVELS = {"substring": 16, "line": 10, "sentence": 8}


def corpus(seed: int = 7, documents: int = 48) -> list[str]:
    """Documents that share footers, navigation, cookie banners and bodies, some twice in one
    document, some with CRLF line ends; a few are empty or blank."""
    rng = random.Random(seed)
    texts = []
    for number in range(documents):
        lines = []
        if rng.random() < 0.5:
            lines.append(NAVIGATION)
        body = rng.choice(BODIES) + f" 第{number}条。" + rng.choice(BODIES)
        lines.append(body)
        if rng.random() < 0.3:
            lines.append(COOKIES + " " + COOKIES)
        if rng.random() < 0.6:
            lines.append(FOOTER + rng.choice(["", EDITOR]))
        if rng.random() < 0.15:
            lines.append(FOOTER)
        texts.append(rng.choice(["\n", "\r\n"]).join(lines))
    texts[5] = ""
    texts[11] = "   \n  "
    texts[17] = "😀" * 40 + FOOTER
    return texts


TEXTS = corpus()


def run_spans_cli(cli, tmp_path, texts, *options: str):
    """`neardup spans` over `texts` (JSONL, ids 0, 1, 2... so that the report's documents are
    row positions): the new texts and the report rows."""
    source = tmp_path / "input.jsonl"
    with source.open("w", encoding="utf-8") as out:
        for number, text in enumerate(texts):
            out.write(json.dumps({"id": number, "text": text}, ensure_ascii=False) + "\n")
    output, report = tmp_path / "output.jsonl", tmp_path / "spans.jsonl"
    subprocess.run([str(cli), "spans", str(source), "-o", str(output), "--report", str(report),
                    "--id-field", "id", "--quiet", *options], check=True)
    new = [json.loads(line)["text"] for line in output.read_text(encoding="utf-8").splitlines()]
    rows = [json.loads(line) for line in report.read_text(encoding="utf-8").splitlines()]
    return new, rows


def cli_options(**options) -> list[str]:
    out = []
    for name, value in options.items():
        if value is not None:
            out += ["--" + name.replace("_", "-"), str(value)]
    return out


@pytest.mark.parametrize("remove", ["later", "all"])
@pytest.mark.parametrize("count", ["documents", "occurrences"])
@pytest.mark.parametrize("level", list(LEVELS))
def test_python_removes_what_the_command_line_removes(cli, tmp_path, level, count, remove):
    options = dict(level=level, min_length=LEVELS[level], count=count, remove=remove)
    new, report = neardup.spans(TEXTS, report=True, **options)
    expected, rows = run_spans_cli(cli, tmp_path, TEXTS, *cli_options(**options))
    assert new == expected
    assert report.to_pylist() == rows
    assert new != TEXTS and rows


@pytest.mark.parametrize("keep", ["first", "longest", "shortest"])
@pytest.mark.parametrize("min_count", [2, 3])
def test_keep_orders_and_counts_as_the_command_line(cli, tmp_path, keep, min_count):
    options = dict(min_length=12, min_count=min_count, keep=keep)
    new, report = neardup.spans(TEXTS, report=True, **options)
    expected, rows = run_spans_cli(cli, tmp_path, TEXTS, *cli_options(**options))
    assert new == expected
    assert report.to_pylist() == rows


@pytest.mark.parametrize("level", list(LEVELS))
def test_the_news_example_at_the_default_lengths(cli, tmp_path, level):
    lines = (REPO / "examples" / "news.jsonl").read_text(encoding="utf-8").splitlines()
    texts = [json.loads(line)["text"] for line in lines]
    new, report = neardup.spans(texts, level=level, report=True)
    expected, rows = run_spans_cli(cli, tmp_path, texts, "--level", level)
    assert new == expected
    assert report.to_pylist() == rows


def test_a_footer_stays_in_its_first_document_only():
    texts = ["第一篇：今天有雨。" + FOOTER, "Second: sunny 😀. " + FOOTER, "无关的文字。"]
    assert neardup.spans(texts, min_length=10) == [texts[0], "Second: sunny 😀. ", texts[2]]
    assert neardup.spans(texts, min_length=10, remove="all") == ["第一篇：今天有雨。",
                                                                "Second: sunny 😀. ", texts[2]]
    # Kept by the longest document: the second loses nothing, the first loses the footer.
    assert neardup.spans(texts, min_length=10, keep="longest")[1] == texts[1]


def test_texts_alone_come_back_as_they_came():
    expected = neardup.spans(TEXTS, level="line")
    assert neardup.spans(tuple(TEXTS), level="line") == tuple(expected)
    for make in (pa.array, lambda t: pa.array(t, pa.large_string()),
                 lambda t: pa.array(t, pa.string_view())):
        out = neardup.spans(make(TEXTS), level="line")
        assert isinstance(out, pa.Array) and out.type == make(TEXTS).type
        assert out.to_pylist() == expected
    chunked = neardup.spans(pa.chunked_array([TEXTS[:10], TEXTS[10:]]), level="line")
    assert isinstance(chunked, pa.ChunkedArray) and chunked.to_pylist() == expected


def test_arrow_tables_and_batches_keep_their_other_columns():
    ids = list(range(100, 100 + len(TEXTS)))
    table = pa.table({"id": ids, "body": pa.array(TEXTS, pa.large_string())},
                     metadata={"source": "crawl"})
    out, report = neardup.spans(table, text="body", min_length=16, report=True)
    expected, expected_report = neardup.spans(TEXTS, min_length=16, report=True)
    assert out.schema == table.schema
    assert out.column("id").to_pylist() == ids
    assert out.column("body").to_pylist() == expected
    assert isinstance(report, pa.Table) and report.equals(expected_report)
    batch = neardup.spans(table.to_batches()[0], text="body", min_length=16)
    assert isinstance(batch, pa.RecordBatch) and batch.column(1).to_pylist() == expected
    chunked = pa.Table.from_batches(table.slice(0, 20).to_batches() + table.slice(20).to_batches())
    assert neardup.spans(chunked, text="body", min_length=16).equals(out)


def test_pandas_frames_and_series_keep_their_index_and_columns():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"text": TEXTS, "n": range(len(TEXTS))},
                         index=[f"r{i}" for i in range(len(TEXTS))])
    before = frame.copy()
    expected, expected_report = neardup.spans(TEXTS, level="sentence", report=True)
    out, report = neardup.spans(frame, level="sentence", report=True)
    pd.testing.assert_frame_equal(frame, before)  # the input is untouched
    assert list(out.index) == list(frame.index) and list(out.columns) == ["text", "n"]
    assert out["text"].tolist() == expected and out["n"].tolist() == frame["n"].tolist()
    assert isinstance(report, pd.DataFrame)
    assert report["text"].tolist() == expected_report.column("text").to_pylist()
    assert [list(d) for d in report["documents"]] == \
        expected_report.column("documents").to_pylist()
    series = neardup.spans(frame["text"].astype("string"), level="sentence")
    assert series.dtype == "string" and list(series.index) == list(frame.index)
    assert series.tolist() == expected


def test_polars_frames_and_series():
    pl = pytest.importorskip("polars")
    expected = neardup.spans(TEXTS, level="line")
    frame = pl.DataFrame({"id": range(len(TEXTS)), "text": TEXTS})
    out = neardup.spans(frame, level="line")
    assert out.columns == ["id", "text"] and out["text"].to_list() == expected
    assert neardup.spans(pl.Series("t", TEXTS), level="line").to_list() == expected


def test_the_report_lists_row_positions():
    texts = [chr(0x4E00 + i) + FOOTER for i in range(150)]  # a different character before
    _, report = neardup.spans(texts, min_length=10, report=True)
    row = report.to_pylist()[0]
    assert row["text"] == FOOTER and row["count"] == 149 and row["occurrences"] == 149
    assert row["documents"] == list(range(1, 101)) and row["more_documents"] == 49
    assert row["bytes_removed"] == 149 * len(row["text"].encode())


@pytest.mark.parametrize("options,parameter,message", [
    (dict(level="word"), "level", "expected substring, line or sentence"),
    (dict(count="pages"), "count", "expected documents or occurrences"),
    (dict(remove="first"), "remove", "expected later or all"),
    (dict(keep="oldest"), "keep", "expected first, longest or shortest"),
    (dict(min_length=0), "min_length", "at least 1"),
    (dict(min_length="50"), "min_length", "whole number"),
    (dict(min_length=70_000), "min_length", "line or sentence level"),
    (dict(min_count=1), "min_count", "at least 2"),
    (dict(threads=-1), "threads", "at least 0"),
    (dict(report="yes"), "report", "True or False"),
    (dict(text="body"), "text", "no column 'body'"),
])
def test_bad_arguments_are_refused_by_name(options, parameter, message):
    frame = pa.table({"text": TEXTS[:3]})
    with pytest.raises(neardup.NeardupError, match=message) as error:
        neardup.spans(frame, **options)
    assert error.value.parameter == parameter


@pytest.mark.parametrize("data,parameter,message", [
    (["a", None, "b"], "data", "null on row 1"),
    (pa.table({"text": ["a", None]}), "text", "column 'text' is null on row 1"),
    (pa.table({"text": [1, 2]}), "text", "expected strings"),
    ("one text", "data", "a single string"),
    ([1, 2], "data", "expected a sequence of str"),
])
def test_bad_data_is_refused(data, parameter, message):
    with pytest.raises(neardup.NeardupError, match=message) as error:
        neardup.spans(data)
    assert error.value.parameter == parameter


def test_no_texts():
    assert neardup.spans([]) == []
    out, report = neardup.spans(pa.table({"text": pa.array([], pa.string())}), report=True)
    assert out.num_rows == 0 and report.num_rows == 0


# Spark: the distributed form removes what `neardup.spans` removes from the same texts.


def frame(spark, texts, **columns):
    rows = [(number, text) + tuple(values[number] for values in columns.values())
            for number, text in enumerate(texts)]
    schema = "id long, text string" + "".join(f", {name} long" for name in columns)
    return spark.createDataFrame(rows, schema)


def spark_texts(result) -> dict:
    return {row["id"]: row["text"] for row in result.collect()}


@pytest.mark.parametrize("remove", ["later", "all"])
@pytest.mark.parametrize("count", ["documents", "occurrences"])
@pytest.mark.parametrize("level", list(LEVELS))
def test_spark_removes_what_python_removes(spark, level, count, remove):
    options = dict(level=level, min_length=LEVELS[level], count=count, remove=remove)
    expected = neardup.spans(TEXTS, **options)
    df = frame(spark, TEXTS)
    # Both ways of shipping contexts: the keys broadcast, or every anchor's.
    broadcast = 0 if (count, remove) == ("documents", "all") else 1_000_000
    result = neardup.spark.spans(df, max_broadcast_keys=broadcast, **options)
    assert result.columns == df.columns and result.count() == len(TEXTS)
    got = spark_texts(result)
    assert [got[number] for number in range(len(TEXTS))] == expected


@pytest.mark.parametrize("level", list(LEVELS))
def test_spark_keeps_in_the_order_column(spark, level):
    """Shuffled rows with an order column: the first copy stays in that order, ties in row
    order; other columns come back unchanged."""
    texts = corpus(seed=11, documents=40)
    options = dict(level=level, min_length=LEVELS[level])
    expected = neardup.spans(texts, **options)
    df = frame(spark, texts, position=list(range(len(texts))), pair=[n // 2 for n in
                                                                      range(len(texts))])
    result = neardup.spark.spans(df.repartition(3), order="position", **options)
    rows = {row["id"]: row for row in result.collect()}
    assert [rows[n]["text"] for n in range(len(texts))] == expected
    assert all(rows[n]["pair"] == n // 2 for n in range(len(texts)))
    ties = neardup.spark.spans(df, order="pair", **options)
    assert spark_texts(ties) == dict(enumerate(expected))


def test_spark_groups_split_over_small_batches(spark):
    """A key's group spread over many Arrow batches is walked whole."""
    texts = [f"第{i}条消息。" + FOOTER + " " + COOKIES for i in range(30)]
    expected = neardup.spans(texts, min_length=10)
    previous = spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch")
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "3")
    try:
        result = neardup.spark.spans(frame(spark, texts), min_length=10, shuffle_partitions=2)
        got = spark_texts(result)
    finally:
        spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", previous)
    assert [got[n] for n in range(len(texts))] == expected


def test_spark_the_news_example(spark):
    lines = (REPO / "examples" / "news.jsonl").read_text(encoding="utf-8").splitlines()
    texts = [json.loads(line)["text"] for line in lines]
    expected = neardup.spans(texts)
    got = spark_texts(neardup.spark.spans(frame(spark, texts)))
    assert [got[n] for n in range(len(texts))] == expected


def test_spark_an_empty_frame_and_nothing_repeated(spark):
    empty = spark.createDataFrame([], "id long, text string")
    assert neardup.spark.spans(empty).count() == 0
    texts = ["one text", "another text"]
    assert spark_texts(neardup.spark.spans(frame(spark, texts), min_length=6)) == \
        dict(enumerate(texts))


@pytest.mark.parametrize("options,parameter,message", [
    (dict(level="word"), "level", "expected substring, line or sentence"),
    (dict(min_count=1), "min_count", "at least 2"),
    (dict(text="body"), "text", "no column 'body'"),
    (dict(order="when"), "order", "no column 'when'"),
    (dict(text="id"), "text", "expected string"),
    (dict(max_broadcast_keys=-1), "max_broadcast_keys", "at least 0"),
])
def test_spark_bad_arguments_are_refused_by_name(spark, options, parameter, message):
    with pytest.raises(neardup.NeardupError, match=message) as error:
        neardup.spark.spans(frame(spark, TEXTS[:3]), **options)
    assert error.value.parameter == parameter


def test_spark_null_texts_are_refused(spark):
    df = spark.createDataFrame([(1, "a"), (2, None)], "id long, text string")
    with pytest.raises(neardup.NeardupError, match="null") as error:
        neardup.spark.spans(df)
    assert error.value.parameter == "text"


# The test corpus (the news example, Reuters bodies and edited THUCNews titles, by id).


@pytest.mark.parametrize("level", list(LEVELS))
def test_the_test_corpus_as_the_command_line(cli, tmp_path, corpus, level):
    texts = [row["text"] for row in corpus]
    new, report = neardup.spans(texts, level=level, count="occurrences", report=True)
    expected, rows = run_spans_cli(cli, tmp_path, texts, "--level", level, "--count",
                                   "occurrences")
    assert new == expected
    assert report.to_pylist() == rows


@pytest.mark.parametrize("level", list(LEVELS))
def test_spark_the_test_corpus(spark, corpus, level):
    texts = [row["text"] for row in corpus]
    expected = neardup.spans(texts, level=level, min_length=LEVELS[level] * 2)
    df = spark.createDataFrame([(row["id"], row["text"]) for row in corpus],
                               "id string, text string")
    result = neardup.spark.spans(df.repartition(4), order="id", level=level,
                                 min_length=LEVELS[level] * 2)
    got = {row["id"]: row["text"] for row in result.collect()}
    assert [got[row["id"]] for row in corpus] == expected
    assert expected != texts
