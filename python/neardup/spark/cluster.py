"""Step 6, cluster: the leaders' clusters over the verified pairs, by the engine's greedy
representative rule (on the driver for a small job, else one connected component at a
time on the executors) or by connected components (large-star/small-star rounds)."""

from __future__ import annotations

from .. import _neardup
from .arrow import _column, _to_arrow


def _clustered(spark, leader_rows, verified, method: str, params: dict, cluster: str,
               max_driver_pairs: int):
    """The leaders' assignment ``(document, duplicate_of, similarity)`` (ranks) by the
    ``cluster`` rule over the ``verified`` pairs; ``None`` when nothing was verified (a
    method without candidates)."""
    if verified is None:
        return None
    if cluster == "representative":
        return _representative(spark, verified, max_driver_pairs)
    return _connected(leader_rows, verified, method, params)


def _representative(spark, verified, max_driver_pairs: int):
    """The engine's greedy rule over the verified pairs. Its choices in one connected
    component of the pairs never depend on another's, so up to ``max_driver_pairs`` pairs it
    runs on the driver (one collect: the quickest for a small job), and past that on the
    executors, one component at a time: the components are found by
    :func:`connected_components`, each component's pairs are grouped, and the rule runs in
    Rust over each group (``applyInArrow``). Nothing is bounded by the driver's memory; a
    component's pairs must fit in one executor's."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    pairs = verified.select("a", "b", "similarity")
    if max_driver_pairs > 0 and pairs.limit(max_driver_pairs + 1).count() <= max_driver_pairs:
        table = _to_arrow(pairs)
        out = _neardup.representative(
            _column(table, "a", pa.int64()),
            _column(table, "b", pa.int64()),
            _column(table, "similarity", pa.float64()),
        )
        return _from_arrow(spark, pa.Table.from_batches([out]))
    components = connected_components(pairs.select("a", "b"))
    grouped = pairs.join(components.select(F.col("node").alias("a"), "component"), "a")

    def cluster(table):
        import pyarrow as pa

        from neardup import _neardup as native

        column = lambda name, type_: (table.column(name).combine_chunks()  # noqa: E731
                                      .cast(type_))
        out = native.representative(column("a", pa.int64()), column("b", pa.int64()),
                                    column("similarity", pa.float64()))
        return pa.Table.from_batches([out])

    return grouped.groupBy("component").applyInArrow(cluster, _ASSIGNMENT_SCHEMA)


def _assignment_schema():
    from pyspark.sql.types import DoubleType, LongType, StructField, StructType

    return StructType([
        StructField("document", LongType(), False),
        StructField("duplicate_of", LongType(), False),
        StructField("similarity", DoubleType(), False),
    ])


#: The rows of an assignment: a removed document, the kept one it follows, their similarity.
_ASSIGNMENT_SCHEMA = "document long, duplicate_of long, similarity double"


def _from_arrow(spark, table):
    schema = _assignment_schema()
    if table.num_rows == 0:
        return spark.createDataFrame([], schema)
    return spark.createDataFrame(table.to_pandas(), schema)


def connected_components(edges, max_rounds: int = 100):
    """The connected components of the graph of ``edges`` (a DataFrame of ``a``, ``b``
    longs), by the large-star/small-star rounds of Kiveris, Lattanzi, Mirrokni, Rastogi and
    Vassilvitskii, "Connected components in MapReduce and beyond" (SoCC 2014): a DataFrame
    of ``(node, component)`` for every node of an edge, the component being its smallest
    node. Each round checkpoints its edges locally, so the plan does not grow."""
    from pyspark.sql import functions as F

    edges = edges.select(
        F.least("a", "b").alias("u"), F.greatest("a", "b").alias("v")
    ).filter(F.col("u") != F.col("v")).distinct().localCheckpoint()
    for _ in range(max_rounds):
        # Large star: every node links its larger neighbours to the smallest node of its
        # neighbourhood (itself included).
        both = edges.select(F.col("u").alias("x"), F.col("v").alias("y")).unionByName(
            edges.select(F.col("v").alias("x"), F.col("u").alias("y")))
        smallest = both.groupBy("x").agg(F.least(F.min("y"), F.col("x")).alias("m"))
        large = (
            both.filter(F.col("y") > F.col("x"))
            .join(smallest, "x")
            .select(F.least("y", "m").alias("u"), F.greatest("y", "m").alias("v"))
            .filter(F.col("u") != F.col("v"))
            .distinct()
        )
        # Small star: every node links itself and its smaller neighbours to the smallest of
        # them.
        smallest = large.groupBy(F.col("v").alias("x")).agg(F.min("u").alias("m"))
        small = (
            large.join(smallest, large.v == smallest.x)
            .select(F.col("u").alias("y"), "m")
            .unionByName(smallest.select(F.col("x").alias("y"), "m"))
            .select(F.least("y", "m").alias("u"), F.greatest("y", "m").alias("v"))
            .filter(F.col("u") != F.col("v"))
            .distinct()
            .localCheckpoint()
        )
        changed = small.exceptAll(edges).limit(1).count() + edges.exceptAll(small).limit(1).count()
        edges = small
        if changed == 0:
            break
    else:
        raise RuntimeError(f"connected components did not converge in {max_rounds} rounds")
    # Converged: stars around each component's smallest node.
    return edges.select(F.col("v").alias("node"), F.col("u").alias("component")).unionByName(
        edges.select(F.col("u").alias("node"), F.col("u").alias("component"))).distinct()


def _connected(leader_rows, verified, method: str, params: dict):
    """Connected components of the verified pairs: every member follows its component's best
    ranked document, with its plain similarity to it (as the engine's ``connected``)."""
    from pyspark.sql import functions as F

    components = connected_components(verified.select("a", "b"))
    moved = components.filter(F.col("node") != F.col("component"))
    sketches = leader_rows.select("rank", "sketch")
    joined = (
        moved.join(sketches.select(F.col("rank").alias("node"), F.col("sketch").alias("sa")), "node")
        .join(sketches.select(F.col("rank").alias("component"), F.col("sketch").alias("sb")),
              "component")
    )

    def similarity(batches):
        import pyarrow as pa

        from neardup import _neardup as native

        for batch in batches:
            values = native.similarities(batch.column("sa"), batch.column("sb"), method, params, 1)
            yield pa.RecordBatch.from_arrays(
                [batch.column("node"), batch.column("component"), values],
                names=["document", "duplicate_of", "similarity"],
            )

    return joined.select("node", "component", "sa", "sb").mapInArrow(similarity,
                                                                     _assignment_schema())
