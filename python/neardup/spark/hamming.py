"""Step 4 for SimHash: the candidates of the engine's exact Hamming join, in distributed
passes (stored and probe rows of block values, grouped by block and value, paired in
Rust), under the candidate budget."""

from __future__ import annotations

from .. import _neardup
from .pairs import _pair_schema, _within_budget


def _hamming_candidates(leader_rows, method: str, params: dict, bucket_cap: int,
                        candidate_budget: int):
    """Candidate pairs ``(a, b)``, ``a < b`` (ranks), of a Hamming join (SimHash), as the
    batch engine's join finds them: every pair of fingerprints within the smaller of the two
    documents' radii. The join runs in passes (one per distinct radius, largest first); a
    pass cuts the fingerprints into blocks and gives each document a stored row under its own
    block value and probe rows under the values within the pass's radius of it; rows are
    grouped by block and value on the executors, and each group is paired in Rust
    (``HammingPass::group_pairs``: a pair is reported once, by its first block). Then the
    candidate budget applies as in the engine: past ``documents x candidate_budget`` pairs,
    each document keeps its nearest partners (by distance, then rank) up to the water-filling
    level."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType, LongType, StructField, StructType

    def keys(batches):
        import pyarrow as pa

        from neardup import _neardup as native

        for batch in batches:
            out = native.spark_hamming_keys(batch.column("sketch"), method, params)
            yield pa.RecordBatch.from_arrays(
                [batch.column("rank"), out.column("fingerprint"), out.column("radius")],
                names=["rank", "fingerprint", "radius"],
            )

    key_schema = StructType([
        StructField("rank", LongType(), False),
        StructField("fingerprint", LongType(), True),
        StructField("radius", LongType(), True),
    ])
    keyed = (leader_rows.select("rank", "sketch").mapInArrow(keys, key_schema)
             .filter(F.col("radius").isNotNull()).persist())
    radii = [(int(row["radius"]), int(row["count"]))
             for row in keyed.groupBy("radius").count().collect()]
    documents = (keyed.agg(F.max("rank")).collect()[0][0] or -1) + 1
    row_schema = StructType([
        StructField("block", LongType(), False),
        StructField("value", LongType(), False),
        StructField("rank", LongType(), False),
        StructField("fingerprint", LongType(), False),
        StructField("radius", LongType(), False),
        StructField("stored", BooleanType(), False),
    ])
    pair_schema = _pair_schema()
    found = None
    for plan in _neardup.hamming_plan(radii):
        plan = tuple(plan)

        def rows(batches, plan=plan):
            from neardup import _neardup as native

            for batch in batches:
                yield native.hamming_rows(batch.column("rank"), batch.column("fingerprint"),
                                          batch.column("radius"), plan)

        def pair(batches, plan=plan):
            from neardup import _neardup as native

            for batch in batches:
                yield native.hamming_group_pairs(batch.column("block"),
                                                 batch.column("members"), plan, bucket_cap)

        groups = (
            keyed.filter(F.col("radius") >= plan[0]).mapInArrow(rows, row_schema)
            .groupBy("block", "value")
            .agg(F.collect_list(F.struct("rank", "fingerprint", "radius", "stored"))
                 .alias("members"))
            .filter(F.size("members") > 1)
        )
        pairs = groups.select("block", "members").mapInArrow(pair, pair_schema)
        found = pairs if found is None else found.unionByName(pairs)
    spark = leader_rows.sparkSession
    if found is None:
        keyed.unpersist()
        return spark.createDataFrame([], pair_schema)
    found = found.persist()
    found.count()
    fingerprints = keyed.select("rank", "fingerprint")
    within = _within_budget(found, documents * candidate_budget, fingerprints).persist()
    within.count()
    if within is not found:
        # Under the budget the pairs are returned as they were found; past it, the pairs
        # kept are held on their own and the ones found released.
        found.unpersist()
    keyed.unpersist()
    return within
