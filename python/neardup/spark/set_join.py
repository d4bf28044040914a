"""Step 4 for ``join`` with a set measure: the exact set join by prefix filtering, its
token frequencies counted on the executors, and its verified pairs under the candidate
budget."""

from __future__ import annotations

from .. import _invalid
from .arrow import _to_arrow
from .pairs import _bucket_pairs, _within_budget


#: The most join tokens a text may have on average for the set join on Spark.
_JOIN_MEAN_TOKENS = 1000

#: The most frequent join tokens whose counts are broadcast to order the prefixes.
_FREQUENT_TOKENS = 1_000_000


def _join_candidates(leader_rows, method: str, params: dict, bucket_cap: int):
    """Candidate pairs ``(a, b)``, ``a < b`` (ranks), of the exact set join (``join`` with a
    set measure), by prefix filtering as Vernica, Carey and Li distribute it (SIGMOD 2010):
    the join tokens' document frequencies are counted on the executors; the counts of the
    frequent tokens (those counted at least ``f`` times, ``f`` the least from 2 that keeps
    them under ``_FREQUENT_TOKENS``) are broadcast, and each document's prefix is taken under
    the global order "rarer first" (a token not broadcast counts 0; ties by token). A pair
    at the threshold shares a prefix token under any global order (the prefix is as long as
    the engine's: the pair's least overlap), and rarer first makes a prefix token's group
    small: a token not broadcast is in fewer than ``f`` documents. Rows ``(key, rank)`` are
    grouped by key; in a group a member meets the members ranked before it (the first
    ``bucket_cap``), in Rust; pairs are deduplicated, and verification keeps the pairs at the
    threshold: the join's own pairs, whenever no group holds more than ``bucket_cap``."""
    import numpy as np
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, LongType, StructField, StructType

    sketches = leader_rows.filter(~F.col("exact_only")).select("rank", "sketch")

    def tokens(batches):
        import pyarrow as pa

        from neardup import _neardup as native

        for batch in batches:
            found = native.spark_join_tokens(batch.column("sketch"), method, params)
            yield pa.RecordBatch.from_arrays([found], names=["tokens"])

    counts = (sketches.mapInArrow(tokens, StructType([
        StructField("tokens", ArrayType(LongType(), False), False)]))
        .select(F.explode("tokens").alias("token")).groupBy("token").count().persist())
    histogram = sorted((row["count"], row["n"]) for row in
                       counts.groupBy("count").agg(F.count("*").alias("n")).collect())
    documents = sketches.count()
    mean = sum(count * n for count, n in histogram) / max(documents, 1)
    if mean > _JOIN_MEAN_TOKENS:
        counts.unpersist()
        raise _invalid(
            "method",
            f"'join' on Spark is for short texts: these have {mean:.0f} join tokens on "
            f"average (at most {_JOIN_MEAN_TOKENS} here). A long text's prefix is most of "
            "its tokens, and a pair of long near-duplicates is found once per prefix token "
            "they share before the pairs are deduplicated (100 MB of 3.8 KB texts filled 37 "
            "GB of shuffle). Use minhash, or the join on one machine (`neardup dedup "
            "--method join`)",
        )
    floor = 2
    above = sum(n for count, n in histogram if count >= floor)
    for count, n in histogram:  # rarest first: raise the floor until few enough are left
        if above <= _FREQUENT_TOKENS:
            break
        if count >= floor:
            above -= n
            floor = count + 1
    table = _to_arrow(counts.filter(F.col("count") >= floor))
    counts.unpersist()
    records = np.empty(table.num_rows, dtype=[("token", "<i8"), ("count", "<u4")])
    records["token"] = table.column("token").to_numpy()
    records["count"] = np.minimum(table.column("count").to_numpy(), 2**32 - 1)
    frequent = records.tobytes()
    shared = leader_rows.sparkSession.sparkContext.broadcast(frequent)

    def rows(batches):
        from neardup import _neardup as native

        for batch in batches:
            yield native.spark_join_prefixes(batch.column("rank"), batch.column("sketch"),
                                             method, params, shared.value)

    row_schema = StructType([
        StructField("key", LongType(), False),
        StructField("rank", LongType(), False),
    ])
    buckets = (
        sketches.mapInArrow(rows, row_schema)
        .groupBy("key").agg(F.collect_list("rank").alias("members"))
        .filter(F.size("members") > 1)
    )
    return _bucket_pairs(buckets, bucket_cap).distinct()


def _join_budget(leader_rows, verified, candidate_budget: int):
    """The verified pairs of an exact join under the candidate budget: past ``documents x
    candidate_budget`` pairs (the engine's limit on a join's pairs), each document keeps its
    best-ranked partners up to the water-filling level. (The engine stops its join there, in
    its visiting order; under the limit both keep every pair.)"""
    from pyspark.sql import functions as F

    documents = leader_rows.filter(~F.col("exact_only")).count()
    return _within_budget(verified, max(documents, 1) * candidate_budget).persist()
