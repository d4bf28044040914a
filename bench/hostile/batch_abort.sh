#!/usr/bin/env bash
# Hostile cases of issue 28, items 5-7, against a neardup binary: inputs that once made a
# batch command abort on an allocation or go quadratic.
#   5. `hamming` on 100,000 identical fingerprints at distance 0 (5 x 10^9 pairs), with and
#      without --groups, and a fingerprint file that repeats an id;
#   6. `dedup` of every method on two template floods of 100,000 documents (one-line notices,
#      6 MB; 300-character bank notices, 30 MB), and `segments` under --memory-limit;
#   7. `dedup` of every method on one 50 MB document (join with --measure edit and with
#      --max-edits too).
# And of issue 44, items 1-2 (memory limits that hold):
#   1. 2,000,000 documents of {"text":"hi"} under --memory-limit 500M; a 543 KB gzip of
#      20,000,000 of them under the default limit (streamed: the documents alone need 1.4 GB)
#      and under 500M (refused up front: they cannot fit);
#   2. one 200 MB document of random letters, minhash and simhash, under 1G (refused as it is
#      read) and under 4G (run streamed, under the limit);
#   4. `tune` with six swept parameters of ten values (1,000,000 runs) is
# refused at once naming the count and --max-runs; a sweep allowed past the cap prints its
# count and an estimate first, and Ctrl-C writes the table of the runs finished, marked
# partial (exit 130).
#
# Usage: bench/hostile/batch_abort.sh [NEARDUP_BINARY]   (default: target/release/neardup)
# Environment: TIMEOUT (seconds a case may run, default 600), MEMORY_CAP_KB (address-space
# cap of a case, default 8 GB: a quadratic binary fails there instead of eating the machine).
#
# Prints one line per case: case<TAB>seconds<TAB>peak KB<TAB>exit code<TAB>PASS|FAIL, where
# PASS means: exit 0 or a clear refusal (exit 1 with a "neardup: error:" message, no panic,
# no failed allocation), a peak resident size under the case's bound (below), and no
# temporary file (*.tmp-*, .neardup-tmp-*) left in the output folder. Exits 1 if any fails.
#
# Bounds on peak RSS: hamming 1 GB; one-line flood 1 GB; notice flood 2 GB; the 50 MB
# document 2.5 GB (50 bytes per input byte); issue 44's cases, their memory limit (2 GB for
# the default limit: the documents alone need 1.4 GB).
set -u

BIN=${1:-target/release/neardup}
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
TIMEOUT=${TIMEOUT:-600}
MEMORY_CAP_KB=${MEMORY_CAP_KB:-8388608}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/neardup-batch-abort.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
FAILED=0
METHODS="exact minhash simhash join ngram supershingle imatch topn segments sentences"

python3 - "$WORK" <<'EOF'
import json, random, sys
work = sys.argv[1]
with open(f"{work}/identical.txt", "w") as f:
    f.write("00000000000000ff\n" * 100_000)
with open(f"{work}/repeated_id.jsonl", "w") as f:
    for i, fid in enumerate(["a", "b", "c", "b"]):
        f.write(json.dumps({"id": fid, "fingerprint": f"{i:016x}"}) + "\n")
with open(f"{work}/flood.jsonl", "w") as f:
    for i in range(100_000):
        f.write(json.dumps({"id": i, "text": f"document number {i} about topic {i % 1000} with words"}) + "\n")
r = random.Random(3)
names = ["Alice", "Bob", "Chen Wei", "Li Na", "Wang Fang", "Zhang Min", "Liu Yang", "Sun Li"]
with open(f"{work}/notices.jsonl", "w") as f:
    for i in range(100_000):
        text = (f"Dear customer {r.choice(names)}, your account ending {i % 10000:04d} has received "
                f"a transfer of {r.randint(1, 99999)}.{r.randint(0, 99):02d} yuan on "
                f"2024-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}. If you did not make this "
                "transaction, please call our service line 95555 immediately. Thank you for "
                "banking with us. This message is automatically generated; please do not reply.")
        f.write(json.dumps({"id": i, "text": text}) + "\n")
r = random.Random(7)
words = [f"w{i}" for i in range(5000)]
parts, size = [], 0
while size < 50_000_000:
    word = r.choice(words)
    parts.append(word)
    size += len(word) + 1
