#!/usr/bin/env bash
# One template, many notices (issue 43): time and memory per document at 10,000 and 100,000
# exam notices of one template, and precision and recall against the notice truth, for one
# binary or two side by side in one run:
#
#   bash bench/one_template.sh NEW_BINARY [BASE_BINARY]
#
# The flood is `neardup synth-notices --shape sms --notices 400000` (seed 1) cut to its exam
# notices (a city and a name from small sets, five small numbers; each notice sent 1-4 times
# with light edits), the first 10,000 and 100,000 of them in the order written. Environment:
# METHODS (default "minhash simhash join segments"), SIZES (default "10000 100000"), REPS
# (runs per binary, method and size, alternating; the median is printed; default 1),
# OUT (the work directory; default a temporary one, removed at the end).
#
# Prints one row per method and size: seconds, peak RSS, microseconds and KB a document,
# precision and recall, for each binary. GNU time (/usr/bin/time) and python3 are needed.
set -euo pipefail
new=$1
base=${2:-}
methods=${METHODS:-minhash simhash join segments}
sizes=${SIZES:-10000 100000}
reps=${REPS:-1}
if [[ -n ${OUT:-} ]]; then
  work=$OUT
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi

"$new" synth-notices --shape sms --notices 400000 --seed 1 -o "$work/all.jsonl" \
  --truth "$work/all.truth.jsonl" -q
python3 - "$work" $sizes <<'EOF'
import json, sys
work, sizes = sys.argv[1], [int(s) for s in sys.argv[2:]]
category = {}
with open(f"{work}/all.truth.jsonl", encoding="utf-8") as f:
    for line in f:
        row = json.loads(line)
        category[row["id"]] = line if row["category"] == "exam" else None
exam = []
with open(f"{work}/all.jsonl", encoding="utf-8") as f:
    for line in f:
        if category[json.loads(line)["id"]] is not None:
            exam.append(line)
for size in sizes:
    if size > len(exam):
        sys.exit(f"only {len(exam)} exam notices, {size} asked")
    with open(f"{work}/one{size}.jsonl", "w", encoding="utf-8") as out, \
         open(f"{work}/one{size}.truth.jsonl", "w", encoding="utf-8") as truth:
        for line in exam[:size]:
            out.write(line)
            truth.write(category[json.loads(line)["id"]])
EOF

# run BINARY METHOD SIZE -> "seconds kb precision recall"
run() {
  local binary=$1 method=$2 size=$3
  /usr/bin/time -f "%e %M" -o "$work/time" "$binary" dedup "$work/one$size.jsonl" \
    -o "$work/kept.jsonl" --clusters "$work/clusters.jsonl" --id-field id --method "$method" -q
  local quality
  quality=$("$binary" eval --truth "$work/one$size.truth.jsonl" --predicted "$work/clusters.jsonl" \
    --json | python3 -c "import json,sys; d=json.load(sys.stdin); print('%.4f %.4f' % (d['precision'], d['recall']))")
  echo "$(cat "$work/time") $quality"
}

# median of the runs' lines "seconds kb precision recall", formatted for SIZE documents
summary() {
  python3 -c "
import statistics, sys
size = int(sys.argv[1])
rows = [list(map(float, line.split())) for line in sys.stdin if line.strip()]
seconds = statistics.median(r[0] for r in rows)
kb = statistics.median(r[1] for r in rows)
print('%.2f s, %.0f MB, %.1f us/doc, %.2f KB/doc, P %.4f R %.4f' % (
    seconds, kb / 1024, seconds * 1e6 / size, kb / size, rows[0][2], rows[0][3]))
" "$1"
}

echo "# one template: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $reps run(s) each"
echo "new: $new${base:+; base: $base}"
for method in $methods; do
  for size in $sizes; do
    : >"$work/new.runs"
    : >"$work/base.runs"
    for _ in $(seq "$reps"); do
      if [[ -n $base ]]; then run "$base" "$method" "$size" >>"$work/base.runs"; fi
      run "$new" "$method" "$size" >>"$work/new.runs"
    done
    line="$method $size | new: $(summary "$size" <"$work/new.runs")"
    if [[ -n $base ]]; then line="$line | base: $(summary "$size" <"$work/base.runs")"; fi
    echo "$line"
  done
done
