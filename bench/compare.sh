#!/usr/bin/env bash
# Times two neardup binaries on the same runs, alternating them so that the machine's noise
# falls on both, and prints the median wall time and peak RSS of each and their ratio:
#
#   bash bench/compare.sh OLD_BINARY NEW_BINARY [REPS] -- DEDUP_ARGS...
#
# e.g. bash bench/compare.sh ../old/target/release/neardup target/release/neardup 5 -- \
#        ../shared/data/reuters21578/bodies.jsonl --id-field id
# Each run is `BINARY dedup DEDUP_ARGS -o TMP -q --stats TMP.json`; the sketch stage's
# seconds come from the stats file.
set -euo pipefail
old=$1
new=$2
reps=${3:-5}
shift 3
[ "${1:-}" = "--" ] && shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for i in $(seq "$reps"); do
  for binary in old new; do
    /usr/bin/time -f "%e %M" -o "$work/time" "${!binary}" dedup "$@" -o "$work/out" -q \
      --stats "$work/stats.json" >/dev/null
    sketch=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["seconds"]["sketch"])' "$work/stats.json")
    echo "$binary $(cat "$work/time") $sketch" >> "$work/runs"
  done
done
python3 - "$work/runs" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    binary, wall, rss, sketch = line.split()
    runs.setdefault(binary, []).append((float(wall), int(rss) / 1024, float(sketch)))
med = {b: [statistics.median(x[i] for x in r) for i in range(3)] for b, r in runs.items()}
for b in ("old", "new"):
    walls = ", ".join(f"{x[0]:.2f}" for x in runs[b])
    print(f"{b}: median wall {med[b][0]:.2f} s, sketch {med[b][2]:.2f} s, peak RSS {med[b][1]:.0f} MB  (wall runs: {walls})")
print(f"new/old wall {med['new'][0] / med['old'][0]:.3f}, sketch {med['new'][2] / med['old'][2]:.3f}, RSS {med['new'][1] / med['old'][1]:.3f}")
PY
