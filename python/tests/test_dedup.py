"""`neardup.dedup`: the command line's clusters contract from Python, over every input kind."""

from __future__ import annotations

import re
import subprocess
import threading
import time

import neardup
import pyarrow as pa
import pytest
from conftest import as_result, run_cli

PAIR = ["今天北京天气晴朗，适合出门散步，公园里人很多。", "今天北京天气晴朗,适合出门散步!公园里人很多。",
        "完全不同的一句话，讲的是股市的行情。"]


def test_methods_are_the_registry(cli):
    # The same methods, in the same order, as the command line offers (`dedup --help`).
    text = subprocess.run([str(cli), "dedup", "--help"], check=True, capture_output=True, text=True).stdout
    listed = re.search(r"--method <METHOD>.*?\[possible values: ([^\]]*)\]", text, re.S)
    assert listed, text
    assert list(neardup.methods()) == [name.strip() for name in listed.group(1).split(",")]
    assert "threshold" in neardup.methods()["minhash"]["params"]


@pytest.mark.parametrize("method", list(neardup.methods()))
def test_every_method_matches_the_cli(cli, tmp_path, method):
    body = ("国家统计局今天发布数据，十月份全国居民消费价格同比上涨百分之二点一，涨幅比上月扩大零点三个百分点。"
            "其中食品价格上涨百分之四点五，非食品价格上涨百分之一点五，服务价格上涨百分之一点八。"
            "分析人士指出，猪肉和鲜菜价格的季节性上涨是推高物价的主要因素，能源价格则有所回落。")
    texts = [body, body.replace("。", "！"), "气象台发布寒潮蓝色预警，预计未来三天北方大部地区气温将下降八到十度。",
             body + "责任编辑：李华。", "完全不同的一句话，讲的是股市的行情，沪指今天收涨百分之一。"]
    table = neardup.dedup(texts, method=method)
    assert table.column("duplicate_of").to_pylist()[1] == 1
    assert table.column_names == ["id", "cluster", "duplicate_of", "similarity", "keep"]
    rows = [{"id": i + 1, "text": t} for i, t in enumerate(texts)]
    assert as_result(table) == run_cli(cli, tmp_path, rows, "--method", method)


def test_imatch_reads_a_lexicon_file(tmp_path):
    lexicon = tmp_path / "lexicon.txt"
    lexicon.write_text("prices\nfood\npork\nenergy\nrural\nexperts\n", encoding="utf-8")
    texts = ["Consumer prices rose as food and pork prices climbed, energy eased, experts said rural areas saw most.",
             "Experts on rural budgets say households spend more on food, pork and energy; prices worry them."]
    classic = neardup.dedup(texts, method="imatch", lexicon_file=str(lexicon), verify="none", extra_lexicons=0)
    assert classic.column("duplicate_of").to_pylist() == [None, 1]
    verified = neardup.dedup(texts, method="imatch", lexicon_file=str(lexicon), extra_lexicons=0)
    assert verified.column("duplicate_of").to_pylist() == [None, None]
    with pytest.raises(OSError) as error:
        neardup.dedup(texts, method="imatch", lexicon_file=str(tmp_path / "missing.txt"))
    assert "missing.txt" in str(error.value)


@pytest.mark.parametrize("make", [
    list,
    pa.array,
    lambda t: pa.array(t, type=pa.large_string()),
    lambda t: pa.chunked_array([t[:1], t[1:]]),
    lambda t: pa.table({"text": t}).column("text"),
    lambda t: pytest.importorskip("pandas").Series(t),
    lambda t: pytest.importorskip("polars").Series(t),
    tuple,
])
def test_every_input_kind_gives_the_same_table(make):
    table = neardup.dedup(make(PAIR), threshold=0.5)
    assert table.column_names == ["id", "cluster", "duplicate_of", "similarity", "keep"]
    assert table.column("id").to_pylist() == [1, 2, 3]
    assert table.column("cluster").to_pylist() == [1, 1, 3]
    assert table.column("duplicate_of").to_pylist() == [None, 1, None]
    assert table.column("keep").to_pylist() == [True, False, True]
    similarity = table.column("similarity").to_pylist()
    assert similarity[0] is None and 0.5 <= similarity[1] <= 1 and similarity[2] is None


def test_ids_keep_their_type():
    for ids in (["a", "b", "c"], pa.array([10, 20, 30], pa.int32()), [1.5, 2.5, 3.5]):
        table = neardup.dedup(PAIR, ids=ids, threshold=0.5)
        expected = pa.array(ids) if not isinstance(ids, pa.Array) else ids
        assert table.column("id").type == expected.type
        assert table.column("duplicate_of").to_pylist()[1] == expected[0].as_py()


