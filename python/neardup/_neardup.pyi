"""The Rust extension (PyO3). Use the wrappers in `neardup` and `neardup.spark`."""

from typing import Any

import pyarrow as pa

__version__: str

class NeardupError(ValueError):
    """An invalid parameter or input; the message names it, as the command line's does."""

    parameter: str

def dedup_arrow(
    chunks: list[pa.Array],
    method: str,
    params: dict[str, Any] | None = None,
    cluster: str = "representative",
    keep: str = "first",
    bucket_cap: int | None = None,
    candidate_budget: int | None = None,
    corpus_memory: int | None = None,
    reference: int = 0,
    within: bool = True,
    threads: int = 0,
) -> tuple[pa.RecordBatch, str]: ...
def methods() -> list[tuple[str, str, list[tuple[str, str, str | None, str]]]]: ...
def minhash_signatures(chunks: list[pa.Array], params: dict[str, Any] | None = None, threads: int = 0) -> pa.FixedSizeListArray: ...
def simhash_fingerprints(chunks: list[pa.Array], params: dict[str, Any] | None = None, threads: int = 0) -> pa.UInt64Array: ...
def spark_sketch(chunks: list[pa.Array], method: str, params: dict[str, Any] | None = None, threads: int = 1) -> pa.RecordBatch: ...
def method_info(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]: ...
def bucket_pairs(members: pa.ListArray, cap: int) -> pa.RecordBatch: ...
def verify_pairs(a: pa.BinaryArray, b: pa.BinaryArray, method: str, params: dict[str, Any] | None = None, threads: int = 1) -> pa.RecordBatch: ...
def similarities(a: pa.BinaryArray, b: pa.BinaryArray, method: str, params: dict[str, Any] | None = None, threads: int = 1) -> pa.DoubleArray: ...
def representative(a: pa.Int64Array, b: pa.Int64Array, similarity: pa.DoubleArray) -> pa.RecordBatch: ...
def spans(
    chunks: list[pa.Array],
    level: str = "substring",
    min_length: int | None = None,
    min_count: int = 2,
    count: str = "documents",
    remove: str = "later",
    keep: str = "first",
    threads: int = 0,
) -> tuple[pa.Array, pa.RecordBatch, pa.RecordBatch]:
    """(new texts, removed ranges: row/start/end, report rows with documents by position)."""
def span_context_anchors(
    chunks: list[pa.Array],
    min_length: int | None = None,
    min_count: int = 2,
    count: str = "documents",
    remove: str = "later",
    contexts: bool = True,
    keys: pa.Int64Array | None = None,
    threads: int = 1,
) -> pa.RecordBatch:
    """row, key, start, end, anchor, r_low, r_high (and context) per anchor."""
def span_group_marks(
    members: pa.RecordBatch,
    min_length: int | None = None,
    min_count: int = 2,
    count: str = "documents",
    remove: str = "later",
    threads: int = 1,
) -> pa.RecordBatch:
    """rank, start, end, kept per mark, from key, rank, context, start, anchor, r_low, r_high."""
def span_document_ranges(marks: pa.RecordBatch, threads: int = 1) -> pa.RecordBatch:
    """rank, start, end per removed range, from rank, start, end, kept."""
def span_units(chunks: list[pa.Array], level: str = "line", min_length: int | None = None, threads: int = 1) -> pa.RecordBatch:
    """row, key, key_start, key_end, remove_start, remove_end per candidate unit."""
def span_cut(chunks: list[pa.Array], rows: pa.Int64Array, starts: pa.Int64Array, ends: pa.Int64Array, threads: int = 1) -> pa.Array: ...

class Index:
    def __init__(self, method: str = "minhash", params: dict[str, Any] | None = None) -> None: ...
    def insert(self, chunks: list[pa.Array], threads: int = 0) -> int: ...
    def query(self, chunks: list[pa.Array], limit: int = 10, threads: int = 0) -> pa.RecordBatch: ...
    def __len__(self) -> int: ...
    @property
    def method(self) -> str: ...
    @property
    def params(self) -> dict[str, str]: ...
    def save(self, path: str, extra: bytes) -> None: ...
    @staticmethod
    def load(path: str) -> tuple[Index, bytes]: ...
