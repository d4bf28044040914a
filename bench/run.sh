#!/usr/bin/env bash
# neardup MinHash-LSH benchmark vs datasketch and rensa.
#
#   bash bench/run.sh [--reps N] [--zh-mb MB] [--sample-mb MB] [--tools "neardup datasketch rensa"]
#                     [--corpora "reuters zh"] [--no-zh-exact]
#
# Creates .venv-bench (pinned datasketch/rensa/numpy), builds neardup
# (cargo build --release -p neardup-cli), generates the synthetic Chinese
# corpus into bench/out/ if missing, runs every tool REPS times on each corpus
# (wall time + peak RSS of each run via bench/measure.py), computes the exact
# truth (bench/truth.py) and writes bench/out/results.md (+ results.json).
#
# --sample-mb caps every corpus to its first MB megabytes of lines, for all
# tools equally (off by default).  The Chinese corpus is scored against the
# pooled within-family truth; in addition the exact all-pairs truth is computed
# for it too (prefix-filter join, ~7 min and ~5.5 GB for 100 MB in Python) and
# reported as a second accuracy table; --no-zh-exact skips that.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/bench/out
REPS=3
ZH_MB=100
ZH_SEED=20240601
SAMPLE_MB=""
TOOLS="neardup datasketch rensa"
CORPORA="reuters zh"
ZH_EXACT=1
THRESHOLD=0.7
NGRAM=5
PERMS=128

while [ $# -gt 0 ]; do
  case "$1" in
    --reps) REPS=$2; shift 2 ;;
    --zh-mb) ZH_MB=$2; shift 2 ;;
    --sample-mb) SAMPLE_MB=$2; shift 2 ;;
    --tools) TOOLS=$2; shift 2 ;;
    --corpora) CORPORA=$2; shift 2 ;;
    --no-zh-exact) ZH_EXACT=0; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

# shellcheck source=bench/common.sh
. "$ROOT/bench/common.sh"
find_data
export NEARDUP_DATA=$DATA

T_ALL=$(date +%s)
mkdir -p "$OUT"

# ---------------------------------------------------------------- venv
PY=$ROOT/.venv-bench/bin/python
if [ ! -x "$PY" ]; then
  log "creating .venv-bench"
  python3 -m venv "$ROOT/.venv-bench"
fi
"$PY" -m pip install -q --disable-pip-version-check \
  datasketch==2.0.0 rensa==0.5.0 numpy==2.4.6 scipy==1.17.1

# ---------------------------------------------------------------- build
# NEARDUP_BIN=/path/to/neardup uses that binary and skips the build.
NEARDUP=${NEARDUP_BIN:-$ROOT/target/release/neardup}
case " $TOOLS " in
  *" neardup "*)
    [ -n "${NEARDUP_BIN:-}" ] && { log "using $NEARDUP_BIN (no build)"; }
    [ -n "${NEARDUP_BIN:-}" ] || log "cargo build --release -p neardup-cli"
    [ -n "${NEARDUP_BIN:-}" ] ||
    cargo build --release -p neardup-cli
    [ -x "$NEARDUP" ] || { echo "missing $NEARDUP after build" >&2; exit 1; }
    ;;
esac

# ---------------------------------------------------------------- corpora
ZH=$OUT/zh_synth_${ZH_MB}mb_seed${ZH_SEED}.jsonl
if [ ! -s "$ZH" ]; then
  log "generating $ZH"
  "$PY" bench/make_zh_corpus.py --size-mb "$ZH_MB" --seed "$ZH_SEED" --out "$ZH"
fi
REUTERS=$DATA/reuters21578/bodies.jsonl

corpus_path() {
  case "$1" in
    reuters) echo "$REUTERS" ;;
    zh) echo "$ZH" ;;
  esac
}
sample() {  # sample NAME PATH -> path of the capped copy (first SAMPLE_MB MB of lines)
  local name=$1 src=$2 dst=$OUT/sample_${1}_${SAMPLE_MB}mb.jsonl
  if [ ! -s "$dst" ] || [ "$src" -nt "$dst" ]; then
    "$PY" - "$src" "$dst" "$SAMPLE_MB" <<'EOF'
import sys
src, dst, mb = sys.argv[1], sys.argv[2], float(sys.argv[3])
cap, n = int(mb * 1e6), 0
with open(src, "rb") as fi, open(dst, "wb") as fo:
    for line in fi:
        if n + len(line) > cap:
            break
        fo.write(line)
        n += len(line)
EOF
  fi
  echo "$dst"
}