with open(f"{work}/big.jsonl", "w") as f:
    f.write(json.dumps({"id": 1, "text": " ".join(parts)[:50_000_000]}) + "\n")
import gzip, string
with open(f"{work}/tiny.jsonl", "wb") as f:
    f.write(b'{"text":"hi"}\n' * 2_000_000)
with gzip.open(f"{work}/bomb.jsonl.gz", "wb", compresslevel=9) as f:
    for _ in range(20):
        f.write(b'{"text":"hi"}\n' * 1_000_000)
r = random.Random(11)
with open(f"{work}/random200.jsonl", "w") as f:
    f.write('{"text":"')
    for _ in range(20):
        f.write("".join(r.choices(string.ascii_lowercase + " ", k=10_000_000)))
    f.write('"}\n')
with open(f"{work}/labelled.jsonl", "w") as f, open(f"{work}/truth.jsonl", "w") as t:
    for i in range(200):
        base = " ".join(r.choice(words) for _ in range(30))
        for copy, text in enumerate([base, base + " forwarded"]):
            f.write(json.dumps({"id": f"{i}-{copy}", "text": text}) + "\n")
            t.write(json.dumps({"id": f"{i}-{copy}", "cluster": i}) + "\n")
EOF

# run_case NAME BOUND_KB ARGS...: runs the binary with ARGS in the case's own folder
# ($OUT), under the time limit and the memory cap, and prints the case's line.
run_case() {
    local name=$1 bound=$2
    shift 2
    OUT=$WORK/out/$name
    mkdir -p "$OUT"
    local args=("${@//@OUT@/$OUT}")
    (
        ulimit -v "$MEMORY_CAP_KB"
        cd "$OUT" && /usr/bin/time -f "%e %M" -o "$OUT/.time" \
            timeout "$TIMEOUT" "$BIN" "${args[@]}" > /dev/null 2> "$OUT/.stderr"
    )
    local status=$?
    local seconds peak
    read -r seconds peak < <(tail -n 1 "$OUT/.time" 2>/dev/null || echo "- -")
    [ "$status" -eq 124 ] && seconds="timeout"
    local verdict=PASS
    if [ "$status" -ne 0 ]; then
        # A clear refusal: exit 1, a message, no panic and no failed allocation.
        if [ "$status" -ne 1 ] || ! grep -q "^neardup: error:" "$OUT/.stderr" ||
            grep -qE "panicked|memory allocation" "$OUT/.stderr"; then
            verdict=FAIL
        fi
    fi
    if ! [[ "$peak" =~ ^[0-9]+$ ]] || [ "$peak" -ge "$bound" ]; then
        verdict=FAIL
    fi
    if [ -n "$(find "$OUT" -name '*.tmp-*' -o -name '.neardup-tmp-*' | head -n 1)" ]; then
        verdict=FAIL
    fi
    [ "$verdict" = FAIL ] && FAILED=1
    printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$seconds" "$peak" "$status" "$verdict"
    rm -rf "$OUT"
}

GB=1048576

# ---- item 5: hamming -------------------------------------------------------------------------
run_case hamming-identical-100k $GB hamming "$WORK/identical.txt" -o @OUT@/pairs.jsonl \
    --max-distance 0
run_case hamming-identical-100k-groups $GB hamming "$WORK/identical.txt" -o @OUT@/pairs.jsonl \
    --max-distance 0 --groups @OUT@/groups.jsonl
run_case hamming-repeated-id $GB hamming "$WORK/repeated_id.jsonl" -o @OUT@/pairs.jsonl \
    --max-distance 3

# ---- item 6: template floods -------------------------------------------------------------------
for method in $METHODS; do
    run_case "flood-100k-$method" $GB dedup "$WORK/flood.jsonl" -o @OUT@/kept.jsonl \
        --method "$method" --quiet
done
run_case flood-100k-segments-memory-limit $GB dedup "$WORK/flood.jsonl" -o @OUT@/kept.jsonl \
    --method segments --memory-limit 256M --quiet
for method in $METHODS; do
    run_case "notices-100k-$method" $((2 * GB)) dedup "$WORK/notices.jsonl" \
        -o @OUT@/kept.jsonl --method "$method" --quiet
