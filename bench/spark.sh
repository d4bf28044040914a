#!/usr/bin/env bash
# The Python package and Spark vs the command line on Chinese synth corpora of about 100 MB and
# 1 GB (bench/neardup_bench/spark.py; results in bench/out/spark/results.md and .json).
#
#   bench/spark.sh [--sizes 100,1000] [--runs 3,1] [--tools cli,python-arrow,...] [--report-only]
#
# Uses target/python-venv with the wheel and PySpark (made by scripts/test: run it first) and
# the release binary (built here). Do not build or test anything else meanwhile: 2 cores.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${NEARDUP_TEST_VENV:-$root/target/python-venv}
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import neardup, pyspark' 2>/dev/null; then
  echo "error: $venv has no neardup or pyspark: run scripts/test first" >&2
  exit 1
fi
bin=${NEARDUP_BIN:-}
if [ -z "$bin" ]; then
  cargo build --release --quiet -p neardup-cli --manifest-path "$root/Cargo.toml"
  bin=$root/target/release/neardup
fi
cd "$root/bench"
exec env PYTHONPATH="$root/bench" SPARK_LOCAL_IP=127.0.0.1 "$venv/bin/python" -m neardup_bench.spark --bin "$bin" "$@"
