"""neardup: near-duplicate detection for Chinese and English text, from Python.

The same engine as the ``neardup`` command line, over Arrow data: texts from a list, a pyarrow
Array, ChunkedArray or Table column, a pandas or polars Series are read in place (pyarrow and
polars strings without a copy) and the work runs in Rust with the GIL released.

- :func:`dedup` deduplicates texts and returns a pyarrow Table with the command line's
  clusters columns (``id``, ``cluster``, ``duplicate_of``, ``similarity``) and a ``keep`` mask.
- :func:`spans` removes repeated passages (substrings, lines, sentences) from inside the
  texts of a table, a DataFrame or a list, as ``neardup spans`` does.
- :class:`MinHash` and :class:`SimHash` compute signatures and fingerprints as Arrow arrays.
- :class:`Index` (and :class:`LshIndex`, :class:`HammingIndex`) is an online index with
  insert, query, save and load.
- :mod:`neardup.spark` runs the same deduplication on a Spark DataFrame.
"""

from __future__ import annotations

import json
from typing import Any

from . import _neardup
from ._neardup import NeardupError, __version__

__all__ = [
    "HammingIndex",
    "Index",
    "LshIndex",
    "MinHash",
    "NeardupError",
    "SimHash",
    "__version__",
    "dedup",
    "methods",
    "spans",
]

_ENGINE_OPTIONS = ("cluster", "keep", "bucket_cap", "candidate_budget", "corpus_memory")


def _invalid(name: str, message: str) -> NeardupError:
    """A :class:`NeardupError` about ``name``, worded as the command line's."""
    error = NeardupError(f"invalid `{name}`: {message}")
    error.parameter = name
    return error


def methods() -> dict:
    """The methods and their parameters: ``{name: {"about": ..., "params": {name: (default,
    help)}}}`` (the command line's ``--method`` values and options, in snake_case)."""
    out = {}
    for name, about, params in _neardup.methods():
        out[name] = {"about": about, "params": {p: (d, h) for p, _k, d, h in params}}
    return out


def _chunks(values: Any, what: str) -> list:
    """Arrow string chunks of ``values``, without copying Arrow or polars data."""
    import pyarrow as pa

    if isinstance(values, pa.ChunkedArray):
        chunks = list(values.chunks)
    elif isinstance(values, pa.Array):
        chunks = [values]
    elif type(values).__module__.startswith("polars"):
        return _chunks(values.to_arrow(), what)
    elif type(values).__module__.startswith("pandas"):
        chunks = [pa.Array.from_pandas(values)]
    elif isinstance(values, (str, bytes)):
        raise _invalid(what, "a single string; expected a sequence of texts")
    else:
        values = list(values)
        try:
            chunks = [pa.array(values, type=pa.string())]
        except UnicodeEncodeError as error:
            at = next(i for i, v in enumerate(values)
                      if isinstance(v, str) and not _encodes(v))
            raise _invalid(what, f"{what}[{at}]: {error.reason} (not valid Unicode text: "
                           "lone surrogates, e.g. from bytes decoded with "
                           "errors='surrogateescape')") from None
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError) as error:
            raise _invalid(what, f"{error} (expected a sequence of str)") from None
    out = []
    for chunk in chunks:
        if pa.types.is_dictionary(chunk.type):
            chunk = chunk.cast(chunk.type.value_type)
        if pa.types.is_null(chunk.type) and len(chunk) == 0:
            chunk = pa.array([], type=pa.string())
        if not (pa.types.is_string(chunk.type) or pa.types.is_large_string(chunk.type)
                or pa.types.is_string_view(chunk.type)):
            raise _invalid(what, f"an array of {chunk.type}: expected strings")
        out.append(chunk)
    return out


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _count(value: Any, what: str, least: int) -> Any:
    """``value`` when it is None or a whole number of at least ``least``; else an error naming
    ``what``."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise _invalid(what, f"{value!r} (expected a whole number of at least {least})")
    return value


def _ids(ids: Any, count: int, what: str = "ids"):
    """The ids as one pyarrow Array (1-based record numbers when None)."""
    import pyarrow as pa

    if ids is None:
        return pa.array(range(1, count + 1), type=pa.int64())
    if isinstance(ids, pa.ChunkedArray):
        ids = ids.combine_chunks()
    elif type(ids).__module__.startswith("polars"):
        ids = ids.to_arrow()
        if isinstance(ids, pa.ChunkedArray):
            ids = ids.combine_chunks()
    elif type(ids).__module__.startswith("pandas"):
        ids = pa.Array.from_pandas(ids)
    elif not isinstance(ids, pa.Array):
        ids = pa.array(list(ids))
    if len(ids) != count:
        raise _invalid(what, f"{len(ids)} ids for {count} texts")
    if ids.null_count:
        at = ids.is_null().index(True).as_py()
        raise _invalid(what, f"{what}[{at}] is null")
    return ids


def _size(value: Any, what: str) -> int:
    """A size in bytes from an int or a string such as ``64M`` (powers of 1024)."""
    if isinstance(value, int):
        return value
    text = str(value).strip()
    units = {"K": 10, "M": 20, "G": 30}
    try:
        if text and text[-1].upper() in units:
            return int(text[:-1]) << units[text[-1].upper()]
        return int(text.rstrip("bB"))
    except ValueError:
        raise _invalid(what, f"{value!r}: expected a size such as 64M, 512K or 2G") from None


def _method_params(method: str, threshold: float | str | None, params: dict) -> dict:
    """The method's parameters, files read as the command line reads them."""
    params = dict(params)
    if threshold is not None:
        params["threshold"] = threshold
    for name, _about, specs in _neardup.methods():
        if name != method:
            continue
        for param, kind, _default, _help in specs:
            if kind == "File" and params.get(param) is not None:
                path = str(params[param])
                try:
                    with open(path, encoding="utf-8") as file:
                        params[param] = file.read()
                except OSError as error:
                    raise OSError(f"{path}: {error.strerror or error}") from None
    return {k: v for k, v in params.items() if v is not None}


