#!/usr/bin/env bash
# Template-flood benchmark (issue 6): wall time and peak RSS of `neardup dedup` on N
# one-line documents "document number {i} about topic {i % 1000} with words", the shape of
# verification codes and notices, where almost every pair is a near-duplicate.
#
#   bash bench/flood.sh [--bin PATH] [--sizes "10000 100000 1000000"] [--reps N]
#                       [--mem-gb G] [--timeout S] [--label NAME] [-- EXTRA DEDUP ARGS]
#
# Generates bench/out/flood/flood_N.jsonl if missing. Runs `BIN dedup` REPS times per size
# (default 3) under a memory cap (`prlimit --as`, default 8 GB) and a timeout (default
# 120 s), so that a quadratic binary fails instead of eating the machine. Each run is
# measured with `/usr/bin/time -f '%e %M'`; the median run by wall time is reported, one
# Markdown table row per size on stdout: documents, input MB, seconds, peak RSS MB,
# candidate pairs, budget hits, kept (the last three from --stats; "-" when the binary does
# not report them). A failed run reads "killed at the G GB cap after S s" or "timed out after
# S s".
# BIN defaults to target/release/neardup (no build is done).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/bench/out/flood
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release/neardup
SIZES="10000 100000 1000000"
REPS=3
MEM_GB=8
TIMEOUT=120
LABEL=""
EXTRA=()

while [ $# -gt 0 ]; do
  case "$1" in
    --bin) BIN=$2; shift 2 ;;
    --sizes) SIZES=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --mem-gb) MEM_GB=$2; shift 2 ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    --label) LABEL=$2; shift 2 ;;
    --) shift; EXTRA=("$@"); break ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

# shellcheck source=bench/common.sh
. "$ROOT/bench/common.sh"
[ -x "$BIN" ] || { echo "no binary at $BIN (give --bin)" >&2; exit 1; }
LABEL=${LABEL:-$BIN}
mkdir -p "$OUT"

# flood_corpus N: the path of the N-document flood, generated once.
flood_corpus() {
  local path=$OUT/flood_$1.jsonl
  if [ ! -s "$path" ]; then
    log "generating $path"
    awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++)
      printf "{\"id\": %d, \"text\": \"document number %d about topic %d with words\"}\n", i, i, i % 1000 }' \
      >"$path.tmp"
    mv "$path.tmp" "$path"
  fi
  echo "$path"
}

# run_once CORPUS DIR: one measured run; prints "seconds rss_kb", or "killed SECONDS" /
# "timeout" for a run that hit the memory cap (allocation failure) or the timeout.
run_once() {
  local corpus=$1 dir=$2 status=0 started
  rm -f "$dir/stats.json"
  started=$(date +%s.%N)
  prlimit --as=$((MEM_GB << 30)) -- timeout "$TIMEOUT" \
    /usr/bin/time -o "$dir/time" -f '%e %M' \
    "$BIN" dedup "$corpus" -o "$dir/out.jsonl" --stats "$dir/stats.json" --quiet "${EXTRA[@]}" \
    2>"$dir/stderr" || status=$?
  if [ "$status" = 124 ]; then echo timeout
  elif [ "$status" != 0 ]; then echo "killed $(awk -v s="$started" -v e="$(date +%s.%N)" 'BEGIN { printf "%.0f", e - s }')"
  else cat "$dir/time"
  fi
}

# stat_field DIR NAME: a number from the run's stats, or "-".
stat_field() {
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get(sys.argv[2], "-"))' \
    "$1/stats.json" "$2" 2>/dev/null || echo -
}

echo "| binary | documents | input MB | seconds | peak RSS MB | candidate pairs | budget hits | kept |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for n in $SIZES; do
  corpus=$(flood_corpus "$n")
  mb=$(awk -v b="$(stat -c %s "$corpus")" 'BEGIN { printf "%.1f", b / 1e6 }')
  dir=$(mktemp -d "$OUT/run.XXXXXX")
  results=()
  failure=""
  for _ in $(seq "$REPS"); do
    log "$LABEL: $n documents"
    result=$(run_once "$corpus" "$dir")
    case "$result" in
      killed*) failure="killed at the $MEM_GB GB cap after ${result#killed } s ($(grep -m1 -o 'memory allocation of [0-9]* bytes failed' "$dir/stderr" || head -c 100 "$dir/stderr"))"; break ;;
      timeout) failure="timed out after $TIMEOUT s"; break ;;
      *) results+=("$result") ;;
    esac
  done
  if [ -n "$failure" ]; then
    echo "| $LABEL | $n | $mb | $failure | | | | |"
  else
    # The median run by wall time (the stats are those of the last run: counts are
    # deterministic).
    median=$(printf '%s\n' "${results[@]}" | sort -n | sed -n "$(((${#results[@]} + 1) / 2))p")
    read -r seconds rss_kb <<<"$median"
    echo "| $LABEL | $n | $mb | $seconds | $((rss_kb / 1024)) | $(stat_field "$dir" candidate_pairs) | $(stat_field "$dir" budget_hits) | $(stat_field "$dir" kept) |"
  fi
  rm -rf "$dir"
done
