"""neardup on Spark: deduplicate a DataFrame larger than one machine, with the same clusters
as ``neardup dedup`` on the same data and options.

Every step runs on the executors (the driver collects small things only: per-partition
counts, the frequent features of the corpus pass, and the verified pairs of a small job):

0. **Corpus pass** (when the method learns from its corpus: boilerplate lines): see below.
1. **Sketch** (``mapInArrow``, Rust): each text's identity, length, encoded sketch and LSH
   band keys, as Arrow batches (no Python object per document).
2. **Rank**: documents are ordered by the keep policy, then by ``order_col`` (default: the id
   column), and numbered densely: a DataFrame has no input order, so this order plays the part
   of the file order of the command line (``keep="first"`` keeps the smallest).
3. **Exact copies**: documents with the same identity follow the best-ranked one, the leader.
   3b. **Common features** (``common_shingles="check"``): the features of crowded leaders
   that more than ``max_df`` leaders share are marked in their sketches (see below).
4. **Candidates**: leaders' band keys are exploded and grouped into buckets; each bucket is
   paired in Rust exactly as the batch engine pairs it (a member with the members before it,
   among the first ``bucket_cap``), pairs are deduplicated, and when they exceed
   ``documents x candidate_budget`` each document keeps its best-ranked partners up to the
   engine's water-filling level.
5. **Verify** (``mapInArrow``, Rust): the true similarity of each candidate pair.
6. **Cluster**: ``connected`` runs the large-star/small-star connected components of Kiveris
   et al. (SoCC 2014) on the verified pairs; ``representative`` (the default) runs the
   engine's greedy rule over the verified pairs: on the driver up to ``max_driver_pairs``
   of them, else on the executors, one connected component of the pairs at a time (the
   rule's choices in one component never depend on another's).
7. Exact copies follow their leader; ids are joined back.

Methods: those whose candidates are documents sharing a key: ``exact``, ``minhash``,
``supershingle`` (with ``min_super=1``), ``imatch`` and ``topn`` (their lexicon and TF-IDF
weights learned from the distributed corpus pass, every count); ``simhash`` (the engine's
exact Hamming join in distributed passes: stored and probe rows of block values, grouped
by block and value, paired in Rust); ``join`` with a set measure (prefix filtering: the
prefixes of the token sets, rarer tokens first, every pair at the threshold sharing a prefix
token; short texts only). ``join``
with ``measure="edit"`` is refused by name (Pass-Join's distributed form looks up on the order
of a text's squared length in keys). ``ngram``, ``segments`` and ``sentences``
(an order-dependent bucket walk, or a least number of shared keys under a budget) are
refused with a message naming the method.

The corpus pass of a batch run is distributed too (step 0): each text's corpus features are
computed on the executors, a distinct feature set counts once (as the command line counts
distinct texts), document frequencies are counted by a shuffle, and the features that reach
the least learned limit come back to the driver as an exact table that the sketcher learns
from. So ``boilerplate_df`` (boilerplate lines) is learned as ``neardup dedup`` learns it, at
the same default. Common shingles (``max_df`` with ``common_shingles="check"``, the
default) are found as the batch engine finds them, after the leaders are known (step 3b):
crowded leaders (a key shared by more than 10 leaders) have their features counted, with a
one-in-four sample of the others, and the features past the limit are marked in the crowded
leaders' sketches on the executors. ``weighting="idf"`` (every shingle's corpus count in every
sketch) is refused by name.
"""

from __future__ import annotations

from typing import Any

from . import _invalid, _method_params, _neardup

__all__ = ["connected_components", "dedup", "kept"]

_DEFAULT_BUCKET_CAP = 1000
_DEFAULT_CANDIDATE_BUDGET = 32


def _spark_params(method: str, threshold: float | str | None, params: dict) -> dict:
    params = _method_params(method, threshold, params)
    specs = {name: [p[0] for p in ps] for name, _about, ps in _neardup.methods()}
    if method not in specs:
        raise _invalid("method", f"{method!r} (expected one of: {', '.join(specs)})")
    # Refuses, naming the parameter, a method the Spark path cannot run (the rules are the
    # engine's: `neardup_engine::spark_rules`).
    _neardup.method_info(method, {k: str(v) for k, v in params.items()})
    return params


