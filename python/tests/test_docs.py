"""docs/python.md as a test: every Python example on the page runs and prints what the page
shows under it."""

from __future__ import annotations

import doctest
import json
import re

import pytest

from conftest import REPO

PAGE = REPO / "docs" / "python.md"

#: Long outputs (a table as a dict, an error listing every parameter) are wrapped or cut with
#: `...` on the page.
FLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS


class MarkdownParser(doctest.DocTestParser):
    """The examples of the page's ```pycon blocks only. Every other line, fences included, is
    read as blank: a closing fence ends the last output, and a failure names its page line."""

    def parse(self, string, name="<string>"):
        lines, inside = [], False
        for line in string.splitlines():
            fence = line.startswith("```")
            if fence:
                inside = line == "```pycon"
            lines.append(line if inside and not fence else "")
        return super().parse("\n".join(lines) + "\n", name)


@pytest.fixture
def crawl(tmp_path, monkeypatch):
    """A temporary working directory holding `crawl/`, the page's Parquet dataset: the shipped
    news example with a `url` per document. The examples write their files there too."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    lines = (REPO / "examples" / "news.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines]
    table = pa.table({"url": [f"https://news.example.com/{r['id']}" for r in rows],
                      "text": [r["text"] for r in rows]})
    (tmp_path / "crawl").mkdir()
    pq.write_table(table, tmp_path / "crawl" / "part-0.parquet")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def spark_in_crawl(spark, crawl):
    """The test session, its local file system's working directory moved to `crawl`'s for the
    test (the JVM's stays where it started), so that Spark reads and writes relative paths
    where Python does."""
    hadoop = spark._jvm.org.apache.hadoop.fs
    local = hadoop.FileSystem.getLocal(spark._jsc.hadoopConfiguration())
    before = local.getWorkingDirectory()
    local.setWorkingDirectory(hadoop.Path(str(crawl)))
    try:
        yield spark
    finally:
        local.setWorkingDirectory(before)


def test_the_python_page_prints_what_it_shows(spark_in_crawl):
    """Every ```pycon example of docs/python.md runs, in page order in one namespace (`spark`
    is the test session), and prints exactly the output shown under it."""
    result = doctest.testfile(str(PAGE), module_relative=False, globs={"spark": spark_in_crawl},
                              parser=MarkdownParser(), optionflags=FLAGS)
    assert result.attempted > 30, f"only {result.attempted} examples found in {PAGE}"
    assert result.failed == 0, (f"{result.failed} of {result.attempted} examples of {PAGE} "
                                "print something else: see the captured output")


def test_every_python_example_is_run():
    """The page's code blocks are ```pycon, run above, or ```sh (installing, submitting to a
    cluster), which are not: no Python example escapes the test."""
    text = PAGE.read_text(encoding="utf-8")
    assert set(re.findall(r"^```(\S+)", text, re.M)) <= {"pycon", "sh"}
    for block in re.findall(r"^```sh\n(.*?)^```$", text, re.M | re.S):
        assert ">>>" not in block and "import neardup" not in block, block