done

# ---- item 7: one 50 MB document -----------------------------------------------------------------
for method in $METHODS; do
    run_case "doc-50mb-$method" $((5 * GB / 2)) dedup "$WORK/big.jsonl" -o @OUT@/kept.jsonl \
        --method "$method" --quiet
done
run_case doc-50mb-join-edit $((5 * GB / 2)) dedup "$WORK/big.jsonl" -o @OUT@/kept.jsonl \
    --method join --measure edit --quiet
run_case doc-50mb-join-max-edits $((5 * GB / 2)) dedup "$WORK/big.jsonl" \
    -o @OUT@/kept.jsonl --method join --max-edits 3 --quiet

# ---- issue 44, items 1-2: memory limits that hold -------------------------------------------
MB=1024
run_case tiny-2m-limit-500m $((500 * MB)) dedup "$WORK/tiny.jsonl" -o @OUT@/kept.jsonl \
    --memory-limit 500M --quiet
run_case gzip-bomb-20m-default $((2 * GB)) dedup "$WORK/bomb.jsonl.gz" -o @OUT@/kept.jsonl \
    --quiet
run_case gzip-bomb-20m-limit-500m $((500 * MB)) dedup "$WORK/bomb.jsonl.gz" \
    -o @OUT@/kept.jsonl --memory-limit 500M --quiet
for method in minhash simhash; do
    run_case "doc-200mb-$method-limit-1g" $GB dedup "$WORK/random200.jsonl" \
        -o @OUT@/kept.jsonl --method "$method" --memory-limit 1G --quiet
    run_case "doc-200mb-$method-limit-4g" $((4 * GB)) dedup "$WORK/random200.jsonl" \
        -o @OUT@/kept.jsonl --method "$method" --memory-limit 4G --quiet
done

# ---- issue 44, item 4: tune sweeps with no bound --------------------------------------------
TUNE=(tune "$WORK/labelled.jsonl" --truth "$WORK/truth.jsonl" --id-field id --json)
SIX=(--thresholds 0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,0.95 --ngrams 1,2,3,4,5,6,7,8,9,10
     --permutations 16,32,48,64,80,96,112,128,144,160
     --sweep "max_df=1;2;3;4;5;6;7;8;9;10" --sweep "boilerplate_df=1;2;3;4;5;6;7;8;9;10"
     --sweep "rare_threshold=0.1;0.2;0.3;0.4;0.5;0.6;0.7;0.8;0.9;0.95")
run_case tune-million-runs-refused $GB "${TUNE[@]}" "${SIX[@]}" -o @OUT@/table.json

# Ctrl-C on the million-run sweep allowed by --max-runs: its count and estimate come first,
# and the table of the runs finished is written, marked partial, with exit status 130.
OUT=$WORK/out/tune-ctrl-c
mkdir -p "$OUT"
started=$(date +%s%N)
"$BIN" "${TUNE[@]}" "${SIX[@]}" --max-runs 1000000 -o "$OUT/table.json" 2> "$OUT/.stderr" &
pid=$!
for _ in $(seq 600); do
    grep -q "the first run took" "$OUT/.stderr" && break
    sleep 0.1
done
sleep 1
kill -INT "$pid"
wait "$pid"
status=$?
seconds=$(( ($(date +%s%N) - started) / 1000000000 ))
finished=$(python3 -c 'import json,sys; t=json.load(open(sys.argv[1])); p=t["partial"]; '\
'print(p["finished"] if p["finished"] == len(t["rows"]) > 0 and p["planned"] == 1000000 else 0)' \
    "$OUT/table.json" 2>/dev/null || echo 0)
verdict=PASS
if [ "$status" -ne 130 ] || [ "$finished" -eq 0 ] || ! grep -q "1000000 runs" "$OUT/.stderr" ||
    [ -n "$(find "$OUT" -name '*.tmp-*' | head -n 1)" ]; then
    verdict=FAIL
    FAILED=1
fi
printf '%s\t%s\t%s\t%s\t%s\n' "tune-ctrl-c-partial-table($finished-rows)" "$seconds" - "$status" \
    "$verdict"

exit $FAILED
