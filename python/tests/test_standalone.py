"""A two-worker standalone cluster on 127.0.0.1, started by python/spark/standalone.sh, runs
python/spark/dedup_job.py through spark-submit with the wheel shipped to the executors in a
packed environment (venv-pack, spark.archives), as users run it; its clusters equal the
command line's.

Needs the wheel (NEARDUP_WHEEL), venv-pack and Java; skipped without them unless
NEARDUP_REQUIRE_STANDALONE=1 (CI), where it fails instead."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, as_result, run_cli

NO_CORPUS: list = []  # the Spark path learns from its corpus as the command line does


def _missing() -> str | None:
    wheel = os.environ.get("NEARDUP_WHEEL")
    if not wheel or not Path(wheel).exists():
        return f"no wheel (NEARDUP_WHEEL={wheel})"
    if shutil.which("java") is None:
        return "no java"
    try:
        import pyspark  # noqa: F401
        import venv_pack  # noqa: F401
    except ImportError as error:
        return str(error)
    return None


@pytest.fixture(scope="module")
def packed_env(tmp_path_factory) -> Path:
    missing = _missing()
    if missing:
        if os.environ.get("NEARDUP_REQUIRE_STANDALONE") == "1":
            pytest.fail(f"the standalone-cluster test cannot run: {missing}")
        pytest.skip(missing)
    root = tmp_path_factory.mktemp("packed")
    env = root / "env"
    subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
    subprocess.run([str(env / "bin" / "pip"), "install", "--quiet", os.environ["NEARDUP_WHEEL"],
                    "pyarrow", "pandas<3"], check=True)
    archive = root / "env.tar.gz"
    subprocess.run([sys.executable, "-m", "venv_pack", "--prefix", str(env), "--output",
                    str(archive), "--quiet"], check=True)
    return archive


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    logs = tmp_path_factory.mktemp("standalone")
    script = REPO / "python" / "spark" / "standalone.sh"
    env = dict(os.environ, PYTHON=sys.executable, WORKER_MEMORY="1500m")
    started = subprocess.run([str(script), "start", str(logs), "7087"], check=True, env=env,
                             capture_output=True, text=True)
    try:
        yield started.stdout.strip().splitlines()[-1]
    finally:
        subprocess.run([str(script), "stop", str(logs)], check=False, env=env)


def test_two_workers_equal_the_command_line(packed_env, cluster, cli, tmp_path, corpus):
    import pyarrow.parquet as pq
    import pyspark

    source = tmp_path / "corpus.jsonl"
    with source.open("w", encoding="utf-8") as out:
        for row in corpus:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    expected = run_cli(cli, tmp_path, corpus, *NO_CORPUS)
    spark_submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    output = tmp_path / "clusters"
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_DRIVER_PYTHON=sys.executable,
               PYSPARK_PYTHON="./environment/bin/python")
    env.pop("PYTHONPATH", None)  # the executors see only the packed environment
    done = subprocess.run(
        [str(spark_submit), "--master", cluster,
         "--archives", f"{packed_env}#environment",
         "--conf", "spark.pyspark.python=./environment/bin/python",
         "--conf", f"spark.pyspark.driver.python={sys.executable}",
         "--conf", "spark.executor.memory=1g",
         "--conf", "spark.sql.shuffle.partitions=4",
         "--conf", "spark.ui.enabled=false",
         str(REPO / "python" / "spark" / "dedup_job.py"), str(source), str(output),
         "--schema", "id string, text string", "--small-input-rows", "0"],
        env=env, capture_output=True, text=True, timeout=900,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["master"] == cluster and summary["documents"] == len(corpus)
    got = as_result(pq.read_table(output).to_pylist())
    assert got == expected