def _arrow_types():
    import pyarrow as pa
    return pa


def dedup(
    df,
    text_col: str = "text",
    id_col: str = "id",
    method: str = "minhash",
    threshold: float | str | None = None,
    *,
    cluster: str = "representative",
    keep: str = "first",
    bucket_cap: int = _DEFAULT_BUCKET_CAP,
    candidate_budget: int = _DEFAULT_CANDIDATE_BUDGET,
    order_col: str | None = None,
    max_driver_pairs: int = 1_000_000,
    small_input_rows: int = 100_000,
    shuffle_partitions: int | None = None,
    **params: Any,
):
    """Deduplicates the DataFrame ``df`` and returns a DataFrame of ``(id, cluster,
    duplicate_of, similarity)``, one row per input row: ``cluster`` is the id of the kept row
    of its cluster (its own when kept), ``duplicate_of`` and ``similarity`` are null for kept
    rows. The id column keeps its type; ids must be unique and not null, texts not null.

    Options are :func:`neardup.dedup`'s (the command line's): the method's parameters by name,
    ``cluster``, ``keep``, ``bucket_cap``, ``candidate_budget``; plus ``order_col`` (the
    order that ``keep="first"`` and ties follow; default: the id column) and
    ``max_driver_pairs`` (with ``cluster="representative"``: up to this many verified pairs
    are clustered on the driver, the quickest for a small job; more are clustered on the
    executors, one connected component at a time; 0 always on the executors) and
    ``small_input_rows`` (an input of at most this many rows is collected to the driver and
    deduplicated there in one piece by :func:`neardup.dedup`, in the order Spark ranks by: the
    same clusters without a Spark stage per step; 0 never) and ``shuffle_partitions`` (the
    shuffle partitions of this run; default: one per 20,000 rows, at least two per core and
    at most the session's ``spark.sql.shuffle.partitions``, which is restored on return). The
    result is computed and cached (``persist``) before it is returned.
    """
    from pyspark.sql import functions as F

    if cluster not in ("representative", "connected"):
        raise _invalid("cluster", f"{cluster!r} (expected representative or connected)")
    if keep not in ("first", "longest", "shortest"):
        raise _invalid("keep", f"{keep!r} (expected first, longest or shortest)")
    for name, value in (("bucket_cap", bucket_cap), ("candidate_budget", candidate_budget)):
        if not isinstance(value, int) or value < 1:
            raise _invalid(name, f"{value!r} (must be at least 1)")
    for name, value in (("max_driver_pairs", max_driver_pairs),
                        ("small_input_rows", small_input_rows)):
        if not isinstance(value, int) or value < 0:
            raise _invalid(name, f"{value!r} (must be 0 or more)")
    if shuffle_partitions is not None and (not isinstance(shuffle_partitions, int)
                                           or shuffle_partitions < 1):
        raise _invalid("shuffle_partitions", f"{shuffle_partitions!r} (must be at least 1)")
    params = {k: str(v) if not isinstance(v, bool) else str(v).lower()
              for k, v in _spark_params(method, threshold, params).items()}
    for name in (text_col, id_col) + ((order_col,) if order_col else ()):
        if name not in df.columns:
            raise _invalid("columns", f"no column {name!r} (the DataFrame has {df.columns})")
    spark = df.sparkSession
    text_type = df.schema[text_col].dataType.simpleString()
    if text_type != "string":
        raise _invalid("text_col", f"{text_col!r} is {text_type}: expected string")

    order = F.col(order_col) if order_col else F.col(id_col)
    base = df.select(
        F.col(id_col).alias("id"),
        F.col(text_col).alias("text"),
        order.alias("order_key"),
    )
    rows = base.count()
    if rows <= small_input_rows:
        return _dedup_on_driver(spark, base, id_col, text_col, method, params, cluster, keep,
                                bucket_cap, candidate_budget)
    _check_executors(spark)
    # Shuffles sized for the input (the session's setting is restored on return): 200
    # partitions of a few thousand rows each cost more in scheduling than in work.
    partitions = shuffle_partitions or _shuffle_partitions(spark, rows)
    previous = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", str(partitions))
    try:
        corpus = _corpus_table(base, method, params)
        # Sketched once and kept: the checks, the sort's sampling and the sort read it.
        sketched = base.mapInArrow(
            _sketcher(method, params, corpus),
            _schema(base.schema["id"].dataType, base.schema["order_key"].dataType),
        ).persist()
        _check_rows(sketched, id_col, text_col)
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
        result = _cluster(spark, ranked, method, params, cluster, bucket_cap, candidate_budget,
                          max_driver_pairs).persist()
        result.count()  # its last joins shuffle at this run's partitions too
        ranked.unpersist()
        return result
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", previous)


