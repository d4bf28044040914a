#!/usr/bin/env bash
# Quality against peers: neardup's methods vs datasketch, rensa, gaoya, simhash and
# text-dedup on shared data and on `neardup synth` corpora built from it.
#
#   bash bench/quality.sh [--reps N] [--td-reps N] [--zh-titles-limit N] [--en-limit N]
#                         [--corpora "zh-titles zh-news en-news sohu-dd clough"] [--tools "..."]
#
# One run does everything: builds neardup (cargo build --release -p neardup-cli), makes
# the Python environments (bench/out/venv-quality with Python 3.11; text-dedup 0.4.1 needs
# Python 3.12+, so a second one, bench/out/venv-quality-py312, if a python3.12 exists), builds
# the corpora into bench/out/quality/corpora, runs every tool on every corpus under
# bench/measure.py (wall time, peak RSS), scores every clusters file with `neardup eval`,
# and writes bench/out/quality/results.md (+ results.json); the same text replaces or is
# appended as the section "## Quality against peers (P, R, F1, ARI)" of BENCHMARKS.md.
# Wall time and peak RSS are medians over --reps runs (default 3; text-dedup, 10-30 s a run,
# gets --td-reps, default 1, to keep the script near 20 minutes); the clusters must be
# identical in every run (the report says so).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/bench/out/quality
REPS=3
TD_REPS=1
ZH_TITLES_LIMIT=20000
EN_LIMIT=5000
CORPORA="zh-titles zh-news en-news sohu-dd clough"
TOOLS="neardup-minhash neardup-connected neardup-containment neardup-exact neardup-peer-settings datasketch rensa gaoya simhash text-dedup text-dedup-verified datasketch-auto rensa-auto"
THRESHOLD=0.7
NGRAM=5
PERMS=128
ARGS_GIVEN="$*"

while [ $# -gt 0 ]; do
  case "$1" in
    --reps) REPS=$2; shift 2 ;;
    --td-reps) TD_REPS=$2; shift 2 ;;
    --zh-titles-limit) ZH_TITLES_LIMIT=$2; shift 2 ;;
    --en-limit) EN_LIMIT=$2; shift 2 ;;
    --corpora) CORPORA=$2; shift 2 ;;
    --tools) TOOLS=$2; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

# shellcheck source=bench/common.sh
. "$ROOT/bench/common.sh"
find_data

T_ALL=$(date +%s)
rm -rf "$OUT"
mkdir -p "$OUT/corpora" "$OUT/runs" "$OUT/env"
exec 2> >(tee "$OUT/run.log" >&2)

# ---------------------------------------------------------------- build
log "cargo build --release -p neardup-cli (waits if another build holds the lock)"
cargo build --release -p neardup-cli
# A private copy, so a rebuild by someone else during the run cannot change the binary.
cp "$ROOT/target/release/neardup" "$OUT/env/neardup"
N=$OUT/env/neardup

# ---------------------------------------------------------------- Python environments
PYBASE=${PYTHON311:-python3}
VQ=$ROOT/bench/out/venv-quality
if [ ! -x "$VQ/bin/python" ]; then
  log "creating $VQ"
  "$PYBASE" -m venv "$VQ"
fi
PYQ=$VQ/bin/python
log "pip install into $VQ"
"$PYQ" -m pip install -q --disable-pip-version-check \
  datasketch==2.0.0 rensa==0.5.0 numpy==2.4.6 scipy==1.17.1 gaoya==0.2.2 simhash==2.1.2 \
  > "$OUT/env/pip-py311.log" 2>&1 || { cat "$OUT/env/pip-py311.log" >&2; exit 1; }

# text-dedup 0.4.1 on this Python (expected to be refused: it declares Requires-Python >=3.12).
log "text-dedup 0.4.1 on $("$PYQ" --version)"
if "$PYQ" -m pip install --dry-run --no-deps --disable-pip-version-check text-dedup==0.4.1 \
     > "$OUT/env/textdedup-py311.log" 2>&1; then
  echo "installable" > "$OUT/env/textdedup-py311.status"
else
  echo "refused" > "$OUT/env/textdedup-py311.status"
fi