def dedup(
    texts: Any,
    ids: Any = None,
    method: str = "minhash",
    threshold: float | str | None = None,
    *,
    cluster: str = "representative",
    keep: str = "first",
    bucket_cap: int | None = None,
    candidate_budget: int | None = None,
    corpus_memory: Any = None,
    against: Any = None,
    against_ids: Any = None,
    within: bool = False,
    threads: int = 0,
    **params: Any,
):
    """Deduplicates ``texts`` and returns a pyarrow Table, one row per text, in order:

    - ``id``: the text's id (``ids``, or its 1-based position),
    - ``cluster``: the id of the kept text of its cluster (its own when kept),
    - ``duplicate_of``: the id of the kept text it duplicates, or null when kept,
    - ``similarity``: its verified similarity to that text, or null when kept,
    - ``keep``: True for the texts to keep.

    The options are the command line's (``neardup dedup --help``) in snake_case: the method's
    parameters (``ngram=5``, ``max_df="off"``, files such as ``boilerplate_file`` by path),
    ``cluster``, ``keep``, ``bucket_cap``, ``candidate_budget``, ``corpus_memory``
    (``"64M"``), ``threads`` (0: one per core), and ``against`` (a reference corpus the texts
    are checked against, with ``against_ids`` and ``within``). The run's statistics are in the
    table's schema metadata under ``neardup.stats`` (JSON). Bad options raise
    :class:`NeardupError` naming the option.
    """
    import pyarrow as pa

    chunks = _chunks(texts, "texts")
    count = sum(len(c) for c in chunks)
    ids = _ids(ids, count)
    reference = 0
    if against is not None:
        reference_chunks = _chunks(against, "against")
        reference = sum(len(c) for c in reference_chunks)
        reference_ids = _ids(against_ids, reference, "against_ids")
        if against_ids is None:
            reference_ids = pa.array([f"against:{i}" for i in range(1, reference + 1)])
        chunks = reference_chunks + chunks
        all_ids = pa.concat_arrays([reference_ids.cast(pa.string()), ids.cast(pa.string())]) \
            if reference_ids.type != ids.type else pa.concat_arrays([reference_ids, ids])
    else:
        all_ids = ids
    _count(threads, "threads", 0)
    _count(bucket_cap, "bucket_cap", 1)
    _count(candidate_budget, "candidate_budget", 1)
    batch, stats = _neardup.dedup_arrow(
        chunks,
        method,
        _method_params(method, threshold, params),
        cluster=cluster,
        keep=keep,
        bucket_cap=bucket_cap,
        candidate_budget=candidate_budget,
        corpus_memory=None if corpus_memory is None else _size(corpus_memory, "corpus_memory"),
        reference=reference,
        within=within,
        threads=threads,
    )
    if reference:
        batch = batch.slice(reference)
    duplicate_of = batch.column("duplicate_of")
    table = pa.table(
        {
            "id": all_ids.slice(reference) if reference else all_ids,
            "cluster": all_ids.take(batch.column("cluster")),
            "duplicate_of": all_ids.take(duplicate_of),
            "similarity": batch.column("similarity"),
            "keep": duplicate_of.is_null(),
        }
    )
    return table.replace_schema_metadata({"neardup.stats": stats})


