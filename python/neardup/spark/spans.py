"""Span removal on Spark: the repeated passages of a DataFrame's texts removed from inside the
rows, with the spans :func:`neardup.spans` removes from the same texts in the same order.

The rows are numbered in keep order (the ``order`` column ascending, ties and no ``order`` in
the DataFrame's row order), then, at the substring level:

1. **Keys** (``mapInArrow``, Rust): each text's anchors, the k-grams its windows of
   ``min_length`` characters are charged to; the keys found in fewer than ``min_count``
   documents (or occurrences) are counted out by a shuffle of the keys alone.
2. **Contexts** (``mapInArrow``, Rust): the anchors of the remaining keys with their contexts
   (the bytes their windows span), when those keys fit a broadcast (``max_broadcast_keys``);
   else every anchor's, and the groups too small are dropped in the next step.
3. **Groups**: the anchors shuffled by key, each key's group walked in Rust
   (``span_group_marks``): the removed windows and the first copies that stay, as byte
   ranges of their documents.
4. **Rewrite**: the marks shuffled back by document, turned into its removed ranges
   (``span_document_ranges``) and cut out of its text (``span_cut``) on the executors.

At the line and sentence levels, each text's units (lines, sentences of at least
``min_length`` characters) are counted by their exact text in a shuffle (distinct documents,
or occurrences) with their first occurrence (by rank, then position); the units of the keys
found often enough are removed (all but the first with ``remove="later"``) as in step 4.
"""

from __future__ import annotations

from .. import _count, _invalid, _span_options
from .arrow import _conform, _to_arrow
from .groups import _dense_rank
from .options import _check_executors, _shuffles_sized

#: The row number column added while a run lasts, and the new texts' column.
_ROW = "__neardup_row"
_NEW = "__neardup_text"

#: Keys broadcast to the executors at most (8 bytes each); past this, every anchor ships its
#: context.
_MAX_BROADCAST_KEYS = 1_000_000


def spans(
    df,
    *,
    text: str = "text",
    order: str | None = None,
    level: str = "substring",
    min_length: int | None = None,
    min_count: int = 2,
    count: str = "documents",
    remove: str = "later",
    max_broadcast_keys: int = _MAX_BROADCAST_KEYS,
    shuffle_partitions: int | None = None,
):
    """The DataFrame ``df`` with the repeated spans of its column ``text`` removed: the same
    rows and other columns, computed and cached (``persist``). The first copy of a span stays
    in keep order: ``order`` ascending (ties in row order), else the DataFrame's row order
    (its partitions in order). Options are :func:`neardup.spans`'s; ``max_broadcast_keys``
    bounds the keys found often enough that are broadcast so that only their anchors ship a
    context (0: never), and ``shuffle_partitions`` the shuffle partitions of this run
    (default: as :func:`neardup.spark.dedup` sizes them). Texts must not be null."""
    from pyspark.sql import functions as F

    options = _span_options(level, min_length, min_count, count, remove)
    _check_span_columns(df, text, order)
    _count(max_broadcast_keys, "max_broadcast_keys", 0)
    _count(shuffle_partitions, "shuffle_partitions", 1)
    spark = df.sparkSession
    base = df.withColumn(_ROW, F.monotonically_increasing_id()).persist()
    held = [base]
    try:
        rows = base.count()
        if base.filter(base[text].isNull()).limit(1).count():
            raise _invalid("text", f"{text!r} is null on a row (fill or drop nulls first: a "
                                   "null is not an empty text)")
        _check_executors(spark)
        with _shuffles_sized(spark, rows, shuffle_partitions):
            docs = _documents(base, text, order, held)
            if options["level"] == "substring":
                marks = _substring_marks(docs, options, max_broadcast_keys, held)
            else:
                marks = _unit_marks(docs, options, held)
            new_texts = _rewritten(docs, marks).toDF(_ROW, _NEW)
            joined = base.join(new_texts, _ROW, "left")
            columns = [F.coalesce(joined[_NEW], base[c]).alias(c) if c == text else base[c]
                       for c in df.columns]
            result = joined.select(*columns).persist()
            result.count()
    finally:
        for frame in held:
            frame.unpersist()
    return result


