"""CapturedRDD: an RDD whose jobs capture record-level lineage.

Every method has PySpark's signature and returns what PySpark returns. Transformations build the
logical plan (``plan.py``; wide ones in ``rdd_shuffles.py``); actions (``rdd_actions.py``) compile it
(``compiler.py``), run it (``actions.py``), and register an output
capture point; ``getLineage()`` starts a trace at the last action's output. A method PySpark
offers but this class does not raises ``UnsupportedOperation`` naming it.
"""

from __future__ import annotations

import copy
import itertools
import random
import sys
from collections.abc import Callable, Iterable
from typing import Any

from pyspark import StorageLevel
from pyspark.core.rdd import RDD, Partitioner
from pyspark.rddsampler import RDDRangeSampler, RDDSampler, RDDStratifiedSampler

from capture_agent.record.capture.compiler import checkpoint
from capture_agent.record.capture.plan import NarrowNode, NarrowOp, Node, PartitionsNode
from capture_agent.record.capture.rdd_actions import ActionMethods
from capture_agent.record.capture.rdd_shuffles import ShuffleMethods
from capture_agent.record.capture.runtime import CaptureRuntime
from capture_agent.record.errors import UnsupportedOperation
from capture_agent.record.query.recipes import Recipe, Ref


def _pipe_function(command: str, env: dict[str, str], check_code: bool) -> Callable[[Iterable[Any]], Iterable[str]]:
    """The partition function of PySpark's RDD.pipe."""

    def func(iterator: Iterable[Any]) -> Iterable[str]:
        import shlex
        from subprocess import PIPE, Popen
        from threading import Thread

        process = Popen(shlex.split(command), env=env, stdin=PIPE, stdout=PIPE)

        def feed(out: Any) -> None:
            for obj in iterator:
                out.write((str(obj).rstrip("\n") + "\n").encode("utf-8"))
            out.close()

        Thread(target=feed, args=[process.stdin]).start()

        def check_return_code() -> Iterable[bytes]:
            process.wait()
            if check_code and process.returncode:
                from pyspark.errors import PySparkRuntimeError

                raise PySparkRuntimeError(errorClass="PIPE_FUNCTION_EXITED",
                                          messageParameters={"func_name": command,
                                                             "error_code": str(process.returncode)})
            yield from ()

        assert process.stdout is not None  # stdout=PIPE
        return (x.rstrip(b"\n").decode("utf-8")
                for x in itertools.chain(iter(process.stdout.readline, b""), check_return_code()))

    return func


def _whole_partition(lineage: str) -> bool:
    if lineage not in ("interval", "partition"):
        raise ValueError(f"lineage must be 'interval' or 'partition', not {lineage!r}")
    return lineage == "partition"