#: Rows per shuffle partition that the adaptive choice aims at.
_ROWS_PER_PARTITION = 20_000


def _shuffle_partitions(spark, rows: int) -> int:
    """Shuffle partitions for ``rows`` input rows: one per ``_ROWS_PER_PARTITION`` rows, at
    least two per core (``defaultParallelism``) and at most the session's
    ``spark.sql.shuffle.partitions``."""
    cores = spark.sparkContext.defaultParallelism
    ceiling = int(spark.conf.get("spark.sql.shuffle.partitions"))
    wanted = -(-rows // _ROWS_PER_PARTITION)
    return max(2 * cores, min(ceiling, wanted))


def _dedup_on_driver(spark, base, id_col, text_col, method, params, cluster, keep, bucket_cap,
                     candidate_budget):
    """A small input deduplicated in one piece on the driver: the rows collected as Arrow,
    checked as the distributed path checks them, put in the order the distributed path ranks
    by (``order_key``, then the id), and given to :func:`neardup.dedup` with the same options:
    the same clusters, without the cost of a Spark stage per step."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from . import dedup as local_dedup

    table = _to_arrow(base)
    if table.column("id").null_count:
        raise _invalid("id_col", f"{id_col!r} has null ids (every row needs an id)")
    texts = table.column("text")
    if texts.null_count:
        first = table.filter(pc.is_null(texts)).sort_by([("id", "ascending")]).column("id")[0]
        raise _invalid(
            "text_col",
            f"{text_col!r} is null for id {first.as_py()!r} (fill or drop nulls first: a null "
            "is not an empty text)",
        )
    counts = pc.value_counts(table.column("id").combine_chunks())
    repeated = counts.filter(pc.greater(counts.field("counts"), 1))
    if len(repeated):
        worst = sorted((v.as_py() for v in repeated.field("values")))[0]
        times = next(c["counts"] for c in repeated.to_pylist() if c["values"] == worst)
        raise _invalid(
            "id_col",
            f"{id_col!r}: the id {worst!r} is on {times} rows (ids must be unique)",
        )
    table = table.sort_by([("order_key", "ascending"), ("id", "ascending")])
    result = local_dedup(table.column("text"), ids=table.column("id"), method=method,
                         cluster=cluster, keep=keep, bucket_cap=bucket_cap,
                         candidate_budget=candidate_budget, **params)
    result = result.select(["id", "cluster", "duplicate_of", "similarity"])
    result = pa.table({name: result.column(name) for name in result.column_names})
    result = result.replace_schema_metadata(None)
    return spark.createDataFrame(result)


#: The Spark contexts whose executors were found to import neardup.
_CHECKED: set = set()


def _probe(_):
    import neardup  # noqa: F401  (what the executors must be able to do)

    return neardup.__file__


def _check_executors(spark) -> None:
    """Refuses, with what to do, a session whose executors cannot import neardup (a job run
    from a virtual environment whose Python the executors do not use): one small job, once per
    Spark context."""
    import sys

    context = spark.sparkContext
    key = (id(context), context.applicationId)
    if key in _CHECKED:
        return
    try:
        context.parallelize([0], 1).map(_probe).collect()
    except Exception as error:  # Py4JJavaError wraps the executor's traceback
        if "No module named 'neardup'" not in str(error):
            raise
        raise _invalid(
            "executors",
            "the executors' Python cannot import neardup (No module named 'neardup'). Point "
            f"them at this one before the session starts: PYSPARK_PYTHON={sys.executable} (or "
            f"--conf spark.pyspark.python={sys.executable}); on a cluster, ship an environment "
            "with the wheel (--archives env.tar.gz#environment --conf "
            "spark.pyspark.python=./environment/bin/python, see docs/python.md)",
        ) from None
    _CHECKED.add(key)


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


def _conform(columns, names, schema):
    """A record batch of ``columns`` with the types Spark expects of ``schema``."""
    import pyarrow as pa

    arrays = []
    for array, field in zip(columns, schema):
        arrays.append(array.cast(field.type) if array.type != field.type else array)
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _corpus_table(base, method: str, params: dict):
    """The corpus pass of a batch run, distributed: each text's corpus features (its lines'
    keys, for ``boilerplate_df``) are computed on the executors, a feature set counts once
    (as the batch engine counts distinct texts), the document frequencies are counted by a
    shuffle, and only the features that reach the least limit the method resolves for that
    many documents come back to the driver, as an encoded table the sketcher learns from,
    broadcast to the executors. ``None`` when the method learns nothing from its corpus."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, LongType, StructField, StructType

    if not _neardup.method_info(method, params)["learns_from_corpus"]:
        return None

    def features(batches):
        import pyarrow as pa

        from neardup import _neardup as native

        arrow_schema = pa.schema([
            pa.field("set", pa.int64(), False),
            pa.field("features", pa.list_(pa.field("element", pa.int64(), False)), False),
        ])
        for batch in batches:
            texts = batch.column("text")
            if texts.null_count:
                texts = texts.fill_null("")
            out = native.spark_corpus_features([texts], method, params, 1)
            yield _conform(out.columns, None, arrow_schema)

    schema = StructType([
        StructField("set", LongType(), False),
        StructField("features", ArrayType(LongType(), False), False),
    ])
    sets = (base.select("text").mapInArrow(features, schema)
            .dropDuplicates(["set"]).persist())
    documents = sets.count()
    # Only the counts that can reach a limit matter; a method that learns weights from every
    # count (imatch's lexicon, topn's TF-IDF) has no limit and gets them all.
    limits = _neardup.corpus_limits(method, params, documents)
    floor = max(1, min(limits.values())) if limits else 1
    counted = (sets.select(F.explode("features").alias("feature"))
               .groupBy("feature").count().filter(F.col("count") >= floor))
    table = _to_arrow(counted)
    sets.unpersist()
    encoded = _neardup.corpus_table(documents, table.column("feature").to_pylist(),
                                    table.column("count").to_pylist())
    return base.sparkSession.sparkContext.broadcast(encoded)


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


