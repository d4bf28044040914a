#!/usr/bin/env bash
# Checks that two neardup binaries write byte-identical kept, clusters and pairs files on
# examples/news.jsonl and every corpus of ../shared/data, e.g. before and after a
# refactoring:
#
#   bash bench/identical.sh OLD_BINARY NEW_BINARY
#
# On each corpus it runs:
# - every method both binaries list (`dedup --help`, the values of `--method`) at its
#   defaults;
# - the default method with `--method exact`, `--cluster connected` and
#   `--threshold 0.7 --measure containment`;
# - `fingerprint`, then `hamming` (pairs, and pairs with `--groups`) on the fingerprints;
# and on examples/news.jsonl every method with each of those settings.
#
# A combination the old binary refuses (an option the method does not take) must be refused
# by the new one with the same message, and is skipped. A run of the old binary that takes
# longer than IDENTICAL_TIMEOUT seconds (default 60; `ngram`, an index for short texts, on
# long documents) is skipped, and said so. Release binaries take about 6 minutes on 2 cores.
#
# Prints one line per run and exits 1 on the first difference.
set -euo pipefail
cd "$(dirname "$0")/.."
old=$1
new=$2
data=../shared/data
limit=${IDENTICAL_TIMEOUT:-60}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The values of `dedup --method` that a binary lists, one per line.
methods_of() {
  "$1" dedup --help | tr '\n' ' ' | sed -n 's/.*--method <METHOD>[^[]*\(\[[^]]*\] *\)*\[possible values: \([^]]*\)\].*/\2/p' |
    tr -d ',' | tr ' ' '\n' | sed '/^$/d'
}
mapfile -t old_methods < <(methods_of "$old")
mapfile -t new_methods < <(methods_of "$new")
methods=()
for method in "${new_methods[@]}"; do
  if printf '%s\n' "${old_methods[@]}" | grep -qx "$method"; then
    methods+=("$method")
  else
    echo "only the new binary lists method $method: not compared"
  fi
done
if [ ${#methods[@]} -eq 0 ]; then
  echo "no method listed by both binaries (dedup --help)" >&2
  exit 1
fi
echo "methods: ${methods[*]}"

runs=(
  "examples/news.jsonl --id-field id"
  "$data/clough-stevenson-plagiarism/docs.jsonl"
  "$data/sohu-news-pairs/dd-test.jsonl --text-field sentence1"
  "$data/sohu-news-pairs/dd-test.jsonl --text-field sentence2"
  "$data/sohu-news-pairs/dc-test.jsonl --text-field sentence2"
  "$data/thucnews-titles/titles.jsonl --id-field id"
  "$data/reuters21578/bodies.jsonl --id-field id"
  "$(ls $data/textreuse-ats/*.txt | tr '\n' ' ')"
)
settings=("--method exact" "--cluster connected" "--threshold 0.7 --measure containment")
checked=0
skipped=0

# Runs `neardup ARGS...` with both binaries (the old one first, under the time limit) and
# compares the files named in $files; prints what it did.
compare() {
  local label=$1
  shift
  rm -f "$work"/old.* "$work"/new.*
  local status=0
  timeout "$limit" "$old" "$@" 2>"$work/old.err" || status=$?
  local old_args=("$@")
  if [ $status -eq 124 ]; then
    echo "skipped (the old binary took over ${limit}s): $label"
    skipped=$((skipped + 1))
    return
  fi
  local new_status=0
  "$new" "${old_args[@]//old./new.}" 2>"$work/new.err" || new_status=$?
  if [ $status -ne 0 ] || [ $new_status -ne 0 ]; then
    sed "s#$old#BINARY#g; s#old\.#FILE.#g" "$work/old.err" >"$work/old.msg"
    sed "s#$new#BINARY#g; s#new\.#FILE.#g" "$work/new.err" >"$work/new.msg"
    if [ $status -ne 0 ] && [ $new_status -ne 0 ] && cmp -s "$work/old.msg" "$work/new.msg"; then
      echo "refused by both ($(head -c 100 "$work/old.msg" | tr '\n' ' ')...): $label"
      skipped=$((skipped + 1))
      return
    fi
    echo "DIFFERENT exit ($status, $new_status) or message: $label" >&2
    diff "$work/old.msg" "$work/new.msg" >&2 || true
    exit 1
  fi
  for file in $files; do
    if ! cmp -s "$work/old.$file" "$work/new.$file"; then
      echo "DIFFERENT $file: $label" >&2
      exit 1
    fi
  done
  checked=$((checked + 1))
  echo "identical ($(wc -l <"$work/new.${files%% *}") rows): $label"
}

dedup() {
  local run=$1 setting=$2
  local format
  format=$(case $run in *.txt*) echo text ;; *) echo jsonl ;; esac)
  files="clusters pairs kept"
  # shellcheck disable=SC2086
  compare "dedup ${run//$data\//} $setting" dedup $run $setting -q --format "$format" \
    -o "$work/old.kept" --clusters "$work/old.clusters" --pairs "$work/old.pairs"
}

for run in "${runs[@]}"; do
  for method in "${methods[@]}"; do
    dedup "$run" "--method $method"
  done
  for setting in "${settings[@]}"; do
    dedup "$run" "$setting"
  done
  if [ "$run" = "${runs[0]}" ]; then
    for method in "${methods[@]}"; do
      for setting in "--cluster connected" "--threshold 0.7 --measure containment"; do
        dedup "$run" "--method $method $setting"
      done
    done
  fi
  format=$(case $run in *.txt*) echo text ;; *) echo jsonl ;; esac)
  files="fingerprints"
  # shellcheck disable=SC2086
  compare "fingerprint ${run//$data\//}" fingerprint $run -q --format "$format" \
    -o "$work/old.fingerprints"
  cp "$work/new.fingerprints" "$work/fingerprints"
  files="pairs"
  compare "hamming --max-distance 3: ${run//$data\//}" hamming "$work/fingerprints" \
    --max-distance 3 -q -o "$work/old.pairs"
  files="pairs groups"
  compare "hamming --max-distance 3 --groups: ${run//$data\//}" hamming "$work/fingerprints" \
    --max-distance 3 -q -o "$work/old.pairs" --groups "$work/old.groups"
done
echo "all $checked runs identical ($skipped skipped)"
