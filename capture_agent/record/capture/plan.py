"""The logical plan behind captured RDDs.

Each captured RDD holds one ``Node``. A node knows its parents, how many partitions it has and
its partitioner (by the same rules PySpark uses, so captured and plain jobs partition alike), and
how to build its plain PySpark equivalent (``plain()``, from its ``recipes.Recipe``), which the
compiler uses for the helper jobs PySpark itself runs (sortByKey's sampling, zipWithIndex's
counts), what-ifs replay, and tests use as oracle.

Nodes that start a pipeline ("heads") become capture points: sources, shuffle outputs,
mapPartitions, coalesce, cartesian, and any cached RDD. Narrow nodes are fused into the stage
that reads their head; an unaware union is a virtual capture point (a partition mapping).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pyspark import StorageLevel
from pyspark.core.rdd import RDD, Partitioner

from capture_agent.record.query.call_site import user_call_site
from capture_agent.record.query.recipes import Recipe, live

_seq = itertools.count(1)

HEAD_KINDS = ("source", "partitions", "combine", "group", "shuffle", "repartition", "coalesce",
              "cartesian", "zip", "sort_within")


@dataclass(frozen=True)
class NarrowOp:
    """One record-at-a-time operator fused into a stage.

    ``template`` names the code shape (map, filter, flat, mapValues, flatMapValues, keyBy, keys,
    values); ``bound`` means ``func`` is a factory called with the partition index first.
    """

    name: str
    template: str
    func: Callable[..., Any] | None
    bound: bool = False


class Node:
    """A captured RDD's place in the logical plan."""

    kind = "node"

    def __init__(self, sc: Any, parents: list[Node], op: str, num_partitions: int,
                 partitioner: Partitioner | None, recipe: Recipe) -> None:
        self.sc = sc
        self.seq = next(_seq)
        self.parents = parents
        self.op = op
        self.num_partitions = num_partitions
        self.partitioner = partitioner
        self.storage_level: StorageLevel | None = None
        self.checkpoint: str | None = None  # "reliable" or "local" once checkpoint()ed
        self.recipe = recipe
        self._plain: RDD | None = None
        self.last_output: Any = None  # the OutputRun of the last action on this node
        # where the user's program made it ("reduceByKey at job.py:58"): its stages are named so
        self.call_site = user_call_site()

    @property
    def cached(self) -> bool:
        """Its records are kept (persisted or checkpointed): it heads a stage of its own."""
        return self.storage_level is not None or self.checkpoint is not None

    @property
    def is_head(self) -> bool:
        return self.kind in HEAD_KINDS or self.cached

    def plain(self) -> RDD:
        """The same computation as plain PySpark (built once, lazily)."""
        if self._plain is None:
            self._plain = self.recipe.build(self.sc, live)
            if self.storage_level is not None:
                self._plain.persist(self.storage_level)
        return self._plain

    def default_reduce_partitions(self) -> int:
        """PySpark's RDD._defaultReducePartitions."""
        sc = self.sc
        if sc._conf.contains("spark.default.parallelism"):
            return int(sc.defaultParallelism)
        return self.num_partitions

    def __repr__(self) -> str:
        return f"<{type(self).__name__} #{self.seq} {self.op} ({self.num_partitions} partitions)>"


class SourceNode(Node):
    """An input: text lines, a parallelized collection, Parquet rows or CSV lines."""

    kind = "source"

    def __init__(self, sc: Any, op: str, source: Any, num_partitions: int,
                 recipe: Recipe) -> None:
        super().__init__(sc, [], op, num_partitions, None, recipe)
        self.source = source  # inputs.TextInput / ParallelizeInput / ParquetInput / CsvInput


class NarrowNode(Node):
    kind = "narrow"

    def __init__(self, parent: Node, op: NarrowOp, preserves: bool,
                 recipe: Recipe) -> None:
        super().__init__(parent.sc, [parent], op.name, parent.num_partitions,
                         parent.partitioner if preserves else None, recipe)
        self.narrow = op


class PartitionsNode(Node):
    """mapPartitions, mapPartitionsWithIndex, glom: a stage capture point of its own."""

    kind = "partitions"

    def __init__(self, parent: Node, op: str, func: Callable[..., Any], with_index: bool, preserves: bool,
                 recipe: Recipe, whole_partition: bool = False) -> None:
        super().__init__(parent.sc, [parent], op, parent.num_partitions,
                         parent.partitioner if preserves else None, recipe)
        self.func = func
        self.with_index = with_index
        self.whole_partition = whole_partition