def _cluster(spark, ranked, method, params, cluster, bucket_cap, candidate_budget,
             max_driver_pairs):
    from pyspark.sql import functions as F

    nonempty = ranked.filter(~F.col("empty"))
    leaders = nonempty.groupBy("identity").agg(F.min("rank").alias("leader"))
    with_leader = nonempty.select("rank", "identity", "exact_only", "sketch", "keys", "order_key",
                                  "id").join(leaders, "identity")
    leader_rows = with_leader.filter(F.col("rank") == F.col("leader")).persist()
    members = with_leader.filter(F.col("rank") != F.col("leader")).select("rank", "leader")

    info = _neardup.method_info(method, params)
    form = info["form"]
    if form in ("keys", "hamming"):
        # A join without keys has no crowds to tell, and the keys of the classic methods and
        # super-shingles do not gather a template's fillings: every leader is counted and
        # marked, as the engine does.
        leader_rows = _mark_common(leader_rows, method, params,
                                   every_leader=(form == "hamming"
                                                 or not info["marks_crowds_only"]))
    if form == "keys":
        candidates = _candidates(leader_rows, bucket_cap, candidate_budget)
    elif form == "hamming":
        candidates = _hamming_candidates(leader_rows, method, params, bucket_cap,
                                         candidate_budget)
    elif form == "set_join":
        candidates = _join_candidates(leader_rows, method, params, bucket_cap)
    else:
        candidates = None
    if candidates is not None and info["template_keys"]:
        # Templates duplicate: every templated leader meets its template's first ones, as
        # the batch engine's `anchor_pairs` pairs them after any join.
        candidates = candidates.unionByName(
            _anchor_candidates(leader_rows, method, params, info["template_anchors"])
        ).distinct()
    verified = (None if candidates is None
                else _verify(leader_rows, candidates, method, params).persist())
    if verified is not None and form == "set_join":
        verified = _join_budget(leader_rows, verified, candidate_budget)

    if verified is None:
        assigned = None
    elif cluster == "representative":
        assigned = _representative(spark, verified, max_driver_pairs)
    else:
        assigned = _connected(leader_rows, verified, method, params)

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