# A Python 3.12+ for text-dedup 0.4.1: $PYTHON312, python3.12 on PATH, or a pyenv build.
PY312_BASE=""
for c in "${PYTHON312:-}" python3.12 python3.13 \
         "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python3 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.13*/bin/python3; do
  [ -n "$c" ] || continue
  if "$c" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1; then
    PY312_BASE=$(command -v "$c"); break
  fi
done
TD_PY=""
: > "$OUT/env/textdedup-py312.log"
if [ -n "$PY312_BASE" ]; then
  VQ12=$ROOT/bench/out/venv-quality-py312
  if [ ! -x "$VQ12/bin/python" ]; then
    log "creating $VQ12 with $PY312_BASE"
    "$PY312_BASE" -m venv "$VQ12" >> "$OUT/env/textdedup-py312.log" 2>&1 || true
  fi
  if [ -x "$VQ12/bin/python" ] && "$VQ12/bin/python" -m pip install -q --disable-pip-version-check text-dedup==0.4.1 \
       >> "$OUT/env/textdedup-py312.log" 2>&1; then
    TD_PY=$VQ12/bin/python
    echo "ok $("$TD_PY" --version 2>&1) ($PY312_BASE)" > "$OUT/env/textdedup-py312.status"
    "$TD_PY" -m pip freeze --disable-pip-version-check > "$OUT/env/textdedup-py312.freeze" 2>/dev/null || true
  else
    echo "install failed ($PY312_BASE)" > "$OUT/env/textdedup-py312.status"
  fi
else
  echo "no Python 3.12+ found" > "$OUT/env/textdedup-py312.status"
fi
log "text-dedup: py3.11 $(cat "$OUT/env/textdedup-py311.status"); py3.12: $(cat "$OUT/env/textdedup-py312.status")"
"$PYQ" -m pip freeze --disable-pip-version-check > "$OUT/env/py311.freeze" 2>/dev/null || true

T_SETUP=$(( $(date +%s) - T_ALL ))

# ---------------------------------------------------------------- corpora
C=$OUT/corpora
# Synth assumes its sources are distinct, and real corpora are not (Reuters repeats its stories
# with small updates; headlines repeat). A source set with near-duplicates makes the truth call
# true duplicates false positives, so the sources are thinned first: the first LIMIT records,
# clustered by neardup with a deliberately loose rule (character 4-grams, Jaccard >= 0.3,
# union-find), and only the first record of each cluster is kept. The rule is far below any
# threshold scored here, so a pair of kept sources that a tool still merges is a real mistake.
distinct_sources() {  # distinct_sources NAME INPUT LIMIT -> $C/NAME/sources.jsonl
  local name=$1 input=$2 limit=$3
  mkdir -p "$C/$name"
  head -n "$limit" "$input" > "$C/$name/sources-all.jsonl"
  "$N" dedup "$C/$name/sources-all.jsonl" -o "$C/$name/sources.jsonl" --id-field id -q \
    --tokenizer char --ngram 4 --threshold 0.3 --cluster connected --stats "$C/$name/sources.stats.json"
  echo "$(wc -l < "$C/$name/sources-all.jsonl") $(wc -l < "$C/$name/sources.jsonl")" > "$C/$name/sources.count"
  log "distinct sources $name: $(cat "$C/$name/sources.count") (records, kept)"
}
synth() {  # synth NAME INPUT SEED [extra args]
  local name=$1 input=$2 seed=$3; shift 3
  mkdir -p "$C/$name"
  log "synth $name (seed $seed)"
  "$N" synth "$input" -o "$C/$name/corpus.jsonl" --truth "$C/$name/truth.jsonl" --seed "$seed" "$@" \
    2> "$C/$name/synth.log"
  echo "neardup synth $(basename "$input") --seed $seed $*" > "$C/$name/synth.cmd"
}
for name in $CORPORA; do
  case "$name" in
    zh-titles)
      distinct_sources zh-titles "$DATA/thucnews-titles/titles.jsonl" "$ZH_TITLES_LIMIT"
      synth zh-titles "$C/zh-titles/sources.jsonl" 101 --id-field id ;;
    zh-news)
      mkdir -p "$C/zh-news"
      "$PYQ" bench/quality_data.py sohu-dc-articles "$DATA/sohu-news-pairs/dc-test.jsonl" "$C/zh-news/source.jsonl"
      distinct_sources zh-news "$C/zh-news/source.jsonl" 1000000
      synth zh-news "$C/zh-news/sources.jsonl" 102 --id-field id ;;
    en-news)
      distinct_sources en-news "$DATA/reuters21578/bodies.jsonl" "$EN_LIMIT"
      synth en-news "$C/en-news/sources.jsonl" 103 --id-field id ;;
    sohu-dd)
      mkdir -p "$C/sohu-dd"
      "$PYQ" bench/quality_data.py sohu-dd-corpus "$DATA/sohu-news-pairs/dd-test.jsonl" "$C/sohu-dd/corpus.jsonl"
      cp "$DATA/sohu-news-pairs/dd-test.jsonl" "$C/sohu-dd/truth.jsonl" ;;
    clough)
      mkdir -p "$C/clough"
      "$PYQ" bench/quality_data.py clough "$DATA/clough-stevenson-plagiarism/docs.jsonl" \
        "$C/clough/corpus.jsonl" "$C/clough/truth.jsonl" ;;
    *) echo "unknown corpus $name" >&2; exit 2 ;;
  esac
