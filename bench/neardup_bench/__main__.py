"""python -m neardup_bench {speed,quality,methods,flood,hamming,boilerplate,lengths,service,online,short,regress,selftest} [OPTIONS] (see bench/run)."""

from __future__ import annotations

import argparse
import os
import sys

from . import boilerplate, flood, hamming, lengths, methods, online, quality, regress, scale, selftest, service, short, speed
from .common import ROOT


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(prog="bench/run", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name, mod, help_ in (
        ("speed", speed, "neardup vs datasketch and rensa: time, memory, exact truth, P/R/F1"),
        ("quality", quality, "neardup's methods vs the peers on synth and labelled corpora (P, R, F1, ARI)"),
        ("methods", methods, "every neardup method at its defaults on the same corpora (for docs/methods.md)"),
        ("scale", scale, "time and peak memory as the corpus grows (1x-64x), with and without a memory limit"),
        ("flood", flood, "template floods: time and memory under a memory cap and a timeout"),
        ("hamming", hamming, "the SimHash Hamming index vs PyPI simhash and gaoya: build, memory, queries, self-join"),
        ("boilerplate", boilerplate, "boilerplate-aware similarity: quality before/after on every corpus, cost of the pass"),
        ("lengths", lengths, "defaults by length: shingle sizes and thresholds on short and long corpora, and their cost"),
        ("online", online, "the service's quality on the labelled corpora and notice floods, beside the batch CLI"),
        ("service", service, "neardup serve at 10M+ documents: single and batched inserts, checks, memory, disk, restart"),
        ("short", short, "exact short-text joins at 1M documents vs the all-m-gram index, MinHash-LSH, datasketch"),
        ("regress", regress, "this tree's binary against another revision's: wall, CPU, peak memory per stage"),
        ("selftest", selftest, "the driver end to end on a few hundred lines, and the tokeniser cross-check"),
    ):
        p = sub.add_parser(name, help=help_, description=mod.__doc__,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        mod.add_arguments(p)
    args = ap.parse_args(argv)
    # Paths given on the command line are relative to where the driver was started; after
    # that everything runs from the repository root, so that reports name paths from there.
    for key in ("bin", "base_bin", "bin_dir", "data", "out"):
        if getattr(args, key, None):
            setattr(args, key, os.path.abspath(getattr(args, key)))
    os.chdir(ROOT)
    if args.cmd == "speed":
        return speed.main(args)
    if args.cmd == "quality":
        return quality.main(args, argv[1:])
    if args.cmd == "methods":
        return methods.main(args, argv[1:])
    if args.cmd == "scale":
        return scale.main(args, argv[1:])
    if args.cmd == "hamming":
        return hamming.main(args)
    if args.cmd == "flood":
        return flood.main(args)
    if args.cmd == "boilerplate":
        return boilerplate.main(args)
    if args.cmd == "lengths":
        return lengths.main(args)
    if args.cmd == "online":
        return online.main(args)
    if args.cmd == "service":
        return service.main(args)
    if args.cmd == "short":
        return short.main(args)
    if args.cmd == "regress":
        return regress.main(args)
    return selftest.main(args)


if __name__ == "__main__":
    sys.exit(main())
