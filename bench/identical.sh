#!/usr/bin/env bash
# Checks that two neardup binaries write byte-identical clusters and kept files on
# examples/news.jsonl and every corpus of ../shared/data, at the defaults (and with
# --method exact and --cluster connected), e.g. before and after a refactoring:
#
#   bash bench/identical.sh OLD_BINARY NEW_BINARY
#
# Prints one line per run and exits 1 on the first difference.
set -euo pipefail
cd "$(dirname "$0")/.."
old=$1
new=$2
data=../shared/data
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

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
settings=("" "--method exact" "--cluster connected" "--threshold 0.7 --measure containment")
checked=0
for run in "${runs[@]}"; do
  for setting in "${settings[@]}"; do
    for binary in old new; do
      bin=${!binary}
      # shellcheck disable=SC2086
      "$bin" dedup $run $setting -q -o "$work/$binary.kept" --clusters "$work/$binary.clusters" \
        --format "$(case $run in *.txt*) echo text;; *) echo jsonl;; esac)"
    done
    for file in kept clusters; do
      if ! cmp -s "$work/old.$file" "$work/new.$file"; then
        echo "DIFFERENT $file: dedup $run $setting" >&2
        exit 1
      fi
    done
    checked=$((checked + 1))
    echo "identical ($(wc -l < "$work/new.clusters") rows): dedup ${run//$data\//} $setting"
  done
done
echo "all $checked runs identical"