done

# ---------------------------------------------------------------- runs
id_field() { [ "$1" = sohu-dd ] && echo "" || echo id; }
eval_args() { [ "$1" = sohu-dd ] && echo "--positive-label 5" || true; }

run_tool() {  # run_tool CORPUS TOOL DIR REP ; returns the tool's exit status
  local name=$1 tool=$2 d=$3 rep=$4 corpus=$C/$1/corpus.jsonl idf
  idf=$(id_field "$name")
  local idarg=()
  [ -n "$idf" ] && idarg=(--id-field "$idf")
  local m=$d/measure_rep$rep.json
  # neardup rows run at neardup's defaults (auto shingles: 3 characters on CJK, 5 elsewhere;
  # Jaccard 0.4), except neardup-peer-settings, which takes the peers' settings below.
  local common=(dedup "$corpus" -o "$d/kept.jsonl" --clusters "$d/clusters.jsonl" --stats "$d/stats.json"
                "${idarg[@]}" --permutations $PERMS --quiet --threads 2)
  case "$tool" in
    neardup-minhash)     "$PYQ" bench/measure.py "$m" -- "$N" "${common[@]}" --method minhash ;;
    neardup-connected)   "$PYQ" bench/measure.py "$m" -- "$N" "${common[@]}" --method minhash --cluster connected ;;
    neardup-containment) "$PYQ" bench/measure.py "$m" -- "$N" "${common[@]}" --method minhash --measure containment \
                           --threshold 0.7 ;;
    neardup-exact)       "$PYQ" bench/measure.py "$m" -- "$N" "${common[@]}" --method exact ;;
    neardup-peer-settings)
      "$PYQ" bench/measure.py "$m" -- "$N" "${common[@]}" --method minhash --tokenizer token \
        --ngram $NGRAM --threshold $THRESHOLD ;;
    datasketch|rensa|gaoya|simhash)
      "$PYQ" bench/measure.py "$m" -- "$PYQ" bench/quality_peers.py "$corpus" --tool "$tool" \
        --clusters "$d/clusters.jsonl" --id-field "$idf" --threshold $THRESHOLD --permutations $PERMS \
        --ngram $NGRAM --simhash-k 3 --info "$d/info.json" ;;
    datasketch-auto|rensa-auto)
      "$PYQ" bench/measure.py "$m" -- "$PYQ" bench/quality_peers.py "$corpus" --tool "${tool%-auto}" \
        --clusters "$d/clusters.jsonl" --id-field "$idf" --threshold 0.4 --permutations $PERMS \
        --shingles auto --ngram 3 --info "$d/info.json" ;;
    text-dedup|text-dedup-verified)
      [ -n "$TD_PY" ] || { echo "text-dedup not available" > "$d/SKIPPED"; return 0; }
      local wd=$d/work fp=()
      [ "$tool" = text-dedup-verified ] && fp=(--check-false-positive)
      rm -rf "$wd"
      "$TD_PY" bench/quality_textdedup.py prepare "$corpus" "$wd" "${fp[@]}" \
        --threshold $THRESHOLD --permutations $PERMS --ngram $NGRAM
      # a fresh Hugging Face cache per run (no reuse of an earlier run's Arrow files), offline
      (cd "$wd" && HF_HOME=$wd/hf HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 \
        "$PYQ" "$ROOT/bench/measure.py" "$m" -- "$TD_PY" -m text_dedup.minhash) > "$d/textdedup_rep$rep.log" 2>&1 ||
        { tail -20 "$d/textdedup_rep$rep.log" >&2; return 1; }
      HF_HOME=$wd/hf HF_DATASETS_OFFLINE=1 "$TD_PY" bench/quality_textdedup.py convert "$corpus" "$wd" \
        "$d/clusters.jsonl" "$d/info.json" --id-field "$idf"
      rm -rf "$wd/hf" "$wd/out"/*.arrow ;;
    *) echo "unknown tool $tool" >&2; return 2 ;;
  esac
}

for name in $CORPORA; do
  for tool in $TOOLS; do
    d=$OUT/runs/$name/$tool
    mkdir -p "$d"
    reps=$REPS
    case "$tool" in text-dedup*) reps=$TD_REPS ;; esac
    for rep in $(seq 1 "$reps"); do
      log "$name $tool rep$rep"
      if ! run_tool "$name" "$tool" "$d" "$rep"; then
        echo "rep$rep failed" >> "$d/FAILED"; log "FAILED: $name $tool rep$rep"; break
      fi
      [ -f "$d/SKIPPED" ] && break
      [ -f "$d/clusters.jsonl" ] && sha256sum < "$d/clusters.jsonl" | cut -c1-64 > "$d/clusters_rep$rep.sha256"
      rm -f "$d/kept.jsonl"
    done
    if [ -f "$d/clusters.jsonl" ] && [ ! -f "$d/FAILED" ]; then
      # shellcheck disable=SC2046
      "$N" eval --truth "$C/$name/truth.jsonl" --predicted "$d/clusters.jsonl" --json $(eval_args "$name") \
        > "$d/eval.json"
    fi
  done
done

# ---------------------------------------------------------------- report
{
  echo "{"
  echo "  \"date\": \"$(date -u '+%Y-%m-%d %H:%M UTC')\","
  echo "  \"cpu\": $(lscpu | sed -n 's/^Model name: *//p' | head -1 | "$PYQ" -c 'import json,sys; print(json.dumps(sys.stdin.read().strip()))'),"
  echo "  \"nproc\": $(nproc),"
  echo "  \"free_g\": $(free -g | "$PYQ" -c 'import json,sys; print(json.dumps(sys.stdin.read().rstrip()))'),"
  echo "  \"git\": \"$(git rev-parse --short HEAD 2>/dev/null || echo none)$(git diff --quiet HEAD 2>/dev/null || echo ' + uncommitted changes')\","
  echo "  \"rustc\": \"$(rustc --version)\","
  echo "  \"neardup\": \"$("$N" --version)\","
  echo "  \"python311\": \"$("$PYQ" --version 2>&1)\","
  echo "  \"command\": \"bash bench/quality.sh${ARGS_GIVEN:+ $ARGS_GIVEN}\","
  echo "  \"reps\": $REPS, \"td_reps\": $TD_REPS, \"zh_titles_limit\": $ZH_TITLES_LIMIT, \"en_limit\": $EN_LIMIT,"
  echo "  \"threshold\": $THRESHOLD, \"ngram\": $NGRAM, \"permutations\": $PERMS,"
  echo "  \"corpora\": \"$CORPORA\", \"tools\": \"$TOOLS\","
  echo "  \"seconds_setup\": $T_SETUP,"
  echo "  \"seconds_before_report\": $(( $(date +%s) - T_ALL ))"
  echo "}"
} > "$OUT/meta.json"
"$PYQ" bench/quality_report.py "$OUT" --benchmarks "$ROOT/BENCHMARKS.md"
log "done in $(( $(date +%s) - T_ALL )) s; results in bench/out/quality/results.md and BENCHMARKS.md"