class CombineNode(Node):
    """combineByKey and everything built on it: a combiner point and a reducer point."""

    kind = "combine"

    def __init__(self, parent: Node, op: str, create: Callable[[Any], Any] | None,
                 merge_value: Callable[[Any, Any], Any],
                 merge_combiners: Callable[[Any, Any], Any], num_partitions: int,
                 partition_func: Callable[[Any], int], recipe: Recipe,
                 mode: str = "combine") -> None:
        super().__init__(parent.sc, [parent], op, num_partitions,
                         Partitioner(num_partitions, partition_func), recipe)
        self.mode = mode  # "distinct": the reduced value does not depend on which inputs survive
        self.create = create  # None: the value itself (reduceByKey)
        self.merge_value = merge_value
        self.merge_combiners = merge_combiners
        self.partition_func = partition_func
        self.combiner_point = ""  # the capture id of its map side, once compiled
        self.reducer_point = ""  # and of its reduce side


GROUP_MODES = ("group", "cogroup", "join", "left", "right", "full", "subtract_by_key", "subtract", "intersection")


class GroupNode(Node):
    """groupByKey, cogroup/groupWith, the joins, subtract(ByKey), intersection."""

    kind = "group"

    def __init__(self, parents: list[Node], op: str, mode: str, num_partitions: int,
                 partition_func: Callable[[Any], int], keeps_partitioner: bool,
                 recipe: Recipe) -> None:
        assert mode in GROUP_MODES
        super().__init__(parents[0].sc, parents, op, num_partitions,
                         Partitioner(num_partitions, partition_func) if keeps_partitioner else None, recipe)
        self.mode = mode
        self.partition_func = partition_func
        self.reducer_point = ""  # groupByKey's reduce side, once compiled (its kept groups)


class ShuffleNode(Node):
    """partitionBy, sortByKey (range partitioner + sort) and co-partitioned unions."""

    kind = "shuffle"

    def __init__(self, parent: Node, op: str, num_partitions: int, partition_func: Callable[[Any], int],
                 sort_key: Callable[[Any], Any] | None, ascending: bool, keeps_partitioner: bool,
                 recipe: Recipe, capture_kind: str = "stage") -> None:
        super().__init__(parent.sc, [parent], op, num_partitions,
                         Partitioner(num_partitions, partition_func) if keeps_partitioner else None, recipe)
        self.partition_func = partition_func
        self.sort_key = sort_key
        self.ascending = ascending
        self.capture_kind = capture_kind


class SortWithinNode(Node):
    """sortByKey into a single partition: a sort inside the partition, no shuffle."""

    kind = "sort_within"

    def __init__(self, parent: Node, sort_key: Callable[[Any], Any], ascending: bool,
                 recipe: Recipe) -> None:
        super().__init__(parent.sc, [parent], "sortByKey", parent.num_partitions, parent.partitioner, recipe)
        self.sort_key = sort_key
        self.ascending = ascending


class RepartitionNode(Node):
    kind = "repartition"

    def __init__(self, parent: Node, num_partitions: int, recipe: Recipe) -> None:
        super().__init__(parent.sc, [parent], "repartition", num_partitions, None, recipe)


class CoalesceNode(Node):
    kind = "coalesce"

    def __init__(self, parent: Node, num_partitions: int, recipe: Recipe) -> None:
        super().__init__(parent.sc, [parent], "coalesce", num_partitions, None, recipe)


class CartesianNode(Node):
    kind = "cartesian"

    def __init__(self, left: Node, right: Node, recipe: Recipe) -> None:
        super().__init__(left.sc, [left, right], "cartesian", left.num_partitions * right.num_partitions,
                         None, recipe)


class ZipNode(Node):
    """zip: the i-th records of partition k of each side, paired (as many partitions as a side)."""

    kind = "zip"

    def __init__(self, left: Node, right: Node, recipe: Recipe) -> None:
        super().__init__(left.sc, [left, right], "zip", left.num_partitions, None, recipe)


class UnionNode(Node):
    """union of RDDs that are not co-partitioned: partitions side by side, a virtual point."""

    kind = "union"

    def __init__(self, parents: list[Node], recipe: Recipe) -> None:
        super().__init__(parents[0].sc, parents, "union", sum(p.num_partitions for p in parents), None,
                         recipe)
