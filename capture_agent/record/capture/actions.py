"""Actions of captured RDDs: run the compiled job, then register its output capture point."""

from __future__ import annotations

import heapq
import logging
import operator
import random
import sys
from array import array
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from pyspark.core.rdd import RDD

from capture_agent.protocol import OUTPUT_FORMAT_PROPERTY, OUTPUT_PATH_PROPERTY
from capture_agent.record.capture.compiler import Compiler
from capture_agent.record.capture.kept import KeptJob
from capture_agent.record.capture.outputs import OutputRun, dense_ids, store_values, trim_partitions
from capture_agent.record.capture.pipeline import Branch, Pipeline, Tail
from capture_agent.record.capture.plan import NarrowOp, Node
from capture_agent.record.query.call_site import at_user_call_site
from capture_agent.record.query.recipes import IN_TASKS, Redo
from capture_agent.record.storage.layouts import FirstRestGlobal, FirstRestLocal, OneGlobal, OneLocal, Save, Single
from capture_agent.record.storage.manifest import CapturePoint
from capture_agent.record.storage.tables import TableTarget
from capture_agent.record.worker.actions import LocalReduce, Ordered
from capture_agent.record.worker.functions import identity_partition, pair_with_one

log = logging.getLogger("capture_agent")

OutputDone = Callable[[CapturePoint], None]


