#!/usr/bin/env bash
# Hostile cases of issue 28, items 4 and 9, against a neardup binary:
#   4. an output over a file the run reads (--boilerplate-file, --lexicon-file, --idf-file,
#      --stopwords-file, --against, --truth, report's --stats and --clusters) must be refused,
#      leave the file byte for byte and name both options and the path;
#   9. the temporary files and spill folder of a run killed with SIGKILL must be removed by
#      the next run writing there (which says so), and a live run's must not be touched.
# And of issue 44, items 10-13: a JSONL line that repeats a key, an output named for another
# format, `-o - | head`, a FIFO output with no reader, and the messages that echo a value.
#
# Usage: bench/hostile/batch_files.sh [NEARDUP_BINARY]   (default: target/release/neardup)
# Prints one line per case: case<TAB>expected<TAB>observed<TAB>PASS|FAIL; exits 1 if any fails.
set -u

BIN=${1:-target/release/neardup}
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
EXAMPLE=$ROOT/examples/news.jsonl
WORK=$(mktemp -d "${TMPDIR:-/tmp}/neardup-batch-files.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
FAILED=0

report() { # case expected observed
    local verdict=FAIL
    [ "$2" = "$3" ] && verdict=PASS
    [ "$verdict" = FAIL ] && FAILED=1
    printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$verdict"
}

# ---- item 4: outputs over files the run reads ----------------------------------------------

LIST=$WORK/given.txt
TRUTH=$WORK/truth.jsonl
CLUSTERS=$WORK/clusters.jsonl
STATS=$WORK/stats.json
"$BIN" dedup "$EXAMPLE" --id-field id -o /dev/null --clusters "$CLUSTERS" -q
python3 - "$EXAMPLE" "$TRUTH" <<'EOF'
import json, sys
with open(sys.argv[1]) as f, open(sys.argv[2], "w") as out:
    for i, line in enumerate(f):
        out.write(json.dumps({"id": json.loads(line)["id"], "cluster": i}) + "\n")
EOF

# same_file CASE OUTPUT_FLAG READING_FLAG FILE -- ARGS...: the run must fail, FILE must be
# unchanged, and the message must name both flags and FILE.
same_file() {
    local name=$1 output=$2 reader=$3 file=$4
    shift 5
    printf '本文来源于网络 1.5\n' > "$LIST"
    printf '{"method": {"name": "minhash"}}\n' > "$STATS"
    cp "$file" "$WORK/before"
    local message status observed
    message=$("$BIN" "$@" 2>&1 >/dev/null)
    status=$?
    if [ $status -eq 0 ]; then
        observed="accepted"
    else
        observed="refused"
    fi
    if cmp -s "$file" "$WORK/before"; then
        observed="$observed, file intact"
    else
        observed="$observed, file changed ($(wc -c < "$file") bytes)"
    fi
    local named=yes part
    for part in "$output" "$reader" "$file"; do
        case $message in *"$part"*) ;; *) named=no ;; esac
    done
    observed="$observed, names both flags and path: $named"
    report "$name" "refused, file intact, names both flags and path: yes" "$observed"
}

DEDUP=(dedup "$EXAMPLE" --id-field id -q)
same_file boilerplate-out-over-boilerplate-file --boilerplate-out --boilerplate-file "$LIST" -- \
    "${DEDUP[@]}" -o /dev/null --boilerplate-file "$LIST" --boilerplate-out "$LIST"
for flag in --clusters --pairs --stats; do
    same_file "${flag#--}-over-boilerplate-file" "$flag" --boilerplate-file "$LIST" -- \
        "${DEDUP[@]}" -o /dev/null --boilerplate-file "$LIST" "$flag" "$LIST"
done
same_file output-over-boilerplate-file --output --boilerplate-file "$LIST" -- \
    "${DEDUP[@]}" --boilerplate-file "$LIST" -o "$LIST"
same_file save-lexicon-over-lexicon-file --save-lexicon --lexicon-file "$LIST" -- \
    "${DEDUP[@]}" --method imatch -o /dev/null --lexicon-file "$LIST" --save-lexicon "$LIST"
same_file output-over-lexicon-file --output --lexicon-file "$LIST" -- \
    "${DEDUP[@]}" --method imatch --lexicon-file "$LIST" -o "$LIST"