@pytest.mark.parametrize("method,options", [
    ("minhash", []),
    ("minhash", ["--cluster", "connected"]),
    ("minhash", ["--keep", "longest", "--threshold", "0.6"]),
    ("minhash", ["--bucket-cap", "2", "--candidate-budget", "1", "--ngram", "3"]),
    ("simhash", []),
    ("exact", []),
    ("join", ["--threshold", "0.7"]),
    ("ngram", ["--threshold", "0.8"]),
    # Rules by length pass as text, as on the command line.
    ("minhash", ["--ngram", "<30:2,3", "--threshold", "<25:0.45,0.4"]),
    ("join", ["--threshold", "<8:0.6,0.7"]),
])
def test_same_clusters_as_the_command_line(cli, tmp_path, corpus, method, options):
    expected = run_cli(cli, tmp_path, corpus, "--method", method, *options)
    kwargs = {}
    it = iter(options)
    for flag in it:
        value = next(it)
        name = flag[2:].replace("-", "_")
        kwargs[name] = int(value) if value.isdigit() else value
    table = neardup.dedup([r["text"] for r in corpus], ids=[r["id"] for r in corpus],
                          method=method, **kwargs)
    got = as_result(table)
    assert got == expected
    assert sum(1 for v in got.values() if v[1] is not None) > 10  # the corpus has duplicates


def test_against_a_reference_corpus(cli, tmp_path):
    reference = [PAIR[0]]
    table = neardup.dedup(PAIR[1:], ids=["x", "y"], against=reference, against_ids=["ref"],
                          threshold=0.5)
    assert table.column("id").to_pylist() == ["x", "y"]
    assert table.column("duplicate_of").to_pylist() == ["ref", None]
    assert table.column("keep").to_pylist() == [False, True]
    # Without `within`, new texts are not compared with each other.
    table = neardup.dedup([PAIR[0], PAIR[0]], against=["无关的参考文本，与输入毫无关系。"])
    assert table.column("keep").to_pylist() == [True, True]
    table = neardup.dedup([PAIR[0], PAIR[0]], against=["无关的参考文本，与输入毫无关系。"],
                          within=True)
    assert table.column("keep").to_pylist() == [True, False]


def test_statistics_in_the_schema():
    texts = [PAIR[0], PAIR[0] + "公园里的花开了。", PAIR[0], PAIR[2]]
    stats = neardup.stats(neardup.dedup(texts, threshold=0.5))
    assert stats["exact_copies"] == 1
    assert stats["verified_pairs"] == 1
    assert set(stats["seconds"]) >= {"sketch", "candidates", "verify", "cluster"}


def test_file_parameters_are_read_like_the_command_line(tmp_path):
    lines = tmp_path / "boilerplate.txt"
    lines.write_text("本文来源：新华网\n", encoding="utf-8")
    texts = ["甲公司发布年度报告，营收增长百分之十。\n本文来源：新华网",
             "乙地区今天举行马拉松比赛，数万人参加。\n本文来源：新华网"]
    table = neardup.dedup(texts, boilerplate_file=str(lines), threshold=0.5)
    assert table.column("keep").to_pylist() == [True, True]
    with pytest.raises(OSError, match="missing.txt"):
        neardup.dedup(texts, boilerplate_file=str(tmp_path / "missing.txt"))


@pytest.mark.parametrize("call,parameter,message", [
    (lambda: neardup.dedup(PAIR, threshold="high"), "threshold", "high"),
    (lambda: neardup.dedup(PAIR, threshold=2), "threshold", "2"),
    (lambda: neardup.dedup(PAIR, bucket_cap=0), "bucket_cap", "at least 1"),
    (lambda: neardup.dedup(PAIR, method="fuzzy"), "method", "fuzzy"),
    (lambda: neardup.dedup(PAIR, colour="red"), "colour", "not a parameter of method minhash"),
    (lambda: neardup.dedup(PAIR, cluster="all"), "cluster", "all"),
    (lambda: neardup.dedup(PAIR, keep="best"), "keep", "best"),
    (lambda: neardup.dedup(["a", None]), "texts", "texts[1] is null"),
    (lambda: neardup.dedup(pa.array([1, 2])), "texts", "int64"),
    (lambda: neardup.dedup("one string"), "texts", "single string"),
    (lambda: neardup.dedup(PAIR, ids=[1]), "ids", "1 ids for 3 texts"),
    (lambda: neardup.dedup(PAIR, ids=[1, None, 3]), "ids", "ids[1] is null"),
    (lambda: neardup.dedup(PAIR, corpus_memory="lots"), "corpus_memory", "64M"),
    (lambda: neardup.dedup(["ok", "bad \udcff"]), "texts", "texts[1]: surrogates not allowed"),
    (lambda: neardup.dedup(PAIR, threads=-1), "threads", "-1"),
    (lambda: neardup.dedup(PAIR, bucket_cap=-5), "bucket_cap", "at least 1"),
    (lambda: neardup.LshIndex().query(PAIR, limit=-1), "limit", "-1"),
])
def test_errors_are_the_command_line_messages(call, parameter, message):
    with pytest.raises(neardup.NeardupError, match=re.escape(message)) as raised:
        call()
    assert str(raised.value).startswith(f"invalid `{parameter}`")
    assert raised.value.parameter == parameter
    assert isinstance(raised.value, ValueError)