class Actions:
    """Runs the actions of one LineageContext's captured RDDs."""

    def __init__(self, sc: Any, compiler: Compiler, outputs: dict[str, OutputRun], after_action: OutputDone,
                 kept: KeptJob | None = None) -> None:
        self.sc = sc
        self.compiler = compiler
        self.store = compiler.store
        self.outputs = outputs
        self.after_action = after_action  # refreshes the run's manifest and registers the points
        self.kept = kept  # the job kept in the run's folder for replays from elsewhere

    # ------------------------------------------------------------------ record outputs
    @at_user_call_site
    def collect(self, node: Node, op: str) -> list[Any]:
        point, rdd, _ = self.compiler.output(node, op, "records", OneLocal())
        values = rdd.collect()
        self.finish(node, point, rdd, values=values, redo=Redo("collect"))
        return values

    @at_user_call_site
    def take(self, node: Node, num: int, op: str) -> list[Any]:
        pipe = self.compiler.pipeline(node)
        point, target = self.compiler.new_point("output", op, OneLocal(limit=num), [pipe.point], pipe.num_partitions)
        items: list[Any] = []
        total = pipe.num_partitions
        scanned = 0
        rdd: RDD | None = None
        while len(items) < num and scanned < total:
            # PySpark's take(): try one partition, then estimate how many more are needed.
            tries = 1
            if scanned > 0:
                if not items:
                    tries = scanned * 4
                else:
                    tries = int(1.5 * num * scanned / len(items)) - scanned
                    tries = min(max(tries, 1), scanned * 4)
            left = num - len(items)
            rdd = self.compiler.sink(pipe, Tail("records", target=target, limit=left, drain=not pipe.eager))
            parts = range(scanned, min(scanned + tries, total))
            items += self.sc.runJob(rdd, identity_partition, parts)
            scanned += tries
        result = items[:num]
        trim_partitions(self.store.fs, target, point, len(result))
        self.finish(node, point, rdd, values=result, redo=Redo("take", num))
        return result

    @at_user_call_site
    def count(self, node: Node) -> int:
        point, rdd, _ = self.compiler.output(node, "count", "count", Single())
        result = rdd.sum()
        self.finish(node, point, rdd, values=[result], ids=[0], redo=Redo("count", shape="one"))
        return result

    @at_user_call_site
    def aggregate(self, node: Node, op: str, method: str, args: tuple[Any, ...], redo: Redo) -> Any:
        """An action that computes one result: PySpark's ``method(*args)`` on the captured records."""
        point, rdd, _ = self.compiler.output(node, op, "consume", Single())
        result = getattr(rdd, method)(*args)
        self.finish(node, point, rdd, values=[result], ids=[0], redo=redo)
        return result

    @at_user_call_site
    def save_text(self, node: Node, path: str) -> None:
        point, rdd, _ = self.compiler.output(node, "saveAsTextFile", "save", Save())
        final = rdd.mapPartitions(identity_partition)
        final._bypass_serializer = True  # type: ignore[attr-defined]
        with self._output_named(path, "text"):
            final._jrdd.map(self.sc._jvm.BytesToString()).saveAsTextFile(path)
        point.layout = Save(path=_qualified(self.sc, path))
        self.finish(node, point, final)

    @at_user_call_site
    def save_records(self, node: Node, op: str, path: str | None, output_format: str,
                     save: Callable[[RDD], None]) -> None:
        """saveAsPickleFile, saveAsSequenceFile, the Hadoop saves: PySpark's ``save`` of the
        records, whose output ids are (part file, index of the record in it), as a collect's."""
        point, rdd, _ = self.compiler.output(node, op, "records", OneLocal())
        with self._output_named(path, output_format):
            save(rdd)
        self.finish(node, point, rdd)

    @contextmanager
    def _output_named(self, path: str | None, output_format: str) -> Iterator[None]:
        """The coarse agent names the job's output dataset from these local properties."""
        sc = self.sc
        previous = sc.getLocalProperty(OUTPUT_PATH_PROPERTY), sc.getLocalProperty(OUTPUT_FORMAT_PROPERTY)
        if path is not None:
            sc.setLocalProperty(OUTPUT_PATH_PROPERTY, path)
            sc.setLocalProperty(OUTPUT_FORMAT_PROPERTY, output_format)
        try:
            yield
        finally:
            sc.setLocalProperty(OUTPUT_PATH_PROPERTY, previous[0])
            sc.setLocalProperty(OUTPUT_FORMAT_PROPERTY, previous[1])

    # ------------------------------------------------------------------ outputs computed on the driver
    @at_user_call_site
    def count_by_value(self, node: Node, op: str, owner: Node | None = None,
                       merge: Callable[[Any, Any], Any] | None = None, keys: list[Any] | None = None,
                       redo: Redo | None = None) -> dict[Any, Any]:
        """countByValue/countByKey, or reduceByKeyLocally with ``merge``: map-side combine, then
        the partitions' dictionaries merged on the driver (in partition order, as PySpark does).
        Given ``keys`` (histogram's buckets), the output is one count per key in that order, 0
        and no inputs for a key no record has; ``redo`` replays it."""
        pipe = self.compiler.pipeline(node)
        if merge is None:
            pipe = Pipeline(pipe.point, [Branch(b.head, [*b.ops, NarrowOp(op, "map", pair_with_one)], b.offset)
                                         for b in pipe.branches], pipe.num_partitions)
        combiner, target = self.compiler.new_point("combiner", op, FirstRestLocal(), [pipe.point], pipe.num_partitions)
        rdd = self.compiler.sink(pipe, Tail("combine", target=target, merge=merge or operator.add))
        self.compiler.replay[combiner.capture_id] = (rdd, "combined")
        counts: dict[Any, Any] = defaultdict(int) if merge is None else {}
        sources: dict[Any, list[int]] = {}
        for key, (count, cid) in rdd.collect():
            if merge is None:
                counts[key] += count
            else:
                counts[key] = merge(counts[key], count) if key in counts else count
            sources.setdefault(key, []).append(cid)
        combiner.rdd_id = rdd.id()
        point, target = self.compiler.new_point("output", op, FirstRestGlobal(), [combiner], 1)
        import pyarrow as pa

        rows = list(counts) if keys is None else keys
        # computed on the driver: partition 0
        FirstRestGlobal.write(target, 0, pa.array([sources.get(k, []) for k in rows], type=pa.list_(pa.int64())))
        if redo is None:
            redo = Redo("countByValue", shape="items") if merge is None else Redo(IN_TASKS, LocalReduce(merge))
        values = list(counts.items()) if keys is None else [counts.get(k, 0) for k in keys]
        self.finish(owner or node, point, rdd, values=values, ids=list(range(len(rows))), redo=redo,
                    computed_from=node)
        return counts

    @at_user_call_site
    def ordered(self, node: Node, op: str, num: int, key: Callable[[Any], Any] | None, largest: bool) -> list[Any]:
        pipe = self.compiler.pipeline(node)
        point, target = self.compiler.new_point("output", op, OneGlobal(num=num), [pipe.point], 1)
        rdd = self.compiler.sink(pipe, Tail("gid"))
        pick = heapq.nlargest if largest else heapq.nsmallest
        keyfn = (lambda t: key(t[1])) if key is not None else operator.itemgetter(1)

        def per_partition(iterator: Any) -> Any:
            yield pick(num, iterator, key=keyfn)

        def merge(a: list[Any], b: list[Any]) -> list[Any]:
            return pick(num, a + b, key=keyfn)

        chosen = rdd.mapPartitions(per_partition).reduce(merge)
        return self._chosen(node, point, target, rdd, chosen,
                            Redo(IN_TASKS, Ordered(num, key, largest)) if key is not None
                            else Redo("top" if largest else "takeOrdered", num))

    @at_user_call_site
    def take_sample(self, node: Node, with_replacement: bool, num: int, seed: int, total: int,
                    sampled: Callable[[float, int], Node]) -> list[Any]:
        """takeSample: PySpark's algorithm (``total`` records; ``sampled(fraction, seed)``: the
        node's sample) on (global id, value) records, so each result keeps the input it is."""
        pipe = self.compiler.pipeline(node)
        point, target = self.compiler.new_point("output", "takeSample", OneGlobal(num=num), [pipe.point], 1)
        rdd: RDD | None = None

        def records(of: Node) -> list[tuple[int, Any]]:
            nonlocal rdd
            rdd = self.compiler.sink(self.compiler.pipeline(of), Tail("gid"))
            return rdd.collect()

        rand = random.Random(seed)
        if not with_replacement and num >= total:
            chosen = records(node)
            rand.shuffle(chosen)
        else:
            fraction = RDD._computeFractionForSampleSize(num, total, with_replacement)
            chosen = records(sampled(fraction, seed))
            while len(chosen) < num:  # as PySpark: rarely, another sample with another seed
                chosen = records(sampled(fraction, rand.randint(0, sys.maxsize)))
            rand.shuffle(chosen)
            chosen = chosen[:num]
        return self._chosen(node, point, target, rdd, chosen, Redo("takeSample", with_replacement, num, seed))

    def _chosen(self, node: Node, point: CapturePoint, target: TableTarget, rdd: RDD | None,
                chosen: list[tuple[int, Any]], redo: Redo) -> list[Any]:
        """An output the driver picked from (global id, value) records (top, takeOrdered, takeSample):
        its table (computed on the driver: partition 0) and its values, in the order picked."""
        OneGlobal.write(target, 0, array("q", [g for g, _ in chosen]))
        values = [v for _, v in chosen]
        self.finish(node, point, rdd, values=values, ids=list(range(len(values))), redo=redo)
        return values

    # ------------------------------------------------------------------ bookkeeping
    def finish(self, node: Node, point: CapturePoint, rdd: RDD | None, values: list[Any] | None = None,
               ids: list[int] | None = None, redo: Redo | None = None,
               computed_from: Node | None = None) -> OutputRun:
        """Records an action's output (``redo``: the action on a plain RDD of ``computed_from``,
        default ``node``, for what-if replay; None: not replayable)."""
        if rdd is not None:
            point.rdd_id = rdd.id()
        if values is not None and ids is None:
            ids = dense_ids(point.partition_rows(self.store.fs))
            if len(ids) != len(values):
                raise AssertionError(f"{point.capture_id}: {len(ids)} lineage rows for {len(values)} results")
        run = OutputRun(point, values, ids or [], computed_from or node, redo)
        if values is not None:
            try:
                store_values(self.store.fs, point, run.ids, values)
            except OSError as exc:  # the results stay in memory; only other processes miss them
                log.warning("lineage: cannot keep the results of %s: %s", point.capture_id, exc)
        node.last_output = run
        self.outputs[point.capture_id] = run
        if self.kept is not None and redo is not None:
            self.kept.keep(point.capture_id, run.node, redo, self._input_of)
        self.after_action(point)
        return run

    def _input_of(self, node: Node) -> str:
        """The input capture id of a source node of a job that ran."""
        head = self.compiler.compiled(node)
        assert head is not None, f"{node!r} was not compiled"
        return head.point.capture_id


def _qualified(sc: Any, path: str) -> str:
    jpath = sc._jvm.org.apache.hadoop.fs.Path(path)
    fs = jpath.getFileSystem(sc._jsc.hadoopConfiguration())
    return str(fs.makeQualified(jpath).toString())
