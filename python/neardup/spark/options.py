"""The options of a Spark run and its session: the options checked (and the method refused
by name when the Spark path cannot run it) before any job, the shuffle partitions sized for
the input, and the executors' Python checked once per Spark context."""

from __future__ import annotations

from contextlib import contextmanager

from .. import _invalid, _method_params, _neardup


def _spark_params(method: str, threshold: float | str | None, params: dict) -> dict:
    params = _method_params(method, threshold, params)
    specs = {name: [p[0] for p in ps] for name, _about, ps in _neardup.methods()}
    if method not in specs:
        raise _invalid("method", f"{method!r} (expected one of: {', '.join(specs)})")
    # Refuses, naming the parameter, a method the Spark path cannot run (the rules are the
    # engine's: `neardup_engine::spark_rules`).
    _neardup.method_info(method, {k: str(v) for k, v in params.items()})
    return params


def _checked_options(method: str, threshold: float | str | None, params: dict, *,
                     cluster: str, keep: str, bucket_cap: int, candidate_budget: int,
                     max_driver_pairs: int, small_input_rows: int,
                     shuffle_partitions: int | None) -> dict:
    """The method's parameters as the executors take them (strings; booleans in lower case),
    once :func:`dedup`'s options are checked: the first wrong one is refused by name."""
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
    return {k: str(v) if not isinstance(v, bool) else str(v).lower()
            for k, v in _spark_params(method, threshold, params).items()}


def _check_columns(df, text_col: str, id_col: str, order_col: str | None) -> None:
    """Refuses a column that ``df`` does not have, and a text column that is not strings."""
    for name in (text_col, id_col) + ((order_col,) if order_col else ()):
        if name not in df.columns:
            raise _invalid("columns", f"no column {name!r} (the DataFrame has {df.columns})")
    text_type = df.schema[text_col].dataType.simpleString()
    if text_type != "string":
        raise _invalid("text_col", f"{text_col!r} is {text_type}: expected string")


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


@contextmanager
def _shuffles_sized(spark, rows: int, shuffle_partitions: int | None):
    """The session's shuffle partitions set for a run over ``rows`` input rows
    (``shuffle_partitions`` when given, else :func:`_shuffle_partitions`), and restored on
    leaving, whether the run returns or raises."""
    # Shuffles sized for the input: 200 partitions of a few thousand rows each cost more in
    # scheduling than in work.
    partitions = shuffle_partitions or _shuffle_partitions(spark, rows)
    previous = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", str(partitions))
    try:
        yield
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", previous)


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
