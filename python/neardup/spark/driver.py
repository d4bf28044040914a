"""The small-input shortcut: an input of at most ``small_input_rows`` rows is collected and
deduplicated on the driver by :func:`neardup.dedup`, in the order the distributed path ranks
by, instead of running a Spark stage per step."""

from __future__ import annotations

from .. import _invalid
from .arrow import _to_arrow


def _dedup_on_driver(spark, base, id_col, text_col, method, params, cluster, keep, bucket_cap,
                     candidate_budget):
    """A small input deduplicated in one piece on the driver: the rows collected as Arrow,
    checked as the distributed path checks them, put in the order the distributed path ranks
    by (``order_key``, then the id), and given to :func:`neardup.dedup` with the same options:
    the same clusters, without the cost of a Spark stage per step."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from .. import dedup as local_dedup

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
