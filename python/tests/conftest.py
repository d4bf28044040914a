"""Shared fixtures: the command line binary (the contract the package is compared with), a
small corpus with known near-duplicates, and a local Spark session."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _shared_data() -> Path:
    """The shared data folder: $NEARDUP_DATA (as the bench programs read it), else
    ../shared/data beside the repository. An empty variable counts as unset."""
    given = os.environ.get("NEARDUP_DATA")
    return Path(given) if given else REPO.parent / "shared" / "data"


SHARED = _shared_data()


def data_required() -> bool:
    """NEARDUP_REQUIRE_DATA=1 (CI): a test missing the shared data fails instead of skipping."""
    return os.environ.get("NEARDUP_REQUIRE_DATA") == "1"


def _cli_path() -> Path | None:
    given = os.environ.get("NEARDUP_BIN")
    if given:
        return Path(given)
    for profile in ("release", "debug"):
        candidate = REPO / "target" / profile / "neardup"
        if candidate.exists():
            return candidate
    return None


@pytest.fixture(scope="session")
def cli() -> Path:
    """The `neardup` binary (NEARDUP_BIN, else target/release or target/debug). Missing, the
    comparisons are skipped, unless NEARDUP_REQUIRE_CLI=1 (CI), where they fail."""
    path = _cli_path()
    if path is None or not path.exists():
        if os.environ.get("NEARDUP_REQUIRE_CLI") == "1":
            pytest.fail(f"no neardup binary (NEARDUP_BIN={os.environ.get('NEARDUP_BIN')})")
        pytest.skip("no neardup binary: build it (cargo build -p neardup-cli) or set NEARDUP_BIN")
    return path


def run_cli(cli: Path, tmp_path: Path, rows: list[dict], *options: str) -> dict:
    """`neardup dedup` over `rows` (written in order, as JSONL with `id` and `text`): the
    clusters file as {id: (cluster, duplicate_of, similarity)}."""
    source = tmp_path / "input.jsonl"
    with source.open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps({"id": row["id"], "text": row["text"]}, ensure_ascii=False) + "\n")
    clusters = tmp_path / "clusters.jsonl"
    command = [str(cli), "dedup", str(source), "-o", str(tmp_path / "kept.jsonl"),
               "--clusters", str(clusters), "--id-field", "id", "--quiet", *options]
    subprocess.run(command, check=True)
    result = {}
    for line in clusters.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        result[row["id"]] = (row["cluster"], row["duplicate_of"], row["similarity"])
    return result


def as_result(table) -> dict:
    """A dedup table (pyarrow, or rows of a Spark DataFrame) as {id: (cluster, duplicate_of,
    similarity)}."""
    if hasattr(table, "to_pydict"):
        d = table.to_pydict()
        return {i: (c, p, s) for i, c, p, s in
                zip(d["id"], d["cluster"], d["duplicate_of"], d["similarity"])}
    return {r["id"]: (r["cluster"], r["duplicate_of"], r["similarity"]) for r in table}


def _edit(text: str, rng: random.Random) -> str:
    """A light edit: punctuation and full-width changes, a character dropped or replaced,
    a tail appended."""
    chars = list(text)
    for _ in range(rng.randint(1, 3)):
        kind = rng.randrange(4)
        at = rng.randrange(len(chars)) if chars else 0
        if kind == 0 and chars:
            del chars[at]
        elif kind == 1 and chars:
            chars[at] = rng.choice("的了是在和，。！")
        elif kind == 2:
            chars.insert(at, rng.choice("，,、 !！"))
        else:
            chars.extend(rng.choice(["（来源：新华网）", " 责任编辑：王", "【转载】"]))
    return "".join(chars)


@pytest.fixture(scope="session")
def corpus() -> list[dict]:
    """About 1,600 documents sorted by id, the order Spark ranks them by: the shipped news
    example, Reuters bodies (English, with the corpus's own repeats and updates) and THUCNews
    titles with light edits. Without the shared data, the news example alone (227 documents,
    about 40 near-duplicates), unless NEARDUP_REQUIRE_DATA=1, where it fails."""
    rows = []
    for line in (REPO / "examples" / "news.jsonl").read_text(encoding="utf-8").splitlines():
        rows.append({"id": f"news-{json.loads(line)['id']}", "text": json.loads(line)["text"]})
    reuters = SHARED / "reuters21578" / "bodies.jsonl"
    titles = SHARED / "thucnews-titles" / "titles.jsonl"
    if reuters.exists() and titles.exists():
        rows += _reuters_bodies(reuters) + _edited_titles(titles)
    elif data_required():
        pytest.fail(f"missing {reuters} or {titles} (set NEARDUP_DATA to the shared data folder)")
    rows.sort(key=lambda r: r["id"])
    return rows


def _reuters_bodies(path: Path, count: int = 600) -> list[dict]:
    """The first `count` Reuters bodies."""
    rows = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines):
            if number >= count:
                break
            row = json.loads(line)
            rows.append({"id": f"reuters-{row['id']}", "text": row["text"]})
    return rows


def _edited_titles(path: Path, count: int = 500) -> list[dict]:
    """The first `count` THUCNews titles, each repeated three times to make a text, with
    light edits (`-edit`) of some and exact copies (`-copy`) of fewer."""
    rng = random.Random(12)
    rows = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines):
            if number >= count:
                break
            row = json.loads(line)
            long_text = row["text"] * 3
            rows.append({"id": f"title-{row['id']}", "text": long_text})
            if rng.random() < 0.4:
                rows.append({"id": f"title-{row['id']}-edit", "text": _edit(long_text, rng)})
            if rng.random() < 0.1:
                rows.append({"id": f"title-{row['id']}-copy", "text": long_text})
    return rows


@pytest.fixture(scope="session")
def spark():
    """A local[2] Spark session (PySpark from PyPI, Java 17). The workers run this
    interpreter, where the package is installed."""
    pytest.importorskip("pyspark")
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("neardup-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.driver.memory", "4g")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(autouse=True)
def _release_cached_frames(request):
    """After each test that used Spark, the frames it left cached are released: `dedup`
    returns a persisted result that the tests collect and drop, and a hundred of them held
    in one session ran a later aggregation out of memory (AGGREGATE_OUT_OF_MEMORY)."""
    yield
    if "spark" in request.fixturenames:
        request.getfixturevalue("spark").catalog.clearCache()