def stats(table) -> dict:
    """The statistics of the run that made ``table`` (a :func:`dedup` result)."""
    return json.loads(table.schema.metadata[b"neardup.stats"])


_SPAN_CHOICES = {
    "level": ("substring", "line", "sentence"),
    "count": ("documents", "occurrences"),
    "remove": ("later", "all"),
    "keep": ("first", "longest", "shortest"),
}


def _choice(value: Any, name: str) -> str:
    """``value`` when it is one of ``name``'s choices; else an error listing them."""
    choices = _SPAN_CHOICES[name]
    if not isinstance(value, str) or value not in choices:
        listed = ", ".join(choices[:-1]) + f" or {choices[-1]}"
        raise _invalid(name, f"{value!r} (expected {listed})")
    return value


def _span_options(level: Any, min_length: Any, min_count: Any, count: Any,
                  remove: Any) -> dict:
    """The span options checked as the command line checks them (the first wrong one refused
    by name); a ``min_length`` of None stands for its level's default (50 at the substring
    level, 10 at the line and sentence levels)."""
    options = {"level": _choice(level, "level"), "min_length": _count(min_length, "min_length", 1),
               "min_count": _count(min_count, "min_count", 2), "count": _choice(count, "count"),
               "remove": _choice(remove, "remove")}
    _neardup.spans([], **options)  # the engine's range checks, on no texts
    return options


def _no_nulls(chunks: list, parameter: str, what: str) -> None:
    """Refuses null texts (``what``), naming the first one's row."""
    at = 0
    for chunk in chunks:
        if chunk.null_count:
            row = at + chunk.is_null().to_pylist().index(True)
            raise _invalid(parameter, f"{what} is null on row {row} (fill or drop nulls first: "
                                      "a null is not an empty text)")
        at += len(chunk)


def _table_kind(data: Any) -> str | None:
    """``arrow``, ``pandas`` or ``polars`` for a table or frame with columns; None for texts
    alone."""
    import pyarrow as pa

    if isinstance(data, (pa.Table, pa.RecordBatch)):
        return "arrow"
    module = type(data).__module__
    if type(data).__name__ == "DataFrame" and module.split(".")[0] in ("pandas", "polars"):
        return module.split(".")[0]
    return None


def _column_of(data: Any, kind: str, text: str):
    """The text column of a table or frame ``data``, or an error naming ``text``."""
    names = list(data.schema.names if kind == "arrow" else data.columns)
    if text not in names:
        raise _invalid("text", f"no column {text!r} (the data has {names})")
    return data.column(text) if kind == "arrow" else data[text]


def _as_before(new, old_type):
    """``new`` (a pyarrow string array) in the string type of the column it replaces."""
    import pyarrow as pa

    strings = (pa.types.is_string, pa.types.is_large_string, pa.types.is_string_view)
    if new.type != old_type and any(is_type(old_type) for is_type in strings):
        return new.cast(old_type)
    return new


