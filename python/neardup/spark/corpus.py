"""Step 0, the corpus pass: the features a method learns from its corpus (boilerplate lines,
imatch's lexicon, topn's weights) counted on the executors, and the table the sketcher
learns from broadcast to them."""

from __future__ import annotations

from .. import _neardup
from .arrow import _conform, _to_arrow


def _corpus_table(base, method: str, params: dict):
    """The corpus pass of a batch run, distributed: each text's corpus features (its lines'
    keys, for ``boilerplate_df``) are computed on the executors, a feature set counts once
    (as the batch engine counts distinct texts), the document frequencies are counted by a
    shuffle, and only the features that reach the least limit the method resolves for that
    many documents come back to the driver, as an encoded table the sketcher learns from,
    broadcast to the executors. ``None`` when the method learns nothing from its corpus."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, LongType, StructField, StructType

    if not _neardup.method_info(method, params)["learns_from_corpus"]:
        return None

    def features(batches):
        import pyarrow as pa

        from neardup import _neardup as native

        arrow_schema = pa.schema([
            pa.field("set", pa.int64(), False),
            pa.field("features", pa.list_(pa.field("element", pa.int64(), False)), False),
        ])
        for batch in batches:
            texts = batch.column("text")
            if texts.null_count:
                texts = texts.fill_null("")
            out = native.spark_corpus_features([texts], method, params, 1)
            yield _conform(out.columns, None, arrow_schema)

    schema = StructType([
        StructField("set", LongType(), False),
        StructField("features", ArrayType(LongType(), False), False),
    ])
    sets = (base.select("text").mapInArrow(features, schema)
            .dropDuplicates(["set"]).persist())
    documents = sets.count()
    # Only the counts that can reach a limit matter; a method that learns weights from every
    # count (imatch's lexicon, topn's TF-IDF) has no limit and gets them all.
    limits = _neardup.corpus_limits(method, params, documents)
    floor = max(1, min(limits.values())) if limits else 1
    counted = (sets.select(F.explode("features").alias("feature"))
               .groupBy("feature").count().filter(F.col("count") >= floor))
    table = _to_arrow(counted)
    sets.unpersist()
    encoded = _neardup.corpus_table(documents, table.column("feature").to_pylist(),
                                    table.column("count").to_pylist())
    return base.sparkSession.sparkContext.broadcast(encoded)
