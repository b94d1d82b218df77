"""Weakly connected components of a graph held as Spark DataFrames, computed on the cluster.

Min-label hooking with pointer jumping and edge contraction (the hook-and-shortcut family of
Shiloach-Vishkin; as in "Connected Components in MapReduce and Beyond", Kiveris et al.): each
round every node of the remaining edge list hooks to its smallest neighbour, the hooks are
shortcut until every node points at a root (pointer jumping: a self-join of the hook table,
``O(log depth)`` joins), and the edges are rewritten between roots (self-loops and duplicates
dropped). The edge list shrinks every round and the loop ends when it is empty. The rounds' root
maps are then composed from the last to the first (each smaller than the one before) and the
nodes joined once with the result. Every step is a DataFrame join or aggregate; nothing reaches
the driver but emptiness checks. A component's label is its smallest node id.

Each round's tables are checkpointed (``checkpoint``) so the plans stay short.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger(__name__)
MAX_ROUNDS = 64  # far above what hooking needs (rounds grow with log n); a guard against a bug looping


def connected_components(nodes: Any, edges: Any) -> Any:
    """The weakly connected component of every node.

    Args:
        nodes: DataFrame with a bigint column ``id`` (each node once).
        edges: DataFrame with bigint columns ``a`` and ``b`` between nodes (direction ignored).

    Returns:
        DataFrame (``id``, ``label``): ``label`` is the smallest id in the node's component.
    """
    from pyspark.sql import functions as F

    graph = checkpoint(_normalised(edges))
    maps: list[Any] = []
    while not graph.isEmpty():
        if len(maps) == MAX_ROUNDS:
            raise RuntimeError(f"connected components did not converge in {MAX_ROUNDS} rounds")
        roots = _shortcut(_hooks(graph))
        maps.append(roots)
        graph = checkpoint(_contracted(graph, roots))
        log.info("connected components: round %d", len(maps))
    final = None
    for roots in reversed(maps):  # a root of round r that kept edges has a root of round r + 1
        final = roots if final is None else checkpoint(
            roots.join(final.toDF("root", "later"), "root", "left")
            .select("id", F.coalesce("later", "root").alias("root"))
        )
    if final is None:
        return nodes.select("id", F.col("id").alias("label"))
    return nodes.join(final, "id", "left").select("id", F.coalesce("root", "id").alias("label"))


def checkpoint(frame: Any) -> Any:
    """``frame`` computed once and kept by the executors (``localCheckpoint``), its plan cut and its
    size estimate forgotten.

    Spark keeps the size estimate of the plan a checkpoint replaces, and estimates a join's size as
    the product of its sides': over rounds of joins of joins the estimates grow to numbers with
    millions of digits, and the optimizer spends minutes multiplying them. A DataFrame made again
    from the checkpointed rows has no estimate (Spark's default), so every round plans as fast as
    the first.
    """
    from pyspark.sql import DataFrame

    kept = frame.localCheckpoint()
    session = kept.sparkSession
    fresh = session._jsparkSession.internalCreateDataFrame(kept._jdf.queryExecution().toRdd(), kept._jdf.schema(),
                                                           False)
    return DataFrame(fresh, session)


def _normalised(edges: Any) -> Any:
    """Each undirected edge once, smaller id first, without self-loops."""
    from pyspark.sql import functions as F

    return (
        edges.where(F.col("a") != F.col("b"))
        .select(F.least("a", "b").alias("a"), F.greatest("a", "b").alias("b"))
        .distinct()
    )


def _hooks(graph: Any) -> Any:
    """(``id``, ``parent``): every node of the edge list and its smallest neighbour or itself."""
    from pyspark.sql import functions as F

    both = graph.select(F.col("a").alias("id"), F.col("b").alias("n")).unionByName(
        graph.select(F.col("b").alias("id"), F.col("a").alias("n"))
    )
    return both.groupBy("id").agg(F.min("n").alias("n")).select("id", F.least("n", "id").alias("parent"))


def _shortcut(hooks: Any) -> Any:
    """(``id``, ``root``): parents followed to their end by pointer jumping.

    Parents are never larger than their node, so the chains end at a node that is its own parent.
    """
    from pyspark.sql import functions as F

    current = checkpoint(hooks)  # read twice by each jump
    while True:
        grand = current.alias("c").join(
            current.select(F.col("id").alias("pid"), F.col("parent").alias("gp")),
            F.col("c.parent") == F.col("pid"),
            "left",
        )
        jumps = F.coalesce("gp", "parent")
        jumped = grand.select("id", jumps.alias("parent"), (jumps != F.col("parent")).alias("moved"))
        jumped = checkpoint(jumped)
        if jumped.where("moved").isEmpty():
            return jumped.select("id", F.col("parent").alias("root"))
        current = jumped.select("id", "parent")


def _contracted(graph: Any, roots: Any) -> Any:
    """The edges between the roots of their ends."""
    from pyspark.sql import functions as F

    ra = roots.select(F.col("id").alias("a"), F.col("root").alias("ra"))
    rb = roots.select(F.col("id").alias("b"), F.col("root").alias("rb"))
    moved = graph.join(ra, "a").join(rb, "b").select(F.col("ra").alias("a"), F.col("rb").alias("b"))
    return _normalised(moved)