same_file output-over-idf-file --output --idf-file "$LIST" -- \
    "${DEDUP[@]}" --method simhash --weights tfidf --tokenizer word --ngram 1 \
    --idf-file "$LIST" -o "$LIST"
same_file output-over-stopwords-file --output --stopwords-file "$LIST" -- \
    "${DEDUP[@]}" --method simhash --stopwords-file "$LIST" -o "$LIST"
same_file stats-over-against --stats --against "$LIST" -- \
    "${DEDUP[@]}" -o /dev/null --against "$LIST" --stats "$LIST"
for flag in --idf-file --stopwords-file; do
    same_file "fingerprint-output-over-${flag#--}" --output "$flag" "$LIST" -- \
        fingerprint "$EXAMPLE" "$flag" "$LIST" -o "$LIST" -q
done
same_file tune-output-over-boilerplate-file --output --boilerplate-file "$LIST" -- \
    tune "$EXAMPLE" --id-field id --truth "$TRUTH" --thresholds 0.5 --ngrams 3 \
    --boilerplate-file "$LIST" -o "$LIST"
same_file tune-output-over-truth --output --truth "$TRUTH" -- \
    tune "$EXAMPLE" --id-field id --truth "$TRUTH" -o "$TRUTH"
same_file eval-output-over-truth --output --truth "$TRUTH" -- \
    eval --truth "$TRUTH" --predicted "$CLUSTERS" -o "$TRUTH"
same_file report-output-over-stats --output --stats "$STATS" -- \
    report "$EXAMPLE" --id-field id --clusters "$CLUSTERS" --stats "$STATS" -o "$STATS" -q
same_file report-output-over-clusters --output --clusters "$CLUSTERS" -- \
    report "$EXAMPLE" --id-field id --clusters "$CLUSTERS" -o "$CLUSTERS" -q

# ---- item 9: temporaries of killed runs ----------------------------------------------------

# temporaries DIR: the temporary files and folders in DIR (old and new names).
temporaries() {
    find "$1" -mindepth 1 -maxdepth 1 \( -name '.neardup-tmp-*' -o -name '*.tmp-*' \) \
        -printf '%f\n' | sort
}

# start_run DIR: a spilling dedup of a FIFO, held open on descriptor 3, writing kept.txt and
# clusters.jsonl in DIR; waits until its temporary folder and files exist. Sets RUN_PID.
start_run() {
    local dir=$1
    mkfifo "$dir/in.fifo"
    "$BIN" dedup - --format text --memory-limit 1 -q -o "$dir/kept.txt" \
        --clusters "$dir/clusters.jsonl" < "$dir/in.fifo" 2> "$dir/first.err" &
    RUN_PID=$!
    exec 3> "$dir/in.fifo"
    printf 'one line\nanother line\n' >&3
    local waited=0
    until [ "$(temporaries "$dir" | wc -l)" -ge 3 ] || [ $waited -ge 300 ]; do
        sleep 0.1
        waited=$((waited + 1))
    done
}

# SIGKILL, then another run in the same folder.
for quiet in no yes; do
    DIR=$WORK/killed-$quiet
    mkdir -p "$DIR"
    start_run "$DIR"
    SPILL=$(temporaries "$DIR" | grep '^\.neardup-tmp-' | head -1)
    [ -n "$SPILL" ] && head -c 402000 /dev/zero > "$DIR/$SPILL/sketches-big"
    kill -9 "$RUN_PID"
    wait "$RUN_PID" 2>/dev/null
    exec 3>&-
    LEFT=$(temporaries "$DIR" | wc -l)
    FLAGS=()
    [ $quiet = yes ] && FLAGS=(-q)
    "$BIN" dedup "$EXAMPLE" -o "$DIR/again.jsonl" "${FLAGS[@]}" 2> "$DIR/second.err"
    STATUS=$?
    AFTER=$(temporaries "$DIR" | wc -l)
    LINES=$(grep -c 'left by an interrupted run' "$DIR/second.err")
    FREED=$(grep -F "$SPILL" "$DIR/second.err" | grep -o '([0-9.]* [kMG]*B)' | head -1)
    if [ $quiet = yes ]; then
        report "sigkill-then-next-run-quiet" "3 left, status 0, 0 left after, 0 lines" \
            "$LEFT left, status $STATUS, $AFTER left after, $LINES lines"
    else
        report "sigkill-then-next-run" "3 left, status 0, 0 left after, 3 lines, spill (402.0 kB)" \
            "$LEFT left, status $STATUS, $AFTER left after, $LINES lines, spill ${FREED:-(none)}"
    fi