# ---------------------------------------------------------------- runs
RUNS=$OUT/runs
for name in $CORPORA; do
  path=$(corpus_path "$name")
  [ -n "$SAMPLE_MB" ] && path=$(sample "$name" "$path")
  rm -rf "${RUNS:?}/$name"
  for rep in $(seq 1 "$REPS"); do
    for tool in $TOOLS; do
      d=$RUNS/$name/$tool/rep$rep
      mkdir -p "$d"
      log "$name rep$rep $tool"
      if [ "$tool" = neardup ]; then
        "$PY" bench/measure.py "$d/measure.json" -- "$NEARDUP" dedup "$path" -o "$d/out.jsonl" \
          --clusters "$d/clusters.jsonl" --pairs "$d/pairs.jsonl" --stats "$d/stats.json" \
          --method minhash --threshold $THRESHOLD --ngram $NGRAM --permutations $PERMS \
          --tokenizer token --chinese-variant keep --id-field id --quiet --threads 2
        "$PY" bench/evaluate.py neardup-pairs "$path" "$d/pairs.jsonl" "$d/pairs.tsv" --id-field id
        rm -f "$d/out.jsonl"  # the deduplicated copy of the corpus is not needed
      else
        "$PY" bench/measure.py "$d/measure.json" -- "$PY" bench/peers.py "$path" --tool "$tool" \
          --threshold $THRESHOLD --permutations $PERMS --ngram $NGRAM --id-field id --text-field text \
          --out-dir "$d" --result "$d/result.json"
      fi
    done
  done
done

# ---------------------------------------------------------------- truth
for name in $CORPORA; do
  path=$(corpus_path "$name")
  [ -n "$SAMPLE_MB" ] && path=$(sample "$name" "$path")
  pool=$(find "$RUNS/$name" -name '*.candidates.tsv' -o -name '*.verified.tsv' -o -name 'pairs.tsv' | sort)
  if [ "$name" = reuters ]; then mode=exact; else mode=family; fi
  log "truth $name ($mode)"
  # shellcheck disable=SC2086
  "$PY" bench/truth.py "$path" --mode $mode --threshold $THRESHOLD --ngram $NGRAM \
    --pool $pool --out "$OUT/truth_$name.tsv" --meta "$OUT/truth_$name.json" >/dev/null
  rm -f "$OUT/truth_${name}_exact.tsv" "$OUT/truth_${name}_exact.json"
  if [ "$mode" = family ] && [ "$ZH_EXACT" = 1 ]; then
    log "truth $name (exact all-pairs join, for comparison)"
    # shellcheck disable=SC2086
    "$PY" bench/truth.py "$path" --mode exact --threshold $THRESHOLD --ngram $NGRAM \
      --pool $pool --out "$OUT/truth_${name}_exact.tsv" --meta "$OUT/truth_${name}_exact.json" >/dev/null
  fi
done

# ---------------------------------------------------------------- report
{
  echo "- Machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), nproc $(nproc)"
  echo "- Memory (free -g):"
  echo '```'
  free -g
  echo '```'
  echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- Git commit: $(git rev-parse --short HEAD 2>/dev/null || echo 'none (no commits yet)')$(git diff --quiet HEAD 2>/dev/null || echo ' + uncommitted changes')"
  echo "- Versions: $("$PY" bench/evaluate.py versions), $(rustc --version)"
  echo "- Command: \`bash bench/run.sh$([ "$REPS" != 3 ] && echo " --reps $REPS")$([ -n "$SAMPLE_MB" ] && echo " --sample-mb $SAMPLE_MB")$([ "$ZH_MB" != 100 ] && echo " --zh-mb $ZH_MB")\`, $REPS runs per tool and corpus, threshold $THRESHOLD, $PERMS permutations, $NGRAM-token shingles"
  [ -n "$SAMPLE_MB" ] && echo "- **Corpora capped to their first $SAMPLE_MB MB for every tool (--sample-mb).**"
  true
} > "$OUT/machine.md"

"$PY" - "$OUT" "$RUNS" "$REPS" "$TOOLS" "$CORPORA" "$REUTERS" "$ZH" "$SAMPLE_MB" <<'EOF'
import json, os, sys
out, runs, reps, tools, corpora, reuters, zh, sample_mb = sys.argv[1:9]
paths = {"reuters": reuters, "zh": zh}
man = {"runs_dir": runs, "reps": int(reps), "tools": tools.split(),
       "header": open(os.path.join(out, "machine.md")).read(), "corpora": []}
for name in corpora.split():
    p = paths[name]
    if sample_mb:
        p = os.path.join(out, f"sample_{name}_{sample_mb}mb.jsonl")
    man["corpora"].append({"name": name, "path": p,
                           "truth": os.path.join(out, f"truth_{name}.tsv"),
                           "truth_meta": os.path.join(out, f"truth_{name}.json")})
    ex = os.path.join(out, f"truth_{name}_exact.tsv")
    if name != "reuters" and os.path.exists(ex):
        man["corpora"][-1]["truth_exact"] = ex
        man["corpora"][-1]["truth_exact_meta"] = os.path.join(out, f"truth_{name}_exact.json")
json.dump(man, open(os.path.join(out, "manifest.json"), "w"), indent=2)
EOF
"$PY" bench/evaluate.py report --manifest "$OUT/manifest.json" --out "$OUT/results.md" --json "$OUT/results.json"
log "done in $(( $(date +%s) - T_ALL )) s; results in bench/out/results.md"
