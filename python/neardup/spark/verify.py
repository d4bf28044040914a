"""Step 5, verify: the true similarity of each candidate pair, computed in Rust on the
executors (``mapInArrow``), and the pairs at the threshold kept."""

from __future__ import annotations

from .set_join import _join_budget


def _verified(leader_rows, candidates, method: str, params: dict, info: dict,
              candidate_budget: int):
    """The verified pairs ``(a, b, similarity)`` of the ``candidates`` (persisted), under the
    candidate budget for an exact set join; ``None`` without candidates."""
    if candidates is None:
        return None
    verified = _verify(leader_rows, candidates, method, params).persist()
    if info["form"] == "set_join":
        verified = _join_budget(leader_rows, verified, candidate_budget)
    return verified


def _verify(leader_rows, candidates, method: str, params: dict):
    """Verified pairs ``(a, b, similarity)`` of the candidates."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import DoubleType, LongType, StructField, StructType

    sketches = leader_rows.select("rank", "sketch")
    joined = (
        candidates.join(sketches.select(F.col("rank").alias("a"), F.col("sketch").alias("sa")), "a")
        .join(sketches.select(F.col("rank").alias("b"), F.col("sketch").alias("sb")), "b")
        .select("a", "b", "sa", "sb")
    )

    def verify(batches):
        import pyarrow as pa

        from neardup import _neardup as native

        for batch in batches:
            out = native.verify_pairs(batch.column("sa"), batch.column("sb"), method, params, 1)
            similarity = out.column("similarity")
            keep = similarity.is_valid()
            yield pa.RecordBatch.from_arrays(
                [batch.column("a").filter(keep), batch.column("b").filter(keep),
                 similarity.filter(keep)],
                names=["a", "b", "similarity"],
            )

    schema = StructType([
        StructField("a", LongType(), False),
        StructField("b", LongType(), False),
        StructField("similarity", DoubleType(), False),
    ])
    return joined.mapInArrow(verify, schema)
