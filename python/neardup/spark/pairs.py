"""Candidate pairs, whatever found them: their schema, buckets paired in Rust, and the
candidate budget (the engine's partner limit: past ``documents x candidate_budget`` pairs,
each document keeps its best partners up to the water-filling level)."""

from __future__ import annotations


def _pair_schema():
    """The Spark schema of candidate pairs: ``a``, ``b`` (ranks)."""
    from pyspark.sql.types import LongType, StructField, StructType

    return StructType([
        StructField("a", LongType(), False), StructField("b", LongType(), False)])


def _bucket_pairs(buckets, bucket_cap: int):
    """The pairs ``(a, b)`` of each bucket of ``buckets`` (its ``members``, ranks), paired in
    Rust exactly as the batch engine pairs a bucket: a member with the members before it,
    among the first ``bucket_cap``. A pair found in two buckets is there twice."""

    def pair(batches):
        from neardup import _neardup as native

        for batch in batches:
            yield native.bucket_pairs(batch.column("members"), bucket_cap)

    return buckets.select("members").mapInArrow(pair, _pair_schema())


def _partner_limit(histogram, budget: int) -> int:
    """The engine's partner limit (``partner_limit``): the highest ``L`` with
    ``sum(min(bound, L)) <= budget`` over a histogram of ``(bound, documents)``."""
    histogram = sorted(histogram)

    def total(limit: int) -> int:
        return sum(min(bound, limit) * count for bound, count in histogram)

    low, high = 0, max((b for b, _ in histogram), default=0)
    while high - low > 1:
        middle = low + (high - low) // 2
        if total(middle) <= budget:
            low = middle
        else:
            high = middle
    return low


def _best_partners(pairs, limit: int, order=("a",)):
    """``pairs`` with each document ``b`` keeping its first ``limit`` partners ``a`` by
    ``order`` (columns of ``pairs``; by default the best-ranked)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    window = Window.partitionBy("b").orderBy(*order)
    return (
        pairs.withColumn("n", F.row_number().over(window))
        .filter(F.col("n") <= limit)
        .drop("n")
    )


def _within_budget(pairs, budget: int, fingerprints=None):
    """``pairs`` (persisted ``a``, ``b``, deduplicated) when they are at most ``budget``;
    else each document ``b`` keeps its best-ranked partners (its nearest, by Hamming
    distance then rank, given the ``rank``, ``fingerprint`` rows of a Hamming join) up to
    the engine's water-filling level over the documents' partner counts."""
    from pyspark.sql import functions as F

    if pairs.count() <= budget:
        return pairs
    histogram = [(row["partners"], row["count"]) for row in
                 pairs.groupBy("b").agg(F.count("a").alias("partners"))
                 .groupBy("partners").count().collect()]
    limit = _partner_limit(histogram, budget)
    if fingerprints is None:
        return _best_partners(pairs, limit)
    fa = fingerprints.select(F.col("rank").alias("a"), F.col("fingerprint").alias("fa"))
    fb = fingerprints.select(F.col("rank").alias("b"), F.col("fingerprint").alias("fb"))
    measured = (pairs.join(fa, "a").join(fb, "b")
                .withColumn("distance", F.expr("bit_count(fa ^ fb)")))
    return _best_partners(measured, limit, ("distance", "a")).select("a", "b")
