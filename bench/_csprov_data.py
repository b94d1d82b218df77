"""Provenance triples shaped like the CSProv paper's text-curation workflow (its Figure 1), made in Spark.

Each document of a filing set (FINDocs) is cut into sections and sentences; entity and metric
mentions are annotated in sentences, metrics are extracted, combined with the resolved entities
(ENTRes) and aggregated into knowledge-base facts. Every triple links attribute-values, as the
paper's lineage service records them. Per document:

    FINDocs -> FINSec (8) -> FINSent (96) -> ENTMnt (2 per sentence) -> ENTRes (a shared entity)
                                       \\-> MTRMnt (1 per sentence, also from an ENTMnt) -> F10WMTR
    F10WMTR (48, 2 MTRMnt each) -> MTRCS (also from an ENTRes) -> MTRAgg (4, 12 MTRCS each) -> KB (1)
    DOCMeta -> SECMeta -> KBMeta: 60 independent attribute chains (the small components)

1,044 triples a document. Entity resolution joins documents: half of them belong to one of
three filer groups whose mentions resolve to a shared pool of entities (popular ones more often),
which makes three large components holding about 40% of the items; the other documents resolve to
entities of their own (components of ~900 items), and the attribute chains are components of
three items. Popular entities have thousands of parents, as the paper's UDF outputs have hundreds.
"""

from __future__ import annotations

from typing import Any

TRIPLES_PER_DOC = 1_044
GROUPS = 3
ENTITIES_PER_GROUP = 20_000


def documents_for(triples: int) -> int:
    return max(1, triples // TRIPLES_PER_DOC)


def curation_triples(spark: Any, documents: int, seed: int = 14) -> Any:
    """A DataFrame (src, dst, op, src_dataset, dst_dataset) of about ``TRIPLES_PER_DOC * documents`` triples."""
    from pyspark.sql import functions as F

    docs = spark.range(documents).withColumnRenamed("id", "d").withColumn(
        "grp", F.when(F.pmod(F.xxhash64("d", F.lit(seed)), 6) < GROUPS, F.pmod(F.xxhash64("d", F.lit(seed)), 6))
    )

    def item(table: str, *parts: Any) -> Any:
        return F.concat_ws(":", F.lit(table), *[(F.col(p) if isinstance(p, str) else p).cast("string") for p in parts])

    def edges(frame: Any, src: Any, dst: Any, op: str, src_table: str, dst_table: str) -> Any:
        return frame.select(src.alias("src"), dst.alias("dst"), F.lit(op).alias("op"),
                            F.lit(src_table).alias("src_dataset"), F.lit(dst_table).alias("dst_dataset"))

    def explode(frame: Any, name: str, n: int) -> Any:
        return frame.withColumn(name, F.explode(F.sequence(F.lit(0), F.lit(n - 1))))

    sec = explode(docs, "s", 8)
    sent = explode(sec, "t", 12)
    ment = explode(sent, "m", 2)
    # The entity a mention resolves to: in a shared pool for a filer group (squared: popular ones
    # more often), else one of the document's own.
    u = (F.pmod(F.xxhash64("d", "t", "m", F.lit(seed)), 1_000_000) / 1_000_000.0)
    ment = ment.withColumn("entity", F.when(
        F.col("grp").isNotNull(), F.concat_ws("/", F.lit("g"), F.col("grp").cast("string"),
                                              F.floor(u * u * ENTITIES_PER_GROUP).cast("string")))
        .otherwise(F.concat_ws("/", F.lit("d"), F.col("d").cast("string"), F.floor(u * 40).cast("string"))))
    metric = sent.withColumn("w", F.pmod(F.xxhash64("d", "t", F.lit(seed + 1)), 2))
    f10 = explode(docs, "f", 48)
    cs = f10.withColumn("m", F.pmod(F.xxhash64("d", "f", F.lit(seed + 2)), 2)).withColumn(
        "t", F.pmod(F.xxhash64("d", "f", F.lit(seed + 3)), 96))
    cs = cs.join(ment.select("d", "t", "m", "entity"), ["d", "t", "m"])
    agg = explode(explode(docs, "a", 4), "k", 12)
    meta = explode(docs, "c", 60)

    parts = [
        edges(sec, item("FINDocs", "d"), item("FINSec", "d", "s"), "split", "FINDocs", "FINSec"),
        edges(sent, item("FINSec", "d", "s"), item("FINSent", "d", F.col("s") * 12 + F.col("t")), "sentences",
              "FINSec", "FINSent"),
        edges(ment, item("FINSent", "d", F.col("s") * 12 + F.col("t")),
              item("ENTMnt", "d", F.col("s") * 12 + F.col("t"), "m"), "annotate", "FINSent", "ENTMnt"),
        edges(ment, item("ENTMnt", "d", F.col("s") * 12 + F.col("t"), "m"), item("ENTRes", "entity"), "resolve",
              "ENTMnt", "ENTRes"),
        edges(metric, item("FINSent", "d", F.col("s") * 12 + F.col("t")),
              item("MTRMnt", "d", F.col("s") * 12 + F.col("t")), "extract", "FINSent", "MTRMnt"),
        edges(metric, item("ENTMnt", "d", F.col("s") * 12 + F.col("t"), "w"),
              item("MTRMnt", "d", F.col("s") * 12 + F.col("t")), "extract", "ENTMnt", "MTRMnt"),
        edges(explode(f10, "j", 2), item("MTRMnt", "d", F.col("f") * 2 + F.col("j")), item("F10WMTR", "d", "f"),
              "pivot", "MTRMnt", "F10WMTR"),
        edges(f10, item("F10WMTR", "d", "f"), item("MTRCS", "d", "f"), "contextualise", "F10WMTR", "MTRCS"),
        edges(cs, item("ENTRes", "entity"), item("MTRCS", "d", "f"), "contextualise", "ENTRes", "MTRCS"),
        edges(agg, item("MTRCS", "d", F.col("a") * 12 + F.col("k")), item("MTRAgg", "d", "a"), "aggregate",
              "MTRCS", "MTRAgg"),
        edges(explode(docs, "a", 4), item("MTRAgg", "d", "a"), item("KB", "d"), "publish", "MTRAgg", "KB"),
        edges(meta, item("DOCMeta", "d", "c"), item("SECMeta", "d", "c"), "copy", "DOCMeta", "SECMeta"),
        edges(meta, item("SECMeta", "d", "c"), item("KBMeta", "d", "c"), "copy", "SECMeta", "KBMeta"),
    ]
    out = parts[0]
    for more in parts[1:]:
        out = out.unionByName(more)
    return out
