"""What-if replay: an action's output computed again, as plain PySpark, without some input records.

The plan keeps every captured RDD's plain computation (``Node.plain``, built by its recipe from
other nodes' plain RDDs with the job's own functions). A rerun clears those plain RDDs for the
output's ancestors, gives each input that loses records a plain RDD that drops them (ids are
(partition, index in partition) of the input's plain RDD: text splits, parallelized slices,
Parquet partitions), applies the action again (``OutputRun.redo``, a ``recipes.Redo``) and puts
the original plain RDDs back. Every recipe reads other nodes through ``Node.plain``, so each
reads the substituted RDDs.

In the process that ran the job (a run opened from its folder replays the job kept there,
``query.stored_job``); the whole computation reruns, not just the keys the deletion reaches.
"""

from __future__ import annotations

from typing import Any

from pyroaring import BitMap

from capture_agent.record.capture.compiler import Compiler
from capture_agent.record.capture.outputs import OutputRun
from capture_agent.record.capture.plan import Node
from capture_agent.record.errors import ReplayNotPossible
from capture_agent.record.query.recipes import live
from capture_agent.record.query.stored_job import check_deletable
from capture_agent.record.storage.ids import split_by_partition
from capture_agent.record.worker.functions import dropping


def _ancestors(node: Node) -> list[Node]:
    seen: dict[int, Node] = {}
    todo = [node]
    while todo:
        current = todo.pop()
        if current.seq not in seen:
            seen[current.seq] = current
            todo.extend(current.parents)
    return list(seen.values())


def rerun_without(compiler: Compiler, run: OutputRun, deleted: dict[str, Any]) -> list[Any]:
    """``run``'s action on the job's inputs without ``deleted`` ({input capture id: ids}).

    Raises:
        ReplayNotPossible: the action, or an input losing records, cannot be replayed (naming it).
    """
    if run.redo is None or run.node is None:
        raise ReplayNotPossible(f"the output of {run.point.op} ({run.point.capture_id}) cannot be computed again")
    nodes = _ancestors(run.node)
    inputs: dict[str, Node] = {}
    for node in nodes:
        head = compiler.compiled(node)
        if node.kind == "source" and head is not None:
            inputs[head.point.capture_id] = node
    for cid in deleted:
        check_deletable(cid, inputs[cid].op if cid in inputs else None, run.point.capture_id)
    saved = {node.seq: node._plain for node in nodes}
    try:
        for node in nodes:
            node._plain = None
        for cid, ids in deleted.items():
            node = inputs[cid]
            gone = {part: BitMap(positions) for part, positions in split_by_partition(ids)}
            node._plain = node.recipe.build(node.sc, live).mapPartitionsWithIndex(dropping(gone))
        return list(run.redo(run.node.plain()))
    finally:
        for node in nodes:
            replayed = node._plain
            node._plain = saved[node.seq]
            if replayed is not None and replayed is not saved[node.seq] and replayed.is_cached:
                replayed.unpersist()
