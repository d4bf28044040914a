"""`neardup.Index`: insert, query, save and load."""

from __future__ import annotations

import os

import neardup
import pyarrow as pa
import pytest

NEWS = "国务院总理李克强今天在北京主持召开国务院常务会议，部署进一步扩大内需的措施，会议决定加大对基础设施建设的投入。"
REPOST = "國務院總理李克強今天在北京主持召開國務院常務會議,部署進一步擴大內需的措施!會議決定加大對基礎設施建設的投入"
OTHER = "昨天晚上的足球比赛中，主队以三比一战胜客队，球迷们在体育场外庆祝到深夜。"


@pytest.mark.parametrize("make", [
    lambda: neardup.LshIndex(),
    lambda: neardup.HammingIndex(),
    lambda: neardup.Index("exact"),
    lambda: neardup.Index("join", threshold=0.5),
])
def test_insert_query_save_load(make, tmp_path):
    index = make()
    index.insert([NEWS, OTHER], ids=["news", "other"])
    assert len(index) == 2
    found = index.query([REPOST, "一句无关的话，讲的是别的事情，和上面的都不一样。", NEWS])
    rows = found.to_pylist()
    if index.method != "exact":
        assert {"query": 0, "id": "news"}.items() <= rows[0].items()
    assert [r["id"] for r in rows if r["query"] == 1] == []
    exact = [r for r in rows if r["query"] == 2]
    assert exact[0]["id"] == "news" and exact[0]["similarity"] == 1.0
    path = tmp_path / "index.neardup"
    index.save(path)
    loaded = neardup.Index.load(path)
    assert len(loaded) == 2 and loaded.method == index.method
    assert loaded.query([REPOST, NEWS]).equals(index.query([REPOST, NEWS]))
    loaded.insert([REPOST], ids=["repost"])
    assert "repost" in loaded.query([REPOST]).column("id").to_pylist()


def test_simhash_reports_the_distance():
    index = neardup.HammingIndex()
    index.insert([NEWS])
    row = index.query([REPOST]).to_pylist()[0]
    assert row["id"] == 0 and row["distance"] is not None and row["distance"] <= 10


def test_limit_and_ids_by_position():
    index = neardup.LshIndex()
    index.insert(pa.array([NEWS] * 5))
    rows = index.query([NEWS], limit=3).to_pylist()
    assert [r["id"] for r in rows] == [0, 1, 2]


def test_ids_must_keep_one_type():
    index = neardup.LshIndex()
    index.insert([NEWS], ids=["a"])
    with pytest.raises(neardup.NeardupError, match="ids"):
        index.insert([OTHER], ids=[1])


def test_corpus_parameters_are_refused():
    with pytest.raises(neardup.NeardupError, match="max_df"):
        neardup.LshIndex(max_df="1%")
    neardup.LshIndex(max_df="off")


def test_methods_that_learn_from_a_corpus_are_refused_unless_given_what_they_learn(tmp_path):
    for method in ("imatch", "topn"):
        with pytest.raises(neardup.NeardupError) as error:
            neardup.Index(method)
        assert error.value.parameter == "method"
    with pytest.raises(neardup.NeardupError) as error:
        neardup.Index("simhash", weights="tfidf")
    assert error.value.parameter == "weights"
    lexicon = tmp_path / "lexicon.txt"
    lexicon.write_text("prices\nfood\npork\nenergy\nrural\nexperts\n", encoding="utf-8")
    index = neardup.Index("imatch", lexicon_file=str(lexicon))
    text = "Consumer prices rose as food and pork prices climbed, energy eased, experts said rural areas saw most."
    index.insert([text], ids=[7])
    found = index.query([text.replace(",", ";")])
    assert found.column("id").to_pylist() == [7]


def test_a_damaged_file_is_refused_and_a_failed_save_leaves_no_file(tmp_path):
    index = neardup.LshIndex()
    index.insert([NEWS, OTHER])
    path = tmp_path / "index.neardup"
    index.save(path)
    data = bytearray(path.read_bytes())
    data[-3] ^= 0xFF
    damaged = tmp_path / "damaged.neardup"
    damaged.write_bytes(bytes(data))
    with pytest.raises(OSError, match="checksum"):
        neardup.Index.load(damaged)
    cut = tmp_path / "cut.neardup"
    cut.write_bytes(path.read_bytes()[:-10])
    with pytest.raises(OSError, match="cut short"):
        neardup.Index.load(cut)
    other = tmp_path / "other.txt"
    other.write_text("hello")
    with pytest.raises(OSError, match="not a neardup index"):
        neardup.Index.load(other)
    with pytest.raises(OSError):
        index.save(tmp_path / "no-such-dir" / "x.neardup")
    assert sorted(os.listdir(tmp_path)) == ["cut.neardup", "damaged.neardup",
                                            "index.neardup", "other.txt"]
