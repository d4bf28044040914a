#!/usr/bin/env bash
# The threshold sweep behind the defaults of `join` and `ngram` (docs/evaluation.md, "Short
# texts"): `neardup synth` edits of the 20,000 THUCNews headlines (seed 1, its default
# edits), then join, ngram and minhash (character bigrams, as join's default shingles) at
# equal thresholds, each clusters file scored by `neardup eval`. Prints one line per run:
# method, measure, threshold, precision, recall, F1, seconds.
#
#   bash bench/short_sweep.sh [NEARDUP_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/neardup}
data=${NEARDUP_DATA:-../shared/data}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$bin" synth "$data/thucnews-titles/titles.jsonl" -o "$work/corpus.jsonl" --truth "$work/truth.jsonl" \
  --id-field id --seed 1 -q
echo "method measure threshold precision recall f1 seconds"
for run in "join jaccard" "join edit" "ngram jaccard" "ngram edit" "minhash jaccard"; do
  set -- $run
  for t in 0.4 0.5 0.6 0.7 0.8 0.9; do
    if [ "$2" = edit ] && [ "$t" = 0.4 ]; then continue; fi  # refused: below 0.5
    extra=()
    if [ "$1" = minhash ]; then extra=(--ngram 2); else extra=(--measure "$2"); fi
    "$bin" dedup "$work/corpus.jsonl" -o "$work/kept.jsonl" --clusters "$work/clusters.jsonl" \
      --stats "$work/stats.json" --id-field id -q --method "$1" --threshold "$t" "${extra[@]}"
    scores=$("$bin" eval --truth "$work/truth.jsonl" --predicted "$work/clusters.jsonl" --json |
      python3 -c 'import json,sys; d=json.load(sys.stdin); print("%.3f %.3f %.3f" % (d["precision"], d["recall"], d["f1"]))')
    seconds=$(python3 -c 'import json,sys; print("%.2f" % json.load(open(sys.argv[1]))["seconds"]["total"])' "$work/stats.json")
    echo "$1 $2 $t $scores $seconds"
  done
done