def _put_back(data: Any, text: str | None, new):
    """``data`` of the same kind with its texts (the column ``text`` of a table or frame)
    replaced by ``new`` (a pyarrow string array); other columns untouched."""
    import pyarrow as pa

    module = type(data).__module__
    if isinstance(data, (pa.Table, pa.RecordBatch)):
        at = data.schema.get_field_index(text)
        field = data.schema.field(at)
        new = _as_before(new, field.type)
        if isinstance(data, pa.RecordBatch) and not hasattr(data, "set_column"):
            columns = data.columns[:at] + [new] + data.columns[at + 1:]  # pyarrow < 15
            schema = data.schema.set(at, field.with_type(new.type))
            return pa.RecordBatch.from_arrays(columns, schema=schema)
        return data.set_column(at, field.with_type(new.type), new)
    if module.startswith("pandas"):
        series = data[text] if text is not None else data
        values = new.to_pandas()
        values.index = series.index
        values.name = series.name
        if values.dtype != series.dtype:
            values = values.astype(series.dtype)
        if text is None:
            return values
        out = data.copy(deep=False)
        out[text] = values
        return out
    if module.startswith("polars"):
        import polars as pl

        if text is None:
            return pl.Series(data.name, new, dtype=data.dtype)
        return data.with_columns(pl.Series(text, new, dtype=data[text].dtype))
    if isinstance(data, pa.ChunkedArray):
        return pa.chunked_array([_as_before(new, data.type)])
    if isinstance(data, pa.Array):
        return _as_before(new, data.type)
    return tuple(new.to_pylist()) if isinstance(data, tuple) else new.to_pylist()


def _report_of(data: Any, batch):
    """The report rows (a pyarrow record batch) as ``data``'s kind of table."""
    import pyarrow as pa

    table = pa.Table.from_batches([batch])
    module = type(data).__module__
    if module.startswith("pandas"):
        return table.to_pandas()
    if module.startswith("polars"):
        import polars as pl

        return pl.from_arrow(table)
    return table


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
):
    """Removes the repeated spans of ``data``'s texts and returns ``data`` of the same kind with
    its texts shortened, rows and other columns untouched: a pyarrow Table or RecordBatch, a
    pandas or polars DataFrame (their column ``text``), or texts alone (a list or tuple of
    str, a pyarrow Array or ChunkedArray, a pandas or polars Series).

    The options are ``neardup spans``'s: ``level`` (``substring``: any run of at least
    ``min_length`` characters; ``line``; ``sentence``), ``min_length`` (default 50 at the
    substring level, 10 at the others), ``min_count`` (the fewest documents a span is in, or
    occurrences with ``count="occurrences"``), ``remove`` (``later``: every copy but the
    first in ``keep`` order, which stays whole; ``all``: every copy) and ``keep``
    (``first``, ``longest``, ``shortest``). ``threads``: 0 for one per core.

    With ``report=True``, returns ``(result, spans)``: ``spans`` is a table (a pandas or
    polars DataFrame for those inputs, else a pyarrow Table) of the removed texts, most bytes
    first, with the command line's report columns: ``text``, ``count`` (documents),
    ``occurrences``, ``bytes_removed``, ``documents`` (row positions, from 0, the first 100
    in keep order) and ``more_documents``. Bad options raise :class:`NeardupError` naming the
    option.
    """
    options = _span_options(level, min_length, min_count, count, remove)
    options["keep"] = _choice(keep, "keep")
    _count(threads, "threads", 0)
    if not isinstance(report, bool):
        raise _invalid("report", f"{report!r} (expected True or False)")
    if not isinstance(text, str):
        raise _invalid("text", f"{text!r} (expected a column name)")
    kind = _table_kind(data)
    column = _column_of(data, kind, text) if kind else data
    parameter = "text" if kind else "data"
    chunks = _chunks(column, parameter)
    _no_nulls(chunks, parameter, f"column {text!r}" if kind else "data")
    new, _ranges, found = _neardup.spans(chunks, threads=threads, **options)
    result = _put_back(data, text if kind else None, new)
    return (result, _report_of(data, found)) if report else result


class MinHash:
    """MinHash signatures (the ``minhash`` method's parameters by name: ``ngram``,
    ``permutations``, ``seed``, normalisation...)."""

    def __init__(self, **params: Any) -> None:
        self.params = _method_params("minhash", None, params)
        _neardup.method_info("minhash", self.params)  # refuse bad parameters now

    def signatures(self, texts: Any, threads: int = 0):
        """A pyarrow FixedSizeListArray of ``permutations`` uint32 per text."""
        return _neardup.minhash_signatures(_chunks(texts, "texts"), self.params, threads)


