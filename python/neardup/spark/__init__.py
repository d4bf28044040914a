"""neardup on Spark: deduplicate a DataFrame larger than one machine, with the same clusters
as ``neardup dedup`` on the same data and options.

Every step runs on the executors (the driver collects small things only: per-partition
counts, the frequent features of the corpus pass, and the verified pairs of a small job):

0. **Corpus pass** (when the method learns from its corpus: boilerplate lines): see below.
1. **Sketch** (``mapInArrow``, Rust): each text's identity, length, encoded sketch and LSH
   band keys, as Arrow batches (no Python object per document).
2. **Rank**: documents are ordered by the keep policy, then by ``order_col`` (default: the id
   column), and numbered densely: a DataFrame has no input order, so this order plays the part
   of the file order of the command line (``keep="first"`` keeps the smallest).
3. **Exact copies**: documents with the same identity follow the best-ranked one, the leader.
   3b. **Common features** (``common_shingles="check"``): the features of crowded leaders
   that more than ``max_df`` leaders share are marked in their sketches (see below).
4. **Candidates**: leaders' band keys are exploded and grouped into buckets; each bucket is
   paired in Rust exactly as the batch engine pairs it (a member with the members before it,
   among the first ``bucket_cap``), pairs are deduplicated, and when they exceed
   ``documents x candidate_budget`` each document keeps its best-ranked partners up to the
   engine's water-filling level.
5. **Verify** (``mapInArrow``, Rust): the true similarity of each candidate pair.
6. **Cluster**: ``connected`` runs the large-star/small-star connected components of Kiveris
   et al. (SoCC 2014) on the verified pairs; ``representative`` (the default) runs the
   engine's greedy rule over the verified pairs: on the driver up to ``max_driver_pairs``
   of them, else on the executors, one connected component of the pairs at a time (the
   rule's choices in one component never depend on another's).
7. Exact copies follow their leader; ids are joined back.

Methods: those whose candidates are documents sharing a key: ``exact``, ``minhash``,
``supershingle`` (with ``min_super=1``), ``imatch`` and ``topn`` (their lexicon and TF-IDF
weights learned from the distributed corpus pass, every count); ``simhash`` (the engine's
exact Hamming join in distributed passes: stored and probe rows of block values, grouped
by block and value, paired in Rust); ``join`` with a set measure (prefix filtering: the
prefixes of the token sets, rarer tokens first, every pair at the threshold sharing a prefix
token; short texts only). ``join``
with ``measure="edit"`` is refused by name (Pass-Join's distributed form looks up on the order
of a text's squared length in keys). ``ngram``, ``segments`` and ``sentences``
(an order-dependent bucket walk, or a least number of shared keys under a budget) are
refused with a message naming the method.

The corpus pass of a batch run is distributed too (step 0): each text's corpus features are
computed on the executors, a distinct feature set counts once (as the command line counts
distinct texts), document frequencies are counted by a shuffle, and the features that reach
the least learned limit come back to the driver as an exact table that the sketcher learns
from. So ``boilerplate_df`` (boilerplate lines) is learned as ``neardup dedup`` learns it, at
the same default. Common shingles (``max_df`` with ``common_shingles="check"``, the
default) are found as the batch engine finds them, after the leaders are known (step 3b):
crowded leaders (a key shared by more than 10 leaders) have their features counted, with a
one-in-four sample of the others, and the features past the limit are marked in the crowded
leaders' sketches on the executors. ``weighting="idf"`` (every shingle's corpus count in every
sketch) is refused by name.

The package is this pipeline, one module per stage, each handing the next a DataFrame;
:func:`dedup` runs them in a row:

- ``options``: the options checked, the shuffle partitions, the executors' check;
- ``driver``: the small-input shortcut (the whole input deduplicated on the driver);
- ``corpus``: step 0, the corpus pass;
- ``sketch``: step 1, the sketches, and the rows checked;
- ``groups``: steps 2 and 3, ranks and exact copies (leaders and their members);
- ``common``: step 3b, common features;
- ``candidates``: step 4, by the method's form (shared keys, and templates' anchors), with
  ``hamming`` (SimHash's Hamming join), ``set_join`` (the set join's prefixes) and
  ``pairs`` (buckets paired in Rust, the candidate budget);
- ``verify``: step 5;
- ``cluster``: step 6;
- ``outcome``: step 7, exact copies follow their leader and ids are joined back;
- ``arrow``: the Arrow conversions the stages share.

:func:`spans` (module ``spans``) removes repeated passages from inside the rows' texts, with
the spans :func:`neardup.spans` removes: see that module.
"""

from __future__ import annotations