done

# A live run's temporaries while other runs write (in memory, and spilling) in its folder.
DIR=$WORK/live
mkdir -p "$DIR"
start_run "$DIR"
BEFORE=$(temporaries "$DIR")
"$BIN" dedup "$EXAMPLE" -o "$DIR/other.jsonl" 2> "$DIR/other.err"
S1=$?
"$BIN" dedup "$EXAMPLE" -o "$DIR/other2.jsonl" --memory-limit 1 2>> "$DIR/other.err"
S2=$?
KEPT=$([ "$(temporaries "$DIR")" = "$BEFORE" ] && echo yes || echo no)
printf 'one line\n' >&3
exec 3>&-
wait "$RUN_PID"
FIRST=$?
OUTPUT=$(tr '\n' '|' < "$DIR/kept.txt" 2>/dev/null)
report "live-run-untouched-by-concurrent-runs" \
    "others 0 0, live temporaries kept: yes, live run 0, kept one line|another line|" \
    "others $S1 $S2, live temporaries kept: $KEPT, live run $FIRST, kept $OUTPUT"

# ---- issue 44, items 10-13 -------------------------------------------------------------------
DIR=$WORK/edges
mkdir -p "$DIR"
printf '{"text":"a","text":"b"}\n{"text":"c"}\n' > "$DIR/repeated.jsonl"
"$BIN" dedup "$DIR/repeated.jsonl" -o "$DIR/kept.jsonl" 2> "$DIR/err"
STATUS=$?
SAYS=$(grep -c 'the key "text" appears twice' "$DIR/err")
"$BIN" dedup "$DIR/repeated.jsonl" -o "$DIR/kept.jsonl" --on-error skip -q
SKIPPED=$(tr -d '\n' < "$DIR/kept.jsonl")
report "jsonl-repeated-key" 'status 1, said 1, skip keeps {"text":"c"}' \
    "status $STATUS, said $SAYS, skip keeps $SKIPPED"

"$BIN" dedup "$EXAMPLE" -o "$DIR/kept.csv" 2> "$DIR/err"
STATUS=$?
report "output-named-csv-for-jsonl" "status 1, said 1, written no" \
    "status $STATUS, said $(grep -c 'the name says csv' "$DIR/err"), written $([ -e "$DIR/kept.csv" ] && echo yes || echo no)"

"$BIN" dedup "$EXAMPLE" -o - 2> "$DIR/err" | head -n 1 > /dev/null
STATUS=${PIPESTATUS[0]}
report "stdout-closed-by-head" "status 0, stderr 0 bytes" \
    "status $STATUS, stderr $(wc -c < "$DIR/err") bytes"

mkfifo "$DIR/out.fifo"
timeout 3 "$BIN" dedup "$EXAMPLE" -o "$DIR/out.fifo" 2> "$DIR/err"
report "fifo-output-without-reader" "said waiting 1" \
    "said waiting $(grep -c 'is a FIFO: waiting for a reader' "$DIR/err")"

LONG=$(head -c 120000 /dev/zero | tr '\0' 1)
"$BIN" dedup "$EXAMPLE" -o "$DIR/k.jsonl" --threshold "$LONG" 2> "$DIR/err"
report "echoed-value-120000-digits" "under 1000 bytes: yes" \
    "under 1000 bytes: $([ "$(wc -c < "$DIR/err")" -lt 1000 ] && echo yes || echo no)"
"$BIN" dedup "$EXAMPLE" -o "$DIR/k.jsonl" --method simhash --ngram '<24:2,3' 2> "$DIR/err"
report "simhash-ngram-rule" "says minhash only: 1" \
    "says minhash only: $(grep -c 'taken by minhash only' "$DIR/err")"

exit $FAILED