def _candidates(leader_rows, bucket_cap: int, candidate_budget: int):
    """Candidate pairs ``(a, b)``, ``a < b`` (ranks), as the batch engine finds them."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType, StructField, StructType

    entries = leader_rows.filter(~F.col("exact_only")).select(
        "rank", F.explode("keys").alias("key"))
    buckets = (
        entries.groupBy("key")
        .agg(F.sort_array(F.collect_list("rank")).alias("members"))
        .filter(F.size("members") > 1)
        .persist()
    )
    cap = bucket_cap

    def pair(batches):
        from neardup import _neardup as native

        for batch in batches:
            yield native.bucket_pairs(batch.column("members"), cap)

    pair_schema = StructType([
        StructField("a", LongType(), False), StructField("b", LongType(), False)])
    pairs = buckets.select("members").mapInArrow(pair, pair_schema).distinct()

    size = F.size("members").cast("long")
    anchors = F.least(size, F.lit(cap).cast("long"))
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
        .agg(F.sum(F.least(F.col("position"), F.lit(cap))).alias("bound"))
        .groupBy("bound")
        .count()
        .collect()
    )
    histogram = [(row["bound"], row["count"]) for row in bounds]
    return _best_partners(pairs, _partner_limit(histogram, budget))


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
    pair_schema = StructType([
        StructField("a", LongType(), False), StructField("b", LongType(), False)])
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
    cap = bucket_cap

    def pair(batches):
        from neardup import _neardup as native

        for batch in batches:
            yield native.bucket_pairs(batch.column("members"), cap)

    pair_schema = StructType([
        StructField("a", LongType(), False), StructField("b", LongType(), False)])
    return (
        sketches.mapInArrow(rows, row_schema)
        .groupBy("key").agg(F.collect_list("rank").alias("members"))
        .filter(F.size("members") > 1)
        .select("members").mapInArrow(pair, pair_schema)
        .distinct()
    )


def _join_budget(leader_rows, verified, candidate_budget: int):
    """The verified pairs of an exact join under the candidate budget: past ``documents x
    candidate_budget`` pairs (the engine's limit on a join's pairs), each document keeps its
    best-ranked partners up to the water-filling level. (The engine stops its join there, in
    its visiting order; under the limit both keep every pair.)"""
    from pyspark.sql import functions as F

    documents = leader_rows.filter(~F.col("exact_only")).count()
    return _within_budget(verified, max(documents, 1) * candidate_budget).persist()


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


def _column(table, name, type_):
    array = table.column(name).combine_chunks()
    return array.cast(type_) if array.type != type_ else array


def _to_arrow(df):
    """A DataFrame collected to the driver as a pyarrow Table."""
    if hasattr(df, "toArrow"):
        return df.toArrow()
    import pyarrow as pa  # pragma: no cover (pyspark < 4)
    return pa.Table.from_pandas(df.toPandas())


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
    from pyspark.sql.types import DoubleType, LongType, StructField, StructType

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

    schema = StructType([
        StructField("document", LongType(), False),
        StructField("duplicate_of", LongType(), False),
        StructField("similarity", DoubleType(), False),
    ])
    return joined.select("node", "component", "sa", "sb").mapInArrow(similarity, schema)


def kept(df, text_col: str = "text", id_col: str = "id", **options: Any):
    """The rows of ``df`` that :func:`dedup` keeps (with every column of ``df``)."""
    from pyspark.sql import functions as F

    result = dedup(df, text_col=text_col, id_col=id_col, **options)
    keep = result.filter(F.col("duplicate_of").isNull()).select(F.col("id").alias(id_col))
    return df.join(keep, id_col, "left_semi")