from typing import Any

from .. import _neardup
from .candidates import _candidate_pairs
from .cluster import _clustered, connected_components
from .common import _common_marked
from .corpus import _corpus_table
from .driver import _dedup_on_driver
from .groups import _exact_copies, _ranked
from .options import _check_columns, _check_executors, _checked_options, _shuffles_sized
from .outcome import _outcome
from .sketch import _sketched
from .spans import spans
from .verify import _verified

__all__ = ["connected_components", "dedup", "kept", "spans"]

_DEFAULT_BUCKET_CAP = 1000
_DEFAULT_CANDIDATE_BUDGET = 32


def dedup(
    df,
    text_col: str = "text",
    id_col: str = "id",
    method: str = "minhash",
    threshold: float | str | None = None,
    *,
    cluster: str = "representative",
    keep: str = "first",
    bucket_cap: int = _DEFAULT_BUCKET_CAP,
    candidate_budget: int = _DEFAULT_CANDIDATE_BUDGET,
    order_col: str | None = None,
    max_driver_pairs: int = 1_000_000,
    small_input_rows: int = 100_000,
    shuffle_partitions: int | None = None,
    **params: Any,
):
    """Deduplicates the DataFrame ``df`` and returns a DataFrame of ``(id, cluster,
    duplicate_of, similarity)``, one row per input row: ``cluster`` is the id of the kept row
    of its cluster (its own when kept), ``duplicate_of`` and ``similarity`` are null for kept
    rows. The id column keeps its type; ids must be unique and not null, texts not null.

    Options are :func:`neardup.dedup`'s (the command line's): the method's parameters by name,
    ``cluster``, ``keep``, ``bucket_cap``, ``candidate_budget``; plus ``order_col`` (the
    order that ``keep="first"`` and ties follow; default: the id column) and
    ``max_driver_pairs`` (with ``cluster="representative"``: up to this many verified pairs
    are clustered on the driver, the quickest for a small job; more are clustered on the
    executors, one connected component at a time; 0 always on the executors) and
    ``small_input_rows`` (an input of at most this many rows is collected to the driver and
    deduplicated there in one piece by :func:`neardup.dedup`, in the order Spark ranks by: the
    same clusters without a Spark stage per step; 0 never) and ``shuffle_partitions`` (the
    shuffle partitions of this run; default: one per 20,000 rows, at least two per core and
    at most the session's ``spark.sql.shuffle.partitions``, which is restored on return). The
    result is computed and cached (``persist``) before it is returned.
    """
    from pyspark.sql import functions as F

    params = _checked_options(method, threshold, params, cluster=cluster, keep=keep,
                              bucket_cap=bucket_cap, candidate_budget=candidate_budget,
                              max_driver_pairs=max_driver_pairs,
                              small_input_rows=small_input_rows,
                              shuffle_partitions=shuffle_partitions)
    _check_columns(df, text_col, id_col, order_col)
    spark = df.sparkSession
    order = F.col(order_col) if order_col else F.col(id_col)
    base = df.select(
        F.col(id_col).alias("id"),
        F.col(text_col).alias("text"),
        order.alias("order_key"),
    )
    rows = base.count()
    if rows <= small_input_rows:
        return _dedup_on_driver(spark, base, id_col, text_col, method, params, cluster, keep,
                                bucket_cap, candidate_budget)
    _check_executors(spark)
    with _shuffles_sized(spark, rows, shuffle_partitions):
        corpus = _corpus_table(base, method, params)
        ranked = _ranked(_sketched(base, method, params, corpus, id_col, text_col), keep)
        leader_rows, members = _exact_copies(ranked)
        info = _neardup.method_info(method, params)
        leader_rows = _common_marked(leader_rows, method, params, info)
        candidates = _candidate_pairs(leader_rows, method, params, info, bucket_cap,
                                      candidate_budget)
        verified = _verified(leader_rows, candidates, method, params, info, candidate_budget)
        assigned = _clustered(spark, leader_rows, verified, method, params, cluster,
                              max_driver_pairs)
        result = _outcome(ranked, members, assigned).persist()
        result.count()  # its last joins shuffle at this run's partitions too
        ranked.unpersist()
        return result


def kept(df, text_col: str = "text", id_col: str = "id", **options: Any):
    """The rows of ``df`` that :func:`dedup` keeps (with every column of ``df``)."""
    from pyspark.sql import functions as F

    result = dedup(df, text_col=text_col, id_col=id_col, **options)
    keep = result.filter(F.col("duplicate_of").isNull()).select(F.col("id").alias(id_col))
    return df.join(keep, id_col, "left_semi")
