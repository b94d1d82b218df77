"""Building a CSProv index over provenance triples: a Spark job, incremental over new triples.

A build reads the triples (Parquet files), gives every item a 64-bit id and a dataset, computes
weakly connected components (``components``), cuts the components of at least ``threshold`` items
into connected sets along the workflow's dataset graph (``partition``; smaller components are one
set each), labels every triple with the sets of its two items, derives the set dependencies and
writes a new index generation (``layout``).

Given the previous generation, only new triples are read: their items get ids after the old
ones, components are merged by contracting each old component to its id (a small graph: the new
edges between old components and new items), and only the large components that new triples
touched are cut again; the others keep their sets. Every triple is then labelled again by a join
(no iteration) and the generation is written whole.

An item's dataset is the one its triples name (the smallest when they disagree), else ``op:<op>``
of the first operation deriving it, else ``(source)``; it is fixed when the item is first seen.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from capture_agent.provenance import layout
from capture_agent.provenance.components import checkpoint, connected_components
from capture_agent.provenance.partition import connected_sets, set_dependencies
from capture_agent.provenance.workflow import DatasetGraph, SplitTree
from capture_agent.record.storage.fs import StoreFS

log = logging.getLogger(__name__)
TRIPLES_DDL = "src string, dst string, op string, src_dataset string, dst_dataset string"
SOURCE_DATASET = "(source)"


@dataclass(frozen=True)
class BuildOptions:
    """What a build is asked: the size threshold, optional top-level splits, the bucket count."""

    threshold: int = 25_000
    splits: list[list[str]] | None = None
    buckets: int = layout.DEFAULT_BUCKETS


@dataclass
class BuildReport:
    """What a build made (written to the generation's ``meta.json``)."""

    counts: dict[str, int] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    incremental: bool = False

    def lap(self, name: str, started: float) -> float:
        now = time.monotonic()
        self.timings[name] = round(now - started, 3)
        log.info("provenance index build: %s in %.1f s", name, now - started)
        return now


def spark_uri(store: StoreFS, path: str) -> str:
    """A path of the store as Spark's readers and writers name it.

    Raises:
        ValueError: a store Spark is not set up to reach here (only local, s3 and gs).
    """
    if store.is_local:
        return "file://" + path
    if store.scheme == "s3":
        return "s3a://" + path
    if store.scheme == "gs":
        return "gs://" + path
    raise ValueError(f"provenance index builds need a local, s3:// or gs:// lineage store, not {store.scheme}://")


def build_index(spark: Any, store: StoreFS, batches: list[str], out: str, options: BuildOptions,
                previous: str | None = None, extra_meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """Builds an index generation in ``out`` (a store path) and returns its ``meta.json``.

    Args:
        spark: a SparkSession.
        store: the lineage store the batches and the index are in.
        batches: Parquet files of triples (store paths): all of them, or with ``previous`` the new ones.
        out: the new generation's folder.
        options: threshold, splits and buckets.
        previous: the folder of the generation to extend, or None to build from scratch.
        extra_meta: more fields for ``meta.json`` (which batches it holds...).
    """
    from pyspark.sql import functions as F

    report = BuildReport(incremental=previous is not None)
    old = json.loads(store.read_bytes(store.join(previous, layout.META))) if previous else None
    started = t = time.monotonic()
    uri = lambda *parts: spark_uri(store, store.join(*parts))  # noqa: E731
    new = spark.read.schema(TRIPLES_DDL).parquet(*[spark_uri(store, b) for b in batches]) if batches else \
        spark.createDataFrame([], TRIPLES_DDL)
    old_items = spark.read.parquet(uri(previous, layout.ITEMS)).drop("bucket") if previous else None
    items = checkpoint(_with_new_items(new, old_items, int(old["counts"]["next_item_id"]) if old else 0))
    ids = items.select("item", "item_id")
    new_edges = checkpoint(
        new.join(ids.toDF("src", "src_id"), "src").join(ids.toDF("dst", "dst_id"), "dst")
        .select("src", "dst", F.coalesce("op", F.lit("")).alias("op"), "src_id", "dst_id")
    )
    t = report.lap("items", t)

    if old_items is None:
        labels = connected_components(items.select(F.col("item_id").alias("id")),
                                      new_edges.select(F.col("src_id").alias("a"), F.col("dst_id").alias("b")))
        items = items.join(labels.toDF("item_id", "ccid_new"), "item_id").withColumn("ccid", F.col("ccid_new"))
        touched = items.select("ccid").distinct()
    else:
        items, touched = _merged_components(items, new_edges)
    items = checkpoint(items.drop("ccid_new"))
    t = report.lap("components", t)

    sizes = items.groupBy("ccid").agg(F.count("*").alias("size"))
    large = sizes.where(F.col("size") >= options.threshold).select("ccid")
    to_cut = large.join(touched, "ccid")
    pairs = _dataset_pairs(new_edges, items, old)
    datasets = [r[0] for r in items.select("dataset").distinct().collect()]
    tree = SplitTree.build(DatasetGraph.of(datasets, pairs), options.splits)
    cut_items = items.join(to_cut, "ccid").select(F.col("item_id").alias("id"), "dataset", "ccid")
    all_edges = _all_edges(spark, uri, previous, new_edges)
    sets = checkpoint(connected_sets(spark, cut_items, all_edges.select(F.col("src_id").alias("a"),
                                                                        F.col("dst_id").alias("b")),
                                     tree, options.threshold))
    # Touched components no longer large become one set each, untouched ones keep theirs.
    items = checkpoint(
        items.join(sets.toDF("item_id", "csid_cut", "split_cut"), "item_id", "left")
        .join(touched.withColumn("touched", F.lit(True)), "ccid", "left")
        .select(
            "item", "item_id", "dataset", "ccid",
            F.when(F.col("csid_cut").isNotNull(), F.col("csid_cut"))
            .when(F.col("touched").isNotNull() | F.col("csid").isNull(), F.col("ccid"))
            .otherwise(F.col("csid")).alias("csid"),
            F.when(F.col("csid_cut").isNotNull(), F.col("split_cut"))
            .when(F.col("touched").isNotNull() | F.col("split").isNull(), F.lit(""))
            .otherwise(F.col("split")).alias("split"),
        )
    )
    t = report.lap("sets", t)

    csids = items.select("item_id", "ccid", "csid")
    triples = (
        all_edges.join(csids.toDF("src_id", "ccid", "src_csid"), "src_id")
        .join(csids.select(F.col("item_id").alias("dst_id"), F.col("csid").alias("dst_csid")), "dst_id")
        .select("src", "dst", "op", "src_id", "dst_id", "ccid", "src_csid", "dst_csid")
    )
    deps = set_dependencies(triples)
    _write(items, triples, deps, uri, out, options.buckets)
    t = report.lap("write", t)

    report.counts = _counts(spark, items, new_edges, uri(out, layout.SET_DEPS), options.threshold, old)
    report.counts["components_cut"] = int(to_cut.count())
    report.lap("counts", t)
    report.timings["total"] = round(time.monotonic() - started, 3)
    meta = {
        "version": 1, "threshold": options.threshold, "buckets": options.buckets, "incremental": report.incremental,
        "splits": tree.as_json(), "dataset_edges": sorted([list(p) for p in pairs]),
        "counts": report.counts, "timings": report.timings, **(extra_meta or {}),
    }
    store.write_bytes(store.join(out, layout.META), json.dumps(meta, indent=1).encode())
    return meta


def _counts(spark: Any, items: Any, new_edges: Any, deps: str, threshold: int,
            old: dict[str, Any] | None) -> dict[str, int]:
    from pyspark.sql import functions as F

    row = items.agg(F.count("*").alias("items"), F.max("item_id").alias("max_id")).first()
    comps = items.groupBy("ccid").count().agg(
        F.count("*").alias("n"), F.sum((F.col("count") >= threshold).cast("int")).alias("large"),
        F.max("count").alias("largest")).first()
    sets = items.groupBy("csid").count().agg(
        F.count("*").alias("n"), F.sum((F.col("count") >= threshold).cast("int")).alias("oversize"),
        F.max("count").alias("largest")).first()
    new = int(new_edges.count())
    return {
        "items": int(row["items"]),
        "triples": new + (int(old["counts"]["triples"]) if old else 0),
        "new_triples": new,
        "components": int(comps["n"]),
        "large_components": int(comps["large"] or 0),
        "largest_component": int(comps["largest"] or 0),
        "sets": int(sets["n"]),
        "largest_set": int(sets["largest"] or 0),
        "oversize_sets": int(sets["oversize"] or 0),
        "set_dependencies": int(spark.read.parquet(deps).count()),
        "next_item_id": int(row["max_id"] if row["max_id"] is not None else -1) + 1,
    }


def _with_new_items(new: Any, old_items: Any, next_id: int) -> Any:
    """(item, item_id, dataset, ccid, csid, split): the old items as they were, the new ones with ids
    from ``next_id`` on, a dataset, and no component yet."""
    from pyspark.sql import functions as F

    ends = new.select(F.col("src").alias("item"), F.col("src_dataset").alias("given"), F.lit(None).cast("string")
                      .alias("derived")).unionByName(
        new.select(F.col("dst").alias("item"), F.col("dst_dataset").alias("given"),
                   F.concat(F.lit("op:"), F.coalesce("op", F.lit(""))).alias("derived")))
    fresh = ends.groupBy("item").agg(
        F.coalesce(F.min("given"), F.min("derived"), F.lit(SOURCE_DATASET)).alias("dataset"))
    if old_items is not None:
        fresh = fresh.join(old_items.select("item"), "item", "left_anti")
    # Ids are fixed here (checkpointed by the caller): monotonically_increasing_id is not stable
    # across recomputations.
    fresh = fresh.select("item", (F.monotonically_increasing_id() + F.lit(next_id)).alias("item_id"), "dataset",
                         F.lit(None).cast("bigint").alias("ccid"), F.lit(None).cast("bigint").alias("csid"),
                         F.lit(None).cast("string").alias("split"))
    if old_items is None:
        return fresh
    return old_items.select("item", "item_id", "dataset", "ccid", "csid", "split").unionByName(fresh)


def _merged_components(items: Any, new_edges: Any) -> tuple[Any, Any]:
    """Components after new edges: each old component contracted to its id, new items as they are.

    Returns the items with ``ccid`` updated and the (``ccid``) of the components new edges touched.
    """
    from pyspark.sql import functions as F

    node = items.select("item_id", F.coalesce("ccid", "item_id").alias("node"))
    contracted = (
        new_edges.join(node.toDF("src_id", "a"), "src_id").join(node.toDF("dst_id", "b"), "dst_id").select("a", "b")
    )
    nodes = contracted.select(F.col("a").alias("id")).union(contracted.select(F.col("b").alias("id"))).distinct()
    merged = checkpoint(connected_components(nodes, contracted))  # (id: old ccid or new item id, label)
    items = (
        items.withColumn("node", F.coalesce("ccid", "item_id"))
        .join(merged.toDF("node", "label"), "node", "left")
        .withColumn("ccid", F.coalesce("label", "node"))
        .drop("node", "label")
    )
    return items, merged.select(F.col("label").alias("ccid")).distinct()


def _dataset_pairs(new_edges: Any, items: Any, old: dict[str, Any] | None) -> set[tuple[str, str]]:
    """The dataset graph's edges: those of the new triples, and the previous generation's."""
    from pyspark.sql import functions as F

    ds = items.select("item_id", "dataset")
    rows = (
        new_edges.select("src_id", "dst_id")
        .join(ds.toDF("src_id", "a"), "src_id").join(ds.toDF("dst_id", "b"), "dst_id")
        .select("a", "b").distinct().where(F.col("a") != F.col("b")).collect()
    )
    pairs = {(r["a"], r["b"]) for r in rows}
    if old:
        pairs |= {(a, b) for a, b in old.get("dataset_edges", [])}
    return pairs


def _all_edges(spark: Any, uri: Any, previous: str | None, new_edges: Any) -> Any:
    """Every triple as (src, dst, op, src_id, dst_id): the previous generation's and the new ones."""
    if previous is None:
        return new_edges
    old = spark.read.parquet(uri(previous, layout.TRIPLES)).select("src", "dst", "op", "src_id", "dst_id")
    return old.unionByName(new_edges)


def _write(items: Any, triples: Any, deps: Any, uri: Any, out: str, buckets: int) -> None:
    from pyspark.sql import functions as F

    block = str(layout.ROW_GROUP_BYTES)
    (items.withColumn("bucket", F.pmod(F.crc32(F.col("item").cast("binary")), F.lit(buckets)))
     .repartition(buckets, "bucket").sortWithinPartitions("bucket", "item")
     .write.option("parquet.block.size", block).partitionBy("bucket").parquet(uri(out, layout.ITEMS)))
    (triples.withColumn("bucket", F.pmod(F.col("dst_csid"), F.lit(buckets)))
     .repartition(buckets, "bucket").sortWithinPartitions("bucket", "dst_csid")
     .write.option("parquet.block.size", block).partitionBy("bucket").parquet(uri(out, layout.TRIPLES)))
    deps.coalesce(1).write.parquet(uri(out, layout.SET_DEPS))
    (items.groupBy("csid").agg(F.first("ccid").alias("ccid"), F.first("split").alias("split"),
                               F.count("*").alias("items"))
     .coalesce(1).write.parquet(uri(out, layout.SETS)))
