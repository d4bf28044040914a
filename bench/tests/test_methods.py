"""The method list of the benches comes from the binary (`dedup --help`), not from a list kept
by hand: the parsing of the help text, the default `--methods` of `bench/run methods`, and,
when a binary is at hand ($NEARDUP_BIN or target/release/neardup), its list.

Run with `python -m unittest discover bench/tests` (with bench/ on PYTHONPATH).
"""

from __future__ import annotations

import os
import unittest

from neardup_bench import common, methods

HELP = """Options:
      --method <METHOD>                Method: `exact` (hash of the normalised text), `minhash`
          (MinHash-LSH) [default: minhash] [possible values: exact, minhash, simhash, join, ngram,
          supershingle, imatch, topn, segments, sentences]
      --cluster <CLUSTER>              Clustering [default: representative] [possible values:
          representative, connected]
"""


class MethodsTest(unittest.TestCase):
    def test_the_values_of_method_are_read_from_the_help(self):
        self.assertEqual(common.methods_in_help(HELP), [
            "exact", "minhash", "simhash", "join", "ngram", "supershingle", "imatch", "topn", "segments",
            "sentences"])

    def test_a_help_without_methods_stops_the_bench(self):
        with self.assertRaises(SystemExit):
            common.methods_in_help(HELP.replace("--method <METHOD>", "--other <X>"))

    def test_each_variant_runs_after_its_method(self):
        listed = common.methods_in_help(HELP)
        self.assertEqual(methods.default_methods(listed),
                         "exact minhash simhash join ngram supershingle imatch imatch-wide topn topn-3 segments "
                         "sentences sentences-longest")
        self.assertEqual(methods.default_methods(["minhash", "topn"]), "minhash topn topn-3")

    def test_the_binary_lists_every_method_of_a_variant(self):
        target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(common.ROOT, "target")
        binary = os.environ.get("NEARDUP_BIN") or os.path.join(target, "release", "neardup")
        if not os.access(binary, os.X_OK):
            self.skipTest(f"no binary at {binary}")
        listed = common.listed_methods(binary)
        self.assertIn("minhash", listed)
        for name, args in methods.VARIANTS.items():
            self.assertIn(args[1], listed, name)


if __name__ == "__main__":
    unittest.main()
