#!/usr/bin/env python3
"""Run one command, measure its wall time and peak RSS, write a JSON record.

usage: measure.py RESULT.json -- CMD [ARGS...]

wall_seconds     time.perf_counter() around subprocess start..exit
peak_rss_bytes   resource.getrusage(RUSAGE_CHILDREN).ru_maxrss * 1024 after the
                 child exits (Linux reports KiB); this process has no other
                 children, so it is the child's (or its largest descendant's)
                 peak resident set.
The child's stdout/stderr pass through.  Exit status = the child's.
"""
import json
import resource
import subprocess
import sys
import time


def main() -> int:
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    out, cmd = sys.argv[1], sys.argv[3:]
    t0 = time.perf_counter()
    rc = subprocess.call(cmd)
    wall = time.perf_counter() - t0
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    rec = {
        "cmd": cmd,
        "returncode": rc,
        "wall_seconds": wall,
        "peak_rss_bytes": ru.ru_maxrss * 1024,
        "user_seconds": ru.ru_utime,
        "sys_seconds": ru.ru_stime,
        "started_unix": time.time() - wall,
    }
    with open(out, "w") as fh:
        json.dump(rec, fh, indent=2)
    print(f"[measure] rc={rc} wall={wall:.2f}s rss={rec['peak_rss_bytes'] / 2**20:.0f}MB  {' '.join(cmd)[:120]}", file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main())
