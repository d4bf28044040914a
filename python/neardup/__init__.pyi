from collections.abc import Iterable
from typing import Any

import pyarrow as pa

from ._neardup import NeardupError as NeardupError

__version__: str

Texts = Iterable[str] | pa.Array | pa.ChunkedArray | Any
"""A list or tuple of str, a pyarrow (Chunked)Array of strings, a pandas or polars Series."""

def methods() -> dict[str, dict[str, Any]]: ...
def dedup(
    texts: Texts,
    ids: Iterable[Any] | pa.Array | Any | None = None,
    method: str = "minhash",
    threshold: float | str | None = None,
    *,
    cluster: str = "representative",
    keep: str = "first",
    bucket_cap: int | None = None,
    candidate_budget: int | None = None,
    corpus_memory: int | str | None = None,
    against: Texts | None = None,
    against_ids: Iterable[Any] | pa.Array | Any | None = None,
    within: bool = False,
    threads: int = 0,
    **params: Any,
) -> pa.Table: ...
def stats(table: pa.Table) -> dict[str, Any]: ...
def spans(
    data: Any,
    *,
    text: str = "text",
    level: str = "substring",
    min_length: int | None = None,
    min_count: int = 2,
    count: str = "documents",
    remove: str = "later",
    keep: str = "first",
    threads: int = 0,
    report: bool = False,
) -> Any:
    """``data`` of the same kind with its texts shortened; with ``report=True``, ``(result,
    spans)``, ``spans`` a table of the removed texts (a pandas or polars DataFrame for those
    inputs, else a pyarrow Table)."""

class MinHash:
    params: dict[str, Any]
    def __init__(self, **params: Any) -> None: ...
    def signatures(self, texts: Texts, threads: int = 0) -> pa.FixedSizeListArray: ...

class SimHash:
    params: dict[str, Any]
    def __init__(self, **params: Any) -> None: ...
    def fingerprints(self, texts: Texts, threads: int = 0) -> pa.UInt64Array: ...
    @staticmethod
    def distance(a: int, b: int) -> int: ...

class Index:
    def __init__(self, method: str = "minhash", **params: Any) -> None: ...
    @property
    def method(self) -> str: ...
    def __len__(self) -> int: ...
    def insert(self, texts: Texts, ids: Iterable[Any] | pa.Array | None = None, threads: int = 0) -> None: ...
    def query(self, texts: Texts, limit: int = 10, threads: int = 0) -> pa.Table: ...
    def save(self, path: str) -> None: ...
    @classmethod
    def load(cls, path: str) -> Index: ...

class LshIndex(Index):
    def __init__(self, **params: Any) -> None: ...

class HammingIndex(Index):
    def __init__(self, **params: Any) -> None: ...
