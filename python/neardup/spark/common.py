"""Step 3b, common features (``common_shingles="check"``, ``max_df``): the features that
more than the limit of leaders share, counted as the batch engine counts them (crowded
leaders, and a sample of the others), marked in the crowded leaders' sketches on the
executors."""

from __future__ import annotations

from .. import _neardup
from .arrow import _conform
from .groups import _dense_rank


def _common_marked(leader_rows, method: str, params: dict, info: dict):
    """``leader_rows`` with the common features marked (:func:`_mark_common`) when the
    method's candidates share keys or a Hamming block (``info``, the method's
    ``method_info``); unchanged for the other forms."""
    form = info["form"]
    if form not in ("keys", "hamming"):
        return leader_rows
    # A join without keys has no crowds to tell, and the keys of the classic methods and
    # super-shingles do not gather a template's fillings: every leader is counted and
    # marked, as the engine does.
    return _mark_common(leader_rows, method, params,
                        every_leader=(form == "hamming" or not info["marks_crowds_only"]))


#: A bucket of more than this many leaders is a crowd (the batch engine's `CROWD`).
_CROWD = 10
#: One in this many uncrowded leaders is counted for common features (the engine's `SAMPLE`).
_SAMPLE = 4


def _mark_common(leader_rows, method: str, params: dict, every_leader: bool = False):
    """``leader_rows`` with the common features of crowded leaders marked in their sketches,
    as the batch engine marks them (``common_shingles="check"``, `max_df`): a leader is
    crowded when one of its keys is shared by more than ``_CROWD`` leaders; the features of
    crowded leaders are counted in every crowded leader and in one of ``_SAMPLE`` of the
    others (by their position in the input order, ``order_col`` then the id, each counting
    ``_SAMPLE`` times); a feature counted more than the limit (``max_df`` resolved against
    the leaders) is common, and is marked in the crowded leaders' sketches. With
    ``every_leader`` (a join without keys: SimHash's Hamming blocks; keys that do not gather a
    template's fillings: ``imatch``, ``topn``, ``supershingle``), every leader is crowded. Unchanged when the method marks no common features."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, LongType, StructField, StructType

    limit = _neardup.common_limit(method, params, leader_rows.count())
    if limit is None:
        return leader_rows
    if every_leader:
        crowded = leader_rows.select("rank").withColumn("crowded", F.lit(True))
    else:
        entries = leader_rows.select("rank", F.explode("keys").alias("key"))
        crowded_keys = (entries.groupBy("key").count().filter(F.col("count") > _CROWD)
                        .select("key"))
        crowded = (entries.join(crowded_keys, "key").select("rank").distinct()
                   .withColumn("crowded", F.lit(True)))
    positions = _positions(leader_rows)
    rows = (leader_rows.join(crowded, "rank", "left").join(positions, "rank")
            .withColumn("crowded", F.coalesce("crowded", F.lit(False))).persist())

    def features(batches):
        import pyarrow as pa

        from neardup import _neardup as native

        arrow_schema = pa.schema([
            pa.field("rank", pa.int64(), False),
            pa.field("crowded", pa.bool_(), False),
            pa.field("position", pa.int64(), False),
            pa.field("features", pa.list_(pa.field("element", pa.int64(), False)), False),
        ])
        for batch in batches:
            found = native.spark_frequency_features(batch.column("sketch"), method, params)
            columns = [batch.column("rank"), batch.column("crowded"), batch.column("position"),
                       found]
            yield _conform(columns, None, arrow_schema)

    feature_schema = StructType([
        StructField("rank", LongType(), False),
        StructField("crowded", rows.schema["crowded"].dataType, False),
        StructField("position", LongType(), False),
        StructField("features", ArrayType(LongType(), False), False),
    ])
    counted = (rows.filter(F.col("crowded") | (F.col("position") % _SAMPLE == 0))
               .select("rank", "sketch", "crowded", "position")
               .mapInArrow(features, feature_schema)
               .select(F.when(F.col("crowded"), 1).otherwise(_SAMPLE).alias("weight"),
                       "crowded", F.explode("features").alias("feature")))
    # One aggregation (partial sums before the shuffle): a feature counts when a crowded
    # leader has it.
    common = sorted(
        row["feature"] for row in counted.groupBy("feature")
        .agg(F.sum("weight").alias("count"), F.max(F.col("crowded").cast("int")).alias("crowd"))
        .filter((F.col("crowd") == 1) & (F.col("count") > limit)).select("feature").collect())
    if not common:
        rows.unpersist()
        return leader_rows

    def mark(batches):
        from neardup import _neardup as native

        for batch in batches:
            marked = native.spark_mark_common(batch.column("sketch"), batch.column("crowded"),
                                              method, params, common)
            index = batch.schema.get_field_index("sketch")
            yield batch.set_column(index, "sketch", marked)

    columns = list(leader_rows.columns) + ["crowded"]
    schema = StructType([leader_rows.schema[c] for c in leader_rows.columns]
                        + [StructField("crowded", rows.schema["crowded"].dataType, False)])
    marked = rows.select(*columns).mapInArrow(mark, schema).drop("crowded").persist()
    marked.count()
    rows.unpersist()
    leader_rows.unpersist()
    return marked


def _positions(leader_rows):
    """Each leader's ``position``: 0, 1, 2... in the input order (``order_key``, then id)."""
    from pyspark.sql import functions as F

    ordered = (leader_rows.select(F.col("rank").alias("leader_rank"), "order_key", "id")
               .orderBy("order_key", "id").persist())
    numbered = _dense_rank(ordered)
    return numbered.select(F.col("leader_rank").alias("rank"), F.col("rank").alias("position"))