class CapturedRDD(ShuffleMethods, ActionMethods):
    """An RDD of a LineageContext: PySpark's API, with record-level lineage captured."""

    def __init__(self, rt: CaptureRuntime, node: Node) -> None:
        self._rt = rt
        self._node = node

    # ------------------------------------------------------------------ basics
    @property
    def context(self) -> Any:
        return self._rt.sc

    ctx = context

    @property
    def partitioner(self) -> Partitioner | None:
        return self._node.partitioner

    def getNumPartitions(self) -> int:
        return self._node.num_partitions

    def id(self) -> int:
        return self._node.seq

    def plain(self) -> RDD:
        """The same computation as a plain PySpark RDD, without capture."""
        return self._node.plain()

    def cache(self) -> CapturedRDD:
        return self.persist(StorageLevel.MEMORY_ONLY)

    def persist(self, storageLevel: StorageLevel = StorageLevel.MEMORY_ONLY) -> CapturedRDD:
        if self._node.storage_level is None:
            self._node.storage_level = storageLevel
        return self

    def unpersist(self, blocking: bool = False) -> CapturedRDD:
        self._node.storage_level = None
        self._rt.compiler.forget(self._node)
        return self

    @property
    def is_cached(self) -> bool:
        return self._node.cached

    def checkpoint(self) -> None:
        """PySpark's checkpoint: the captured records (values with their positions) are saved to
        the checkpoint directory by the next job, and later jobs read them there; the lineage goes
        on through it as through a cached RDD (output <- one input)."""
        if self._rt.sc._jsc.sc().getCheckpointDir().isEmpty():
            raise UnsupportedOperation("checkpoint", "set a checkpoint directory first "
                                       "(SparkContext.setCheckpointDir), as for a plain RDD")
        self._checkpoint("reliable")

    def localCheckpoint(self) -> None:
        """PySpark's localCheckpoint (kept on the executors' storage), lineage as ``checkpoint``."""
        self._checkpoint("local")

    def _checkpoint(self, how: str) -> None:
        self._node.checkpoint = how
        head = self._rt.compiler.compiled(self._node)  # already computed: as PySpark, from the next job on
        if head is not None:
            checkpoint(head.rdd, how)

    def isCheckpointed(self) -> bool:
        head = self._rt.compiler.compiled(self._node)
        return head is not None and self._node.checkpoint is not None and head.rdd.isCheckpointed()

    def isLocallyCheckpointed(self) -> bool:
        return self._node.checkpoint == "local"  # as PySpark: from the call on

    def getCheckpointFile(self) -> str | None:
        head = self._rt.compiler.compiled(self._node)
        return head.rdd.getCheckpointFile() if head is not None and self._node.checkpoint == "reliable" else None

    def getStorageLevel(self) -> StorageLevel:
        return self._node.storage_level or StorageLevel(False, False, False, False)

    def __repr__(self) -> str:
        return f"CapturedRDD[{self._node.seq}] {self._node.op}"

    def name(self) -> str | None:
        return getattr(self._node, "name", None)

    def setName(self, name: str) -> CapturedRDD:
        self._node.name = name  # type: ignore[attr-defined]
        return self

    def toDebugString(self) -> bytes:
        """The captured plan, one node per line (heads start the stages that capture lineage)."""
        lines: list[str] = []

        def walk(node: Node, depth: int) -> None:
            mark = "*" if node.is_head else " "
            lines.append(f"{'  ' * depth}{mark}({node.num_partitions}) {node.op} [{node.kind} #{node.seq}]")
            for parent in node.parents:
                walk(parent, depth + 1)

        walk(self._node, 0)
        return "\n".join(lines).encode("utf-8")

    def toDF(self, schema: Any = None, sampleRatio: float | None = None) -> Any:
        """The records as a captured DataFrame (``capture.frame_sources.rdd_frame``)."""
        return self._rt.to_frame(self, schema, sampleRatio)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if hasattr(RDD, name):
            raise UnsupportedOperation(name, "use .plain() to run it without lineage")
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

    def _wrap(self, node: Node) -> CapturedRDD:
        return type(self)(self._rt, node)

    def _other(self, other: Any, operation: str) -> Node:
        if not isinstance(other, CapturedRDD):
            raise UnsupportedOperation(operation, "both RDDs must come from the same LineageContext "
                                       f"(got {type(other).__name__})")
        if other._rt is not self._rt:
            raise UnsupportedOperation(operation, "the RDDs belong to different LineageContexts")
        return other._node

    # ------------------------------------------------------------------ narrow
    def _narrow(self, name: str, template: str, func: Any, preserves: bool, method: str, *args: Any,
                bound: bool = False) -> CapturedRDD:
        """A narrow node; its plain RDD is the parent's ``method(*args)``."""
        op = NarrowOp(name, template, func, bound)
        return self._wrap(NarrowNode(self._node, op, preserves, Recipe(Ref(self._node), method, *args)))

    def map(self, f: Callable[[Any], Any], preservesPartitioning: bool = False) -> CapturedRDD:
        return self._narrow("map", "map", f, preservesPartitioning, "map", f, preservesPartitioning)

    def flatMap(self, f: Callable[[Any], Iterable[Any]], preservesPartitioning: bool = False) -> CapturedRDD:
        return self._narrow("flatMap", "flat", f, preservesPartitioning, "flatMap", f, preservesPartitioning)

    def filter(self, f: Callable[[Any], bool]) -> CapturedRDD:
        return self._narrow("filter", "filter", f, True, "filter", f)

    def mapValues(self, f: Callable[[Any], Any]) -> CapturedRDD:
        return self._narrow("mapValues", "mapValues", f, True, "mapValues", f)

    def flatMapValues(self, f: Callable[[Any], Iterable[Any]]) -> CapturedRDD:
        return self._narrow("flatMapValues", "flatMapValues", f, True, "flatMapValues", f)

    def keyBy(self, f: Callable[[Any], Any]) -> CapturedRDD:
        return self._narrow("keyBy", "keyBy", f, False, "keyBy", f)

    def keys(self) -> CapturedRDD:
        return self._narrow("keys", "keys", None, False, "keys")

    def values(self) -> CapturedRDD:
        return self._narrow("values", "values", None, False, "values")

    def sample(self, withReplacement: bool, fraction: float, seed: int | None = None) -> CapturedRDD:
        if not fraction >= 0:
            raise ValueError("Fraction must be nonnegative.")
        if seed is None:
            seed = random.randint(0, sys.maxsize)
        sampler = RDDSampler(withReplacement, fraction, seed)

        def bind(split: int) -> Callable[[Any], Any]:
            bound = copy.copy(sampler)
            bound.initRandomGenerator(split)
            if withReplacement:
                return lambda x: [x] * bound.getPoissonSample(fraction)
            uniform = bound.getUniformSample
            return lambda x: uniform() < fraction

        template = "flat" if withReplacement else "filter"
        return self._narrow("sample", template, bind, True, "sample", withReplacement, fraction, seed, bound=True)

    def randomSplit(self, weights: list[float], seed: int | None = None) -> list[CapturedRDD]:
        if not all(w >= 0 for w in weights):
            raise ValueError("Weights must be nonnegative")
        total = float(sum(weights))
        if not total > 0:
            raise ValueError("Sum of weights must be positive")
        bounds = [0.0]
        for w in weights:
            bounds.append(bounds[-1] + w / total)
        if seed is None:
            seed = random.randint(0, 2**32 - 1)
        chosen_seed = seed

        def split_between(lower: float, upper: float) -> CapturedRDD:
            sampler = RDDRangeSampler(lower, upper, chosen_seed)

            def bind(split: int) -> Callable[[Any], bool]:
                bound = copy.copy(sampler)
                bound.initRandomGenerator(split)
                uniform = bound.getUniformSample
                return lambda x: lower <= uniform() < upper

            return self._narrow("randomSplit", "filter", bind, True, "mapPartitionsWithIndex",
                                RDDRangeSampler(lower, upper, chosen_seed).func, True, bound=True)

        return [split_between(lb, ub) for lb, ub in zip(bounds, bounds[1:], strict=False)]

    def sampleByKey(self, withReplacement: bool, fractions: dict[Any, float], seed: int | None = None,
                    ) -> CapturedRDD:
        for fraction in fractions.values():
            assert fraction >= 0.0, f"Negative fraction value: {fraction}"
        sampler = RDDStratifiedSampler(withReplacement, fractions, seed)

        def bind(split: int) -> Callable[[Any], Any]:
            bound = copy.copy(sampler)
            bound.initRandomGenerator(split)
            if withReplacement:
                return lambda kv: [kv] * bound.getPoissonSample(fractions[kv[0]])
            uniform = bound.getUniformSample
            return lambda kv: uniform() < fractions[kv[0]]

        return self._narrow("sampleByKey", "flat" if withReplacement else "filter", bind, True,
                            "mapPartitionsWithIndex", sampler.func, True, bound=True)

    def zipWithUniqueId(self) -> CapturedRDD:
        n = self._node.num_partitions

        def bind(split: int) -> Callable[[Any], Any]:
            counter = itertools.count()
            return lambda v: (v, next(counter) * n + split)

        return self._narrow("zipWithUniqueId", "map", bind, False, "zipWithUniqueId", bound=True)

    def zipWithIndex(self) -> CapturedRDD:
        starts = [0]
        if self._node.num_partitions > 1:
            nums = self._node.plain().mapPartitions(lambda it: [sum(1 for _ in it)]).collect()
            for count in nums[:-1]:
                starts.append(starts[-1] + count)

        def bind(split: int) -> Callable[[Any], Any]:
            counter = itertools.count(starts[split])
            return lambda v: (v, next(counter))

        return self._narrow("zipWithIndex", "map", bind, False, "zipWithIndex", bound=True)

    def mapPartitions(self, f: Callable[[Iterable[Any]], Iterable[Any]], preservesPartitioning: bool = False,
                      *, lineage: str = "interval") -> CapturedRDD:
        """PySpark's mapPartitions. ``lineage="interval"`` (default): an output comes from the
        inputs pulled since the previous output; ``"partition"``: from every input of its partition."""
        return self._wrap(PartitionsNode(self._node, "mapPartitions", f, False, preservesPartitioning,
                                         Recipe(Ref(self._node), "mapPartitions", f, preservesPartitioning),
                                         _whole_partition(lineage)))

    def mapPartitionsWithIndex(self, f: Callable[[int, Iterable[Any]], Iterable[Any]],
                               preservesPartitioning: bool = False, *, lineage: str = "interval") -> CapturedRDD:
        return self._wrap(PartitionsNode(self._node, "mapPartitionsWithIndex", f, True, preservesPartitioning,
                                         Recipe(Ref(self._node), "mapPartitionsWithIndex", f, preservesPartitioning),
                                         _whole_partition(lineage)))

    mapPartitionsWithSplit = mapPartitionsWithIndex

    def pipe(self, command: str, env: dict[str, str] | None = None, checkCode: bool = False) -> CapturedRDD:
        """PySpark's pipe; an output line of the command comes from every input of its partition."""
        func = _pipe_function(command, env or {}, checkCode)
        return self._wrap(PartitionsNode(self._node, "pipe", func, False, False,
                                         Recipe(Ref(self._node), "pipe", command, env, checkCode), True))

    def glom(self) -> CapturedRDD:
        def func(iterator: Iterable[Any]) -> Iterable[list[Any]]:
            yield list(iterator)

        return self._wrap(PartitionsNode(self._node, "glom", func, False, False, Recipe(Ref(self._node), "glom")))
