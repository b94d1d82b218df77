"""Connected sets of large components (CSProv's Algorithm 3) and their dependencies, in Spark.

The paper's Partition-Large-Component recurses: the weakly connected components of a large
component within each split, and those still too large again within the sub-splits of their
split. Splits nest (``workflow.SplitTree``), so an edge whose ends share a sub-split also shares
the split above it: the components at one level refine those at the level above, and every level
can be computed at once. Each item gets one copy per level of its dataset's split path (its top
split, the sub-split holding it, ... down to a split that is not cut further), an edge is copied
to every level where its two ends lie in the same split, and one run of ``connected_components``
labels every copy. An item's connected set is its component at the first level where that
component holds fewer than ``threshold`` items or its split is not cut further. Set dependencies
are the distinct (source set, derived set) pairs of triples that cross sets.
"""

from __future__ import annotations

from typing import Any

from capture_agent.provenance.components import checkpoint, connected_components
from capture_agent.provenance.workflow import SplitTree


def connected_sets(spark: Any, items: Any, edges: Any, tree: SplitTree, threshold: int) -> Any:
    """The connected set of every item of the large components.

    Args:
        items: DataFrame (``id``, ``dataset``) of the items to cut (whole components).
        edges: DataFrame (``a``, ``b``) of item ids (edges leaving ``items`` are ignored).
        tree: the splits of the workflow's dataset graph.
        threshold: a set holds fewer items than this unless its split is not cut further.

    Returns:
        DataFrame (``id``, ``csid``, ``split``): a set's id is its smallest item id.
    """
    from pyspark.sql import functions as F

    levels = tree.levels()
    depth = max((len(path) for path in levels.values()), default=1)
    steps = spark.createDataFrame(
        [(d, level, key, level == len(path) - 1)
         for d, path in sorted(levels.items()) for level, key in enumerate(path)] or [("", 0, "", True)],
        "dataset string, level int, key string, leaf boolean",
    )
    copies = checkpoint(items.join(F.broadcast(steps), "dataset").select(
        "id", "level", "key", "leaf", (F.col("id") * depth + F.col("level")).alias("copy")
    ))
    ends = copies.select("id", "level", "key")
    inside = (
        edges.join(ends.toDF("a", "level", "ka"), "a")
        .join(ends.toDF("b", "level", "kb"), ["b", "level"])
        .where(F.col("ka") == F.col("kb"))
        .select((F.col("a") * depth + F.col("level")).alias("a"), (F.col("b") * depth + F.col("level")).alias("b"))
    )
    labels = connected_components(copies.select(F.col("copy").alias("id")), inside)
    sized = labels.join(labels.groupBy("label").count(), "label").withColumnRenamed("id", "copy")
    placed = copies.join(sized, "copy").where((F.col("count") < threshold) | F.col("leaf"))
    first = placed.groupBy("id").agg(F.min(F.struct("level", "label", "key")).alias("at"))
    # A copy's label is the smallest copy id of its component: the set's smallest item id, times depth, plus level.
    return first.select("id", F.expr(f"at.label div {depth}").alias("csid"),
                        F.col("at.key").alias("split"))


def set_dependencies(triples: Any) -> Any:
    """(``src_csid``, ``dst_csid``) once per pair of different sets that a triple connects."""
    from pyspark.sql import functions as F

    return triples.where(F.col("src_csid") != F.col("dst_csid")).select("src_csid", "dst_csid").distinct()