def _check_span_columns(df, text: str, order: str | None) -> None:
    """Refuses a column that ``df`` does not have, a text column that is not strings, and a
    DataFrame that has the run's row number column."""
    for what, name in (("text", text), ("order", order)):
        if name is not None and (not isinstance(name, str) or name not in df.columns):
            raise _invalid(what, f"no column {name!r} (the DataFrame has {df.columns})")
    text_type = df.schema[text].dataType.simpleString()
    if text_type != "string":
        raise _invalid("text", f"{text!r} is {text_type}: expected string")
    for name in (_ROW, _NEW):
        if name in df.columns:
            raise _invalid("columns", f"{name!r} is a name the run uses: rename the column")


def _documents(base, text: str, order: str | None, held: list):
    """The documents of ``base`` as ``rank`` (keep order), ``row`` (the run's row number) and
    ``text``: the rank is the row number (the row order), or with ``order`` the dense rank
    of the rows sorted by it, then by row (persisted, and added to ``held``)."""
    from pyspark.sql import functions as F

    columns = [F.col(_ROW).alias("row"), base[text].alias("text")]
    if order is None:
        return base.select(F.col(_ROW).alias("rank"), *columns)
    ordered = (base.select(*columns, base[order].alias("order_key"))
               .orderBy(F.col("order_key").asc(), F.col("row").asc()).persist())
    ranked = _dense_rank(ordered).drop("order_key").persist()
    ranked.count()
    ordered.unpersist()
    held.append(ranked)
    return ranked


def _engine_options(options: dict) -> dict:
    """The options the substring steps take."""
    return {name: options[name] for name in ("min_length", "min_count", "count", "remove")}


def _substring_marks(docs, options: dict, max_broadcast_keys: int, held: list):
    """Steps 1 to 3: the marks (``rank``, ``start``, ``end``, ``kept``) of the substring
    level."""
    from pyspark.sql import functions as F

    engine = _engine_options(options)
    documents = options["count"] == "documents"
    keyed = docs.select("rank", "text").mapInArrow(_anchor_keys(engine, documents),
                                                   "rank long, key long")
    frequent = (keyed.groupBy("key").count().filter(F.col("count") >= options["min_count"])
                .select("key").persist())
    held.append(frequent)
    found = frequent.count()
    spark = docs.sparkSession
    if found == 0:
        return spark.createDataFrame([], _MARKS)
    keys = None
    if found <= max_broadcast_keys:
        values = _to_arrow(frequent).column("key").combine_chunks()
        keys = spark.sparkContext.broadcast(values.sort().to_numpy())
        held.append(keys)
    members = docs.select("rank", "text").mapInArrow(_contexts(engine, keys), _MEMBERS)
    return (members.repartition("key").sortWithinPartitions("key")
            .mapInArrow(_group_marker(engine), _MARKS))


_MEMBERS = ("key long, rank long, context string, start long, anchor long, r_low int, "
            "r_high int")
_MARKS = "rank long, start long, end long, kept boolean"


def _anchor_keys(engine: dict, documents: bool):
    """Each text's anchor keys as (``rank``, ``key``), once per document when ``documents``
    are counted."""
    def keys(batches):
        import pyarrow as pa

        from neardup import _neardup as native

        schema = pa.schema([("rank", pa.int64()), ("key", pa.int64())])
        for batch in batches:
            found = native.span_context_anchors([batch.column("text")], contexts=False,
                                                **engine)
            table = pa.table({"rank": batch.column("rank").take(found.column("row")),
                              "key": found.column("key")})
            if documents:
                table = table.group_by(["rank", "key"]).aggregate([])
            table = table.select(["rank", "key"])
            for out in table.to_batches():
                yield _conform(out.columns, None, schema)

    return keys


def _contexts(engine: dict, keys):
    """Each text's anchors with their contexts (of the broadcast ``keys`` only, when given)
    as the group step takes them."""
    def contexts(batches):
        import pyarrow as pa

        from neardup import _neardup as native

        wanted = None if keys is None else pa.array(keys.value, pa.int64())
        schema = pa.schema([("key", pa.int64()), ("rank", pa.int64()), ("context", pa.string()),
                            ("start", pa.int64()), ("anchor", pa.int64()),
                            ("r_low", pa.int32()), ("r_high", pa.int32())])
        for batch in batches:
            found = native.span_context_anchors([batch.column("text")], keys=wanted, **engine)
            ranks = batch.column("rank").take(found.column("row"))
            columns = [found.column("key"), ranks] + [
                found.column(name) for name in ("context", "start", "anchor", "r_low", "r_high")]
            yield _conform(columns, None, schema)

    return contexts


