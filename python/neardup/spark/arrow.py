"""Arrow conversions shared by the stages: record batches conformed to the types Spark
expects, columns of one type, and DataFrames collected to the driver as Arrow tables."""

from __future__ import annotations


def _conform(columns, names, schema):
    """A record batch of ``columns`` with the types Spark expects of ``schema``."""
    import pyarrow as pa

    arrays = []
    for array, field in zip(columns, schema):
        arrays.append(array.cast(field.type) if array.type != field.type else array)
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _column(table, name, type_):
    array = table.column(name).combine_chunks()
    return array.cast(type_) if array.type != type_ else array


def _to_arrow(df):
    """A DataFrame collected to the driver as a pyarrow Table."""
    if hasattr(df, "toArrow"):
        return df.toArrow()
    import pyarrow as pa  # pragma: no cover (pyspark < 4)
    return pa.Table.from_pandas(df.toPandas())
