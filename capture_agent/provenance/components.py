"""Weakly connected components of a graph held as Spark DataFrames, computed on the cluster.

Min-label hooking with pointer jumping and edge contraction (the hook-and-shortcut family of
Shiloach-Vishkin; as in "Connected Components in MapReduce and Beyond", Kiveris et al.): each
round every node of the remaining edge list hooks to its smallest neighbour, the hooks are
shortcut until every node points at a root (pointer jumping: a self-join of the hook table,
``O(log depth)`` joins), the edges are rewritten between roots (self-loops and duplicates
dropped), and the labels of the original nodes follow their roots. The edge list shrinks every
round and the loop ends when it is empty; every step is a DataFrame join or aggregate, nothing is
collected to the driver but counts. A component's label is its smallest node id.

Each round's tables are checkpointed locally (``localCheckpoint``) so the plans stay short.
"""

from __future__ import annotations

from typing import Any

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

    labels = nodes.select("id", F.col("id").alias("label")).localCheckpoint()
    graph = _normalised(edges).localCheckpoint()
    for _ in range(MAX_ROUNDS):
        if graph.isEmpty():
            return labels
        roots = _shortcut(_hooks(graph))
        graph = _contracted(graph, roots).localCheckpoint()
        labels = (
            labels.join(roots.withColumnRenamed("id", "label"), "label", "left")
            .select("id", F.coalesce("root", "label").alias("label"))
            .localCheckpoint()
        )
    raise RuntimeError(f"connected components did not converge in {MAX_ROUNDS} rounds")


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

    current = hooks
    while True:
        grand = current.alias("c").join(
            current.select(F.col("id").alias("pid"), F.col("parent").alias("gp")),
            F.col("c.parent") == F.col("pid"),
            "left",
        )
        jumps = F.coalesce("gp", "parent")
        jumped = grand.select("id", jumps.alias("parent"), (jumps != F.col("parent")).alias("moved"))
        jumped = jumped.localCheckpoint()
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
