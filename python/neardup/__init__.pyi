from collections.abc import Iterable
from typing import Any

import pyarrow as pa

def methods() -> list[str]: ...
def dedup(
    texts: Iterable[str] | pa.Array | pa.ChunkedArray | Any,
    ids: Iterable[Any] | None = None,
    method: str = "minhash",
    threshold: float | None = None,
    **options: Any,
) -> pa.Table: ...
