from typing import Any

from pyspark.sql import DataFrame

def dedup(
    df: DataFrame,
    text_col: str = "text",
    id_col: str = "id",
    method: str = "minhash",
    threshold: float | str | None = None,
    *,
    cluster: str = "representative",
    keep: str = "first",
    bucket_cap: int = 1000,
    candidate_budget: int = 32,
    order_col: str | None = None,
    max_driver_pairs: int = 1_000_000,
    small_input_rows: int = 100_000,
    shuffle_partitions: int | None = None,
    **params: Any,
) -> DataFrame: ...
def kept(df: DataFrame, text_col: str = "text", id_col: str = "id", **options: Any) -> DataFrame: ...
def connected_components(edges: DataFrame, max_rounds: int = 100) -> DataFrame: ...
def spans(
    df: DataFrame,
    *,
    text: str = "text",
    order: str | None = None,
    level: str = "substring",
    min_length: int | None = None,
    min_count: int = 2,
    count: str = "documents",
    remove: str = "later",
    max_broadcast_keys: int = 1_000_000,
    shuffle_partitions: int | None = None,
) -> DataFrame: ...
