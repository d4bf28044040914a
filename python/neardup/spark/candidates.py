"""Step 4, candidates: the pairs of leaders to verify, found by the method's form as the
batch engine finds them: leaders sharing a band key (``keys``), a Hamming join
(``hamming``, in :mod:`.hamming`), the set join's prefixes (``set_join``, in
:mod:`.set_join`), and with ``templates="duplicate"`` the templates' anchors."""

from __future__ import annotations

from .hamming import _hamming_candidates
from .pairs import _best_partners, _bucket_pairs, _partner_limit
from .set_join import _join_candidates


def _candidate_pairs(leader_rows, method: str, params: dict, info: dict, bucket_cap: int,
                     candidate_budget: int):
    """Candidate pairs ``(a, b)``, ``a < b`` (ranks), of the leaders, found by the method's
    form (``info``, its ``method_info``): shared band keys, a Hamming join (SimHash) or a set
    join; ``None`` for a method whose only duplicates are exact copies (``identity``)."""
    form = info["form"]
    if form == "keys":
        candidates = _candidates(leader_rows, bucket_cap, candidate_budget)
    elif form == "hamming":
        candidates = _hamming_candidates(leader_rows, method, params, bucket_cap,
                                         candidate_budget)
    elif form == "set_join":
        candidates = _join_candidates(leader_rows, method, params, bucket_cap)
    else:
        return None
    if info["template_keys"]:
        # Templates duplicate: every templated leader meets its template's first ones, as
        # the batch engine's `anchor_pairs` pairs them after any join.
        candidates = candidates.unionByName(
            _anchor_candidates(leader_rows, method, params, info["template_anchors"])
        ).distinct()
    return candidates


def _candidates(leader_rows, bucket_cap: int, candidate_budget: int):
    """Candidate pairs ``(a, b)``, ``a < b`` (ranks), as the batch engine finds them."""
    from pyspark.sql import functions as F

    entries = leader_rows.filter(~F.col("exact_only")).select(
        "rank", F.explode("keys").alias("key"))
    buckets = (
        entries.groupBy("key")
        .agg(F.sort_array(F.collect_list("rank")).alias("members"))
        .filter(F.size("members") > 1)
        .persist()
    )
    pairs = _bucket_pairs(buckets, bucket_cap).distinct()

    size = F.size("members").cast("long")
    anchors = F.least(size, F.lit(bucket_cap).cast("long"))
    raw = buckets.agg(
        F.sum(anchors * (anchors - 1) / 2 + (size - anchors) * anchors).cast("long")
    ).collect()[0][0] or 0
    documents = (entries.agg(F.max("rank")).collect()[0][0] or -1) + 1
    budget = documents * candidate_budget
    if raw <= budget:
        return pairs
    # The engine's partner limit: the highest L with sum(min(bound, L)) <= budget, where a
    # document's bound is the number of bucket members before it (anchors only in a capped
    # bucket); each document then keeps its L best-ranked distinct partners.
    bounds = (
        buckets.select(F.posexplode("members").alias("position", "rank"))
        .groupBy("rank")
        .agg(F.sum(F.least(F.col("position"), F.lit(bucket_cap))).alias("bound"))
        .groupBy("bound")
        .count()
        .collect()
    )
    histogram = [(row["bound"], row["count"]) for row in bounds]
    return _best_partners(pairs, _partner_limit(histogram, budget))


def _anchor_candidates(leader_rows, method: str, params: dict, anchors: int):
    """Candidate pairs ``(a, b)``, ``a < b`` (ranks), of the template keys (templates
    duplicate), as the batch engine's ``anchor_pairs``: every templated leader with the first
    ``anchors`` leaders (by rank) sharing one of its keys, so that the fillings of a template
    meet its first ones whatever their distance, in work linear in the leaders."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, LongType, StructField, StructType

    def keys(batches):
        import pyarrow as pa

        from neardup import _neardup as native

        for batch in batches:
            found = native.spark_template_keys(batch.column("sketch"), method, params)
            yield pa.RecordBatch.from_arrays([batch.column("rank"), found],
                                             names=["rank", "keys"])

    schema = StructType([
        StructField("rank", LongType(), False),
        StructField("keys", ArrayType(LongType(), False), False),
    ])
    keyed = (leader_rows.select("rank", "sketch").mapInArrow(keys, schema)
             .select("rank", F.explode("keys").alias("key")).distinct())
    numbered = keyed.withColumn(
        "n", F.row_number().over(Window.partitionBy("key").orderBy("rank")))
    first = numbered.filter(F.col("n") <= anchors).select("key", F.col("rank").alias("anchor"))
    return (numbered.join(first, "key").filter(F.col("anchor") < F.col("rank"))
            .select(F.col("anchor").alias("a"), F.col("rank").alias("b")).distinct())
