"""neardup from Python (issue 12 groundwork): `dedup` over a list, a pyarrow Array or a
pandas Series, returning a pyarrow Table with id, cluster, duplicate_of, similarity, keep."""

from __future__ import annotations

from ._neardup import dedup_columns, methods

__all__ = ["dedup", "methods"]


def _texts(texts):
    try:
        import pyarrow as pa
        if isinstance(texts, (pa.Array, pa.ChunkedArray)):
            return texts.to_pylist()
    except ImportError:  # pragma: no cover
        pass
    if hasattr(texts, "to_list"):  # pandas or polars Series
        return texts.to_list()
    return list(texts)


def dedup(texts, ids=None, method="minhash", threshold=None, **options):
    """Deduplicate `texts`; returns a pyarrow Table (id, cluster, duplicate_of, similarity, keep)."""
    import pyarrow as pa

    texts = ["" if t is None else str(t) for t in _texts(texts)]
    ids = list(range(1, len(texts) + 1)) if ids is None else _texts(ids)
    if len(ids) != len(texts):
        raise ValueError(f"ids: {len(ids)} ids for {len(texts)} texts")
    if threshold is not None:
        options["threshold"] = threshold
    cluster, duplicate_of, similarity = dedup_columns(texts, method, options)
    return pa.table({
        "id": ids,
        "cluster": [ids[c] for c in cluster],
        "duplicate_of": [None if d < 0 else ids[d] for d in duplicate_of],
        "similarity": [None if s != s else s for s in similarity],
        "keep": [d < 0 for d in duplicate_of],
    })
