"""Run one command, measure its wall time and peak RSS, write a JSON record.

usage: python -m neardup_bench.measure RESULT.json [--timeout S] [--max-as BYTES] -- CMD [ARGS...]

wall_seconds     time.perf_counter() around subprocess start..exit
peak_rss_bytes   resource.getrusage(RUSAGE_CHILDREN).ru_maxrss * 1024 after the
                 child exits (Linux reports KiB); this process has no other
                 children, so it is the child's (or its largest descendant's)
                 peak resident set.
timed_out        true when --timeout seconds passed and the child was killed
--max-as         an address-space limit (RLIMIT_AS) for the child, so that a
                 runaway run fails instead of eating the machine

A separate small process on purpose: a child's peak RSS starts at the RSS of the
process that started it (the kernel carries it over fork and exec), so the driver,
which holds corpora and truth in memory, must not start the measured commands itself.
The child's stdout/stderr pass through. Exit status = the child's.
Standard library only, and nothing of the package is imported.
"""

import json
import resource
import subprocess
import sys
import time


def main() -> int:
    argv = sys.argv[1:]
    if "--" not in argv or argv.index("--") < 1:
        print(__doc__, file=sys.stderr)
        return 2
    sep = argv.index("--")
    out, opts, cmd = argv[0], argv[1:sep], argv[sep + 1:]
    timeout = max_as = None
    while opts:
        if opts[0] == "--timeout":
            timeout = float(opts[1])
        elif opts[0] == "--max-as":
            max_as = int(opts[1])
        else:
            print(f"unknown option {opts[0]}", file=sys.stderr)
            return 2
        opts = opts[2:]

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (max_as, max_as))

    t0 = time.perf_counter()
    timed_out = False
    if timeout is None and max_as is None:
        rc = subprocess.call(cmd)
    else:
        proc = subprocess.Popen(cmd, preexec_fn=limit if max_as else None)
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = proc.wait()
            timed_out = True
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
    if timed_out:
        rec["timed_out"] = True
    with open(out, "w") as fh:
        json.dump(rec, fh, indent=2)
    print(f"[measure] rc={rc} wall={wall:.2f}s rss={rec['peak_rss_bytes'] / 2**20:.0f}MB  {' '.join(cmd)[:120]}",
          file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main())