class SimHash:
    """SimHash fingerprints (the ``simhash`` method's parameters by name)."""

    def __init__(self, **params: Any) -> None:
        self.params = _method_params("simhash", None, params)
        _neardup.method_info("simhash", self.params)

    def fingerprints(self, texts: Any, threads: int = 0):
        """A pyarrow UInt64Array, one fingerprint per text."""
        return _neardup.simhash_fingerprints(_chunks(texts, "texts"), self.params, threads)

    @staticmethod
    def distance(a: int, b: int) -> int:
        """The Hamming distance of two fingerprints."""
        return bin((a ^ b) & 0xFFFFFFFFFFFFFFFF).count("1")


class Index:
    """An online near-duplicate index of one method: LSH buckets for ``minhash``, permuted
    Hamming tables for ``simhash`` (with its length-aware distance), identities for
    ``exact``, prefix keys for ``join``. ``max_df`` and ``boilerplate_df`` are off (an index
    has no corpus), as in the service."""

    def __init__(self, method: str = "minhash", **params: Any) -> None:
        self._index = _neardup.Index(method, _method_params(method, None, params))
        self._ids: list = []

    @property
    def method(self) -> str:
        return self._index.method

    def __len__(self) -> int:
        return len(self._index)

    def insert(self, texts: Any, ids: Any = None, threads: int = 0) -> None:
        """Adds ``texts`` with their ``ids`` (default: their positions in the index, from 0)."""
        import pyarrow as pa

        chunks = _chunks(texts, "texts")
        count = sum(len(c) for c in chunks)
        first = len(self._index)
        if ids is None:
            ids = pa.array(range(first, first + count), type=pa.int64())
        ids = _ids(ids, count)
        if self._ids and ids.type != self._ids[0].type:
            raise _invalid("ids", f"{ids.type}, but the index holds ids of {self._ids[0].type}")
        _count(threads, "threads", 0)
        self._index.insert(chunks, threads)
        self._ids.append(ids)

    def _all_ids(self):
        import pyarrow as pa

        if not self._ids:
            return pa.array([], type=pa.int64())
        if len(self._ids) > 1:
            self._ids = [pa.concat_arrays(self._ids)]
        return self._ids[0]

    def query(self, texts: Any, limit: int = 10, threads: int = 0):
        """The stored documents each text matches, best first, at most ``limit`` per text: a
        pyarrow Table of ``query`` (the text's position), ``id``, ``similarity`` and
        ``distance`` (Hamming, for ``simhash``)."""
        import pyarrow as pa

        _count(limit, "limit", 0)
        _count(threads, "threads", 0)
        batch = self._index.query(_chunks(texts, "texts"), limit, threads)
        return pa.table({
            "query": batch.column("query"),
            "id": self._all_ids().take(batch.column("number")),
            "similarity": batch.column("similarity"),
            "distance": batch.column("distance"),
        })

    def save(self, path: str) -> None:
        """Writes the index and its ids to ``path`` (complete or not at all)."""
        import pyarrow as pa

        ids = self._all_ids()
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, pa.schema([("id", ids.type)])) as writer:
            writer.write_batch(pa.record_batch([ids], names=["id"]))
        self._index.save(str(path), sink.getvalue().to_pybytes())

    @classmethod
    def load(cls, path: str) -> Index:
        """Reads an index written by :meth:`save`."""
        import pyarrow as pa

        inner, extra = _neardup.Index.load(str(path))
        reader = pa.ipc.open_stream(pa.py_buffer(extra))
        ids = reader.read_all().column("id").combine_chunks()
        if len(ids) != len(inner):
            raise OSError(f"{path}: {len(ids)} ids for {len(inner)} documents")
        index = cls.__new__(cls)
        index._index = inner
        index._ids = [ids] if len(ids) else []
        return index


class LshIndex(Index):
    """:class:`Index` of the ``minhash`` method (MinHash-LSH bands, verified)."""

    def __init__(self, **params: Any) -> None:
        super().__init__("minhash", **params)


class HammingIndex(Index):
    """:class:`Index` of the ``simhash`` method (Hamming tables, verified)."""

    def __init__(self, **params: Any) -> None:
        super().__init__("simhash", **params)
