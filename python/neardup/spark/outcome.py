"""Step 7, the outcome: exact copies follow their leader (the leader's kept document, or the
leader itself), and the ranks are joined back to the ids."""

from __future__ import annotations


def _outcome(ranked, members, assigned):
    """The result: one row ``(id, cluster, duplicate_of, similarity)`` per document of
    ``ranked``, from the leaders' assignment ``assigned`` (ranks; ``None`` for a method whose
    only duplicates are exact copies) and the exact copies ``members`` (``rank``,
    ``leader``)."""
    from pyspark.sql import functions as F

    # Exact copies follow their leader: the leader's kept document, or the leader itself.
    if assigned is None:
        followed = members.select(
            F.col("rank").alias("document"),
            F.col("leader").alias("duplicate_of"),
            F.lit(1.0).alias("similarity"),
        )
        assignment = followed
    else:
        leader_fate = assigned.select(
            F.col("document").alias("leader"),
            F.col("duplicate_of").alias("leader_duplicate_of"),
            F.col("similarity").alias("leader_similarity"),
        )
        followed = members.join(leader_fate, "leader", "left").select(
            F.col("rank").alias("document"),
            F.coalesce("leader_duplicate_of", "leader").alias("duplicate_of"),
            F.coalesce("leader_similarity", F.lit(1.0)).alias("similarity"),
        )
        assignment = assigned.unionByName(followed)

    ids = ranked.select(F.col("rank").alias("document"), "id")
    kept_ids = ranked.select(F.col("rank").alias("duplicate_of"), F.col("id").alias("dup_id"))
    result = (
        ids.join(assignment, "document", "left")
        .join(kept_ids, "duplicate_of", "left")
        .select(
            F.col("id"),
            F.coalesce(F.col("dup_id"), F.col("id")).alias("cluster"),
            F.col("dup_id").alias("duplicate_of"),
            F.col("similarity").cast("double").alias("similarity"),
        )
    )
    return result
