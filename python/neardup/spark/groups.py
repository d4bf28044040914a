"""Steps 2 and 3, ranks and exact copies: the sketched rows ordered by the keep policy and
numbered densely (a DataFrame has no input order: this order plays the file order's part),
then documents of the same identity grouped under their best-ranked one, the leader."""

from __future__ import annotations


def _ranked(sketched, keep: str):
    """The rows of ``sketched`` ordered by the keep policy, then ``order_key``, then the id,
    with their ``rank`` (:func:`_dense_rank`), persisted and computed; ``sketched`` is
    released."""
    from pyspark.sql import functions as F

    sort = {
        "first": [F.col("order_key").asc(), F.col("id").asc()],
        "longest": [F.col("length").desc(), F.col("order_key").asc(), F.col("id").asc()],
        "shortest": [F.col("length").asc(), F.col("order_key").asc(), F.col("id").asc()],
    }[keep]
    ordered = sketched.orderBy(*sort).persist()
    ranked = _dense_rank(ordered).persist()
    ranked.count()  # materialised: the sketches are now held once, numbered
    ordered.unpersist()
    sketched.unpersist()
    return ranked


def _dense_rank(ordered):
    """``ordered`` (a sorted, persisted DataFrame) with ``rank``: 0, 1, 2... in its order,
    computed without moving the rows to one partition (per-partition counts, then offsets)."""
    from pyspark.sql.types import LongType, StructField, StructType

    def count(batches):
        import pyarrow as pa
        from pyspark import TaskContext

        total = sum(batch.num_rows for batch in batches)
        partition = TaskContext.get().partitionId()
        yield pa.RecordBatch.from_arrays(
            [pa.array([partition], pa.int64()), pa.array([total], pa.int64())],
            names=["partition", "rows"],
        )

    counts = ordered.mapInArrow(
        count,
        StructType([StructField("partition", LongType()), StructField("rows", LongType())]),
    ).collect()
    offsets, running = {}, 0
    for row in sorted(counts, key=lambda r: r["partition"]):
        offsets[row["partition"]] = running
        running += row["rows"]

    def number(batches):
        import pyarrow as pa
        from pyspark import TaskContext

        at = offsets.get(TaskContext.get().partitionId(), 0)
        for batch in batches:
            ranks = pa.array(range(at, at + batch.num_rows), pa.int64())
            at += batch.num_rows
            yield batch.append_column("rank", ranks)

    schema = StructType(ordered.schema.fields + [StructField("rank", LongType(), False)])
    return ordered.mapInArrow(number, schema)


def _exact_copies(ranked):
    """The non-empty documents of ``ranked`` grouped by identity under their best-ranked one,
    the leader: ``leader_rows`` (the leaders' ranks, identities, sketches, keys and ids,
    persisted) and ``members`` (``rank``, ``leader``: every other document of a group)."""
    from pyspark.sql import functions as F

    nonempty = ranked.filter(~F.col("empty"))
    leaders = nonempty.groupBy("identity").agg(F.min("rank").alias("leader"))
    with_leader = nonempty.select("rank", "identity", "exact_only", "sketch", "keys", "order_key",
                                  "id").join(leaders, "identity")
    leader_rows = with_leader.filter(F.col("rank") == F.col("leader")).persist()
    members = with_leader.filter(F.col("rank") != F.col("leader")).select("rank", "leader")
    return leader_rows, members
