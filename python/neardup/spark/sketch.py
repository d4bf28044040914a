"""Step 1, the sketch: each text's identity, length, encoded sketch and LSH band keys,
computed in Rust on the executors (``mapInArrow``), and the rows checked (null ids, null
texts, repeated ids)."""

from __future__ import annotations

from .. import _invalid
from .arrow import _conform


def _sketched(base, method: str, params: dict, corpus, id_col: str, text_col: str):
    """The rows of ``base`` (``id``, ``text``, ``order_key``) sketched on the executors
    (:func:`_sketcher`, with the corpus pass's table ``corpus``), persisted, and checked
    (:func:`_check_rows`)."""
    # Sketched once and kept: the checks, the sort's sampling and the sort read it.
    sketched = base.mapInArrow(
        _sketcher(method, params, corpus),
        _schema(base.schema["id"].dataType, base.schema["order_key"].dataType),
    ).persist()
    _check_rows(sketched, id_col, text_col)
    return sketched


def _schema(id_type, order_type):
    from pyspark.sql.types import (
        ArrayType,
        BinaryType,
        BooleanType,
        LongType,
        StructField,
        StructType,
    )

    return StructType([
        StructField("id", id_type, True),
        StructField("order_key", order_type, True),
        StructField("null_text", BooleanType(), False),
        StructField("identity", BinaryType(), False),
        StructField("length", LongType(), False),
        StructField("empty", BooleanType(), False),
        StructField("exact_only", BooleanType(), False),
        StructField("sketch", BinaryType(), False),
        StructField("keys", ArrayType(LongType(), False), False),
    ])


def _sketcher(method: str, params: dict, corpus=None):
    def sketch(batches):
        import pyarrow as pa

        from neardup import _neardup as native

        for batch in batches:
            texts = batch.column("text")
            null_text = texts.is_null()
            if texts.null_count:
                texts = texts.fill_null("")
            out = native.spark_sketch([texts], method, params, 1,
                                      corpus.value if corpus is not None else None)
            columns = [batch.column("id"), batch.column("order_key"), null_text] + [
                out.column(name)
                for name in ("identity", "length", "empty", "exact_only", "sketch", "keys")
            ]
            arrow_schema = pa.schema([
                pa.field("id", batch.column("id").type),
                pa.field("order_key", batch.column("order_key").type),
                pa.field("null_text", pa.bool_()),
                pa.field("identity", pa.binary()),
                pa.field("length", pa.int64()),
                pa.field("empty", pa.bool_()),
                pa.field("exact_only", pa.bool_()),
                pa.field("sketch", pa.binary()),
                pa.field("keys", pa.list_(pa.field("element", pa.int64(), False))),
            ])
            yield _conform(columns, None, arrow_schema)

    return sketch


def _check_rows(sketched, id_col: str, text_col: str) -> None:
    """Refuses null ids, null texts (the sketcher marks them) and repeated ids, naming one."""
    from pyspark.sql import functions as F

    nulls = sketched.agg(
        F.sum(F.col("id").isNull().cast("long")).alias("ids"),
        F.min(F.when(F.col("null_text"), F.col("id"))).alias("text"),
    ).collect()[0]
    if nulls["ids"]:
        raise _invalid("id_col", f"{id_col!r} has null ids (every row needs an id)")
    if nulls["text"] is not None:
        raise _invalid(
            "text_col",
            f"{text_col!r} is null for id {nulls['text']!r} (fill or drop nulls first: a "
            "null is not an empty text)",
        )
    repeated = (sketched.groupBy("id").count().filter(F.col("count") > 1)
                .orderBy("id").limit(1).collect())
    if repeated:
        raise _invalid(
            "id_col",
            f"{id_col!r}: the id {repeated[0][0]!r} is on {repeated[0][1]} rows (ids must be "
            "unique)",
        )
