"""neardup's benchmarks: one driver, `python -m neardup_bench` (run it through `bench/run`).

Subcommands: `speed` (neardup vs datasketch and rensa), `quality` (neardup's methods vs the
peers, scored by `neardup eval`), `flood` (template floods), `selftest`. Every path is found
relative to this package (the repository root is two folders up) or given on the command
line; the shared data folder is `$NEARDUP_DATA` or `../shared/data` beside the repository.

Kept light: the timed child processes (`python -m neardup_bench.peers`, ...) import it.
"""
