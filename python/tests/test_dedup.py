"""The Python package against the CLI contract (issue 12 groundwork)."""

import pyarrow as pa
import pytest

import neardup


def test_methods_are_the_registry():
    assert neardup.methods() == ["exact", "minhash", "simhash", "join", "ngram"]


def test_join_over_a_list():
    t = neardup.dedup(["今天天气很好，适合出门", "今天天气很好！适合出门", "明天下雨"], method="join", threshold=0.6)
    assert t.column_names == ["id", "cluster", "duplicate_of", "similarity", "keep"]
    assert t.column("duplicate_of").to_pylist() == [None, 1, None]
    assert t.column("keep").to_pylist() == [True, False, True]


def test_pyarrow_input_and_ids():
    t = neardup.dedup(pa.array(["a b c d e f", "a b c d e f g", "x y z"]), ids=["a", "b", "c"])
    assert t.column("duplicate_of").to_pylist() == [None, "a", None]


def test_errors_name_the_parameter():
    with pytest.raises(ValueError, match="threshold"):
        neardup.dedup(["a"], threshold="high")
    with pytest.raises(ValueError, match="bucket_cap"):
        neardup.dedup(["a"], bucket_cap=0)
    with pytest.raises(ValueError, match="ids"):
        neardup.dedup(["a", "b"], ids=[1])
