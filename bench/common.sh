# Shared by bench/run.sh and bench/quality.sh (sourced, with ROOT set to the repository root).

# DATA: the shared data folder (NEARDUP_DATA, or ../shared/data beside the repository).
find_data() {
  DATA=${NEARDUP_DATA:-}
  if [ -z "$DATA" ]; then
    for d in "$ROOT/../shared/data" /work/shared/data; do
      if [ -f "$d/reuters21578/bodies.jsonl" ]; then DATA=$(cd "$d" && pwd); break; fi
    done
  fi
  [ -n "$DATA" ] || { echo "shared data not found; set NEARDUP_DATA" >&2; exit 1; }
}

log() { echo "[$(date +%H:%M:%S)] $*" >&2; }