def test_errors_pickle_under_the_package_name():
    """Regression: `NeardupError` was `_neardup.NeardupError`, a module pickle cannot import,
    so an error could not leave a multiprocessing worker. It is `neardup.NeardupError` (as
    tracebacks and docs/python.md show it) and pickles."""
    import pickle

    with pytest.raises(neardup.NeardupError) as raised:
        neardup.dedup(PAIR, threshold=2)
    assert type(raised.value).__module__ == "neardup"
    again = pickle.loads(pickle.dumps(raised.value))
    assert type(again) is neardup.NeardupError and str(again) == str(raised.value)


def test_no_copy_of_arrow_texts():
    """Arrow texts are read in place: no Arrow memory is allocated while deduplicating a
    chunked column (a combined copy would be)."""
    texts = pa.chunked_array([[f"第{i}条新闻：今天的天气很好，适合出门散步。" for i in range(j, j + 5000)]
                              for j in range(0, 20000, 5000)])
    before = pa.total_allocated_bytes()
    peak = [before]
    done = threading.Event()

    def watch():
        while not done.is_set():
            peak[0] = max(peak[0], pa.total_allocated_bytes())
            time.sleep(0.0005)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        neardup.dedup(texts, method="exact")
    finally:
        done.set()
        watcher.join()
    text_bytes = sum(c.nbytes for c in texts.chunks)
    # The result table (ids, clusters: a few int64 columns) is allocated; the texts are not.
    assert peak[0] - before < text_bytes / 2


def test_the_gil_is_released():
    """Another Python thread runs while the engine works."""
    texts = [f"第{i}条：国务院召开常务会议，部署扩大内需的措施，加大基础设施投入{i % 97}。" for i in range(60000)]
    done = threading.Event()
    ticks = [0]

    def work():
        neardup.dedup(texts, threads=1)
        done.set()

    worker = threading.Thread(target=work)
    worker.start()
    time.sleep(0.05)
    while not done.is_set():
        ticks[0] += 1
        time.sleep(0.001)
    worker.join()
    assert ticks[0] > 20


def test_deterministic_for_any_thread_count(corpus):
    texts = [r["text"] for r in corpus]
    one = neardup.dedup(texts, threads=1)
    two = neardup.dedup(texts, threads=2)
    assert one.select(["id", "cluster", "duplicate_of", "similarity"]).equals(
        two.select(["id", "cluster", "duplicate_of", "similarity"]))


def test_empty_input():
    table = neardup.dedup([])
    assert table.num_rows == 0
    assert table.column_names == ["id", "cluster", "duplicate_of", "similarity", "keep"]
    table = neardup.dedup(["", "", "x"])
    assert table.column("keep").to_pylist() == [True, True, True]


def test_sketches():
    signatures = neardup.MinHash(permutations=64).signatures(PAIR)
    assert signatures.type == pa.list_(pa.field("item", pa.uint32(), False), 64)
    assert len(signatures) == 3
    a, b, c = (s.as_py() for s in signatures)
    same = lambda x, y: sum(p == q for p, q in zip(x, y)) / 64
    assert same(a, b) > 0.4 and same(a, c) < 0.2
    fingerprints = neardup.SimHash().fingerprints(pa.array(PAIR))
    assert fingerprints.type == pa.uint64()
    f = fingerprints.to_pylist()
    assert neardup.SimHash.distance(f[0], f[1]) < neardup.SimHash.distance(f[0], f[2])
    with pytest.raises(neardup.NeardupError, match="permutations"):
        neardup.MinHash(permutations="many")