def _group_marker(engine: dict):
    """The marks of each key's group, from a partition sorted by key: rows of one key are
    held until the key changes, so that a group split over batches is walked whole."""
    def marks(batches):
        import pyarrow.compute as pc

        pending, pending_key = [], None
        for batch in batches:
            if batch.num_rows == 0:
                continue
            keys = batch.column("key")
            last = keys[-1].as_py()
            if pending and pending_key == last:
                pending.append(batch)
                continue
            cut = pc.index(keys, last).as_py()
            yield from _walked(pending + [batch.slice(0, cut)], engine)
            pending, pending_key = [batch.slice(cut)], last
        yield from _walked(pending, engine)

    return marks


def _walked(batches: list, engine: dict):
    """The marks of the groups in ``batches`` (whole groups), as record batches."""
    import pyarrow as pa

    from neardup import _neardup as native

    batches = [batch for batch in batches if batch.num_rows]
    if not batches:
        return
    members = pa.Table.from_batches(batches).combine_chunks().to_batches()[0]
    marks = native.span_group_marks(members, **engine)
    schema = pa.schema([("rank", pa.int64()), ("start", pa.int64()), ("end", pa.int64()),
                        ("kept", pa.bool_())])
    yield _conform(marks.columns, None, schema)


def _unit_marks(docs, options: dict, held: list):
    """The marks of the line and sentence levels: the units whose text is in at least
    ``min_count`` documents (or occurrences), all but the first occurrence (by rank, then
    position) with ``remove="later"``."""
    from pyspark.sql import functions as F

    units = docs.select("rank", "text").mapInArrow(
        _unit_rows(options["level"], options["min_length"]),
        "rank long, key string, key_start long, remove_start long, remove_end long",
    ).persist()
    held.append(units)
    counted = F.countDistinct("rank") if options["count"] == "documents" else F.count(F.lit(1))
    keys = (units.groupBy("key")
            .agg(counted.alias("found"), F.min(F.struct("rank", "key_start")).alias("first"))
            .filter(F.col("found") >= options["min_count"])
            .select("key", F.col("first.rank").alias("first_rank"),
                    F.col("first.key_start").alias("first_start")))
    removed = units.join(keys, "key")
    if options["remove"] == "later":
        removed = removed.filter((F.col("rank") != F.col("first_rank"))
                                 | (F.col("key_start") != F.col("first_start")))
    return removed.select("rank", F.col("remove_start").alias("start"),
                          F.col("remove_end").alias("end"), F.lit(False).alias("kept"))


def _unit_rows(level: str, min_length: int | None):
    """Each text's candidate units as (``rank``, ``key``, ``key_start``, ``remove_start``,
    ``remove_end``)."""
    def units(batches):
        import pyarrow as pa

        from neardup import _neardup as native

        schema = pa.schema([("rank", pa.int64()), ("key", pa.string()),
                            ("key_start", pa.int64()), ("remove_start", pa.int64()),
                            ("remove_end", pa.int64())])
        for batch in batches:
            found = native.span_units([batch.column("text")], level, min_length)
            columns = [batch.column("rank").take(found.column("row"))] + [
                found.column(name) for name in ("key", "key_start", "remove_start",
                                                "remove_end")]
            yield _conform(columns, None, schema)

    return units


def _rewritten(docs, marks):
    """Step 4: the new texts (``row``, ``new_text``) of the documents that have marks."""
    from pyspark.sql import functions as F

    per_document = marks.groupBy("rank").agg(
        F.collect_list(F.struct("start", "end", "kept")).alias("marks"))
    changed = docs.join(per_document, "rank").select("row", "text", "marks")
    return changed.mapInArrow(_cutter, "row long, new_text string")


def _cutter(batches):
    """Each document's marks turned into its removed ranges and cut out of its text."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from neardup import _neardup as native

    schema = pa.schema([("row", pa.int64()), ("new_text", pa.string())])
    for batch in batches:
        marks = batch.column("marks")
        flat = marks.flatten()
        documents = pc.list_parent_indices(marks).cast(pa.int64())
        ranges = native.span_document_ranges(pa.RecordBatch.from_arrays(
            [documents, flat.field("start"), flat.field("end"), flat.field("kept")],
            names=["rank", "start", "end", "kept"]))
        texts = native.span_cut([batch.column("text")], ranges.column("rank"),
                                ranges.column("start"), ranges.column("end"))
        yield _conform([batch.column("row"), texts], None, schema)
