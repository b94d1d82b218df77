"""What-if replay of a run opened from its folder: the job kept there (``capture.kept``) built
again as plain PySpark on this process's SparkContext, without some input records.

Each node's recipe is called as in the job's process, with other nodes' plain RDDs for its
references, PySpark's and this package's functions imported by name, JSON values as they are, and
every pickled function or value as a ``worker.stored.StoredFunction``: its bytes travel to the
executors inside the tasks and are loaded only there. Inputs losing records drop them by (partition,
index), as ``capture.rerun`` does; an input whose partitions differ here from the capture (another
split size, a changed file) cannot be replayed, and says so.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from typing import Any

from pyroaring import BitMap, BitMap64
from pyspark.core.rdd import RDD

from capture_agent.record.errors import ReplayNotPossible
from capture_agent.record.query.engine import Frontier
from capture_agent.record.query.recipes import Recipe, Redo, Ref
from capture_agent.record.query.replay_strategies import STRATEGIES, Replay, ReplayStrategy, replayed, report
from capture_agent.record.storage.ids import split_by_partition
from capture_agent.record.storage.manifest import LineageStore
from capture_agent.record.worker.functions import dropping
from capture_agent.record.worker.stored import LOAD_FAILED, OutsideTask, StoredFunction

FOLDER = "job"  # in the run's folder (``capture.kept`` writes it)
JOB_FILE = "job.json"
VERSION = 1
NAMED_PACKAGES = ("pyspark.", "capture_agent.")  # kept by name: importable where the replay runs
NAMED_MODULES = ("operator", "_operator", "builtins", "math")  # the standard library's, by name too
REPLAYABLE_SOURCES = ("textFile", "parallelize", "parquet")  # ids: (partition, index in partition)


def check_deletable(capture_id: str, op: str | None, output: str) -> None:
    """Raises ReplayNotPossible unless ``capture_id`` is an input of ``output`` (``op``: its
    operation, None when it is not one) whose records a replay can leave out."""
    if op is None:
        raise ReplayNotPossible(f"{capture_id} is not an input of {output}: only input records can be deleted in "
                                "a replay")
    if op not in REPLAYABLE_SOURCES:
        raise ReplayNotPossible(f"records of a {op} input cannot be left out in a replay yet")


def _named(name: str) -> Any:
    module, _, qualname = name.partition(":")
    if not (module.startswith(NAMED_PACKAGES) or module in NAMED_MODULES):
        raise ReplayNotPossible(f"the kept job names {name}, outside PySpark and this package")
    return getattr(importlib.import_module(module), qualname)


class StoredJob:
    """The job kept in a run's folder; ``rerun`` is a ``TraceSession`` rerun."""

    def __init__(self, store: LineageStore, sc: Any, document: dict[str, Any]) -> None:
        self.store = store
        self.sc = sc
        self.job = document
        self._folder = store.fs.join(store.run_dir, FOLDER)
        self._functions: dict[str, StoredFunction] = {}
        self.last_replay: Replay | None = None  # the last rerun's question and its answer's strategy
        self.last_strategy: ReplayStrategy | None = None
        self.values: Any = None  # the run's query.values.ValueReader: deleted input records, read back

    @classmethod
    def open(cls, store: LineageStore, sc: Any) -> StoredJob | None:
        """The run's kept job, or None when none was kept."""
        path = store.fs.join(store.run_dir, FOLDER, JOB_FILE)
        if not store.fs.exists(path):
            return None
        document = json.loads(store.fs.read_bytes(path))
        if document.get("version") != VERSION:
            return None
        return cls(store, sc, document)

    def why_not(self, target: str) -> str | None:
        """Why ``target`` cannot be replayed from the folder, or None when it can be tried."""
        if target in self.job.get("frames", {}):
            return None
        if target in self.job["outputs"]:
            redo = self.job["outputs"][target]["redo"]
            if redo["side_effects"]:
                return (f"{redo['method']} runs the job's functions for their side effects, which a replay "
                        "does not repeat")
            return None
        return self.job["not_kept"].get(target) or f"the job's functions were not kept for {target}"

    def report(self) -> dict[str, Any]:
        """How the last rerun computed its output (``replay_strategies.report``)."""
        return report(self.last_replay, self.last_strategy)

    def build(self, deleted: Frontier, given: dict[int, RDD] | None = None) -> Build:
        """A replay's plain RDDs without ``deleted`` (``given`` nodes' RDDs standing in for theirs)."""
        return Build(self, deleted, given)

    def rerun(self, target: str, deleted: Frontier, dead: Frontier | None = None) -> list[Any]:
        """``target``'s action again on the inputs without ``deleted`` ({input capture id: ids}), by
        the first strategy of ``replay_strategies.STRATEGIES`` that applies; ``dead``: per capture
        point the deletion reached, the ids lineage says die (subtracted sums use them).

        Raises:
            ReplayNotPossible: why (not kept, an input that cannot leave records out or differs
                here, a function that cannot be loaded on the cluster).
        """
        why = self.why_not(target)
        if why is not None:
            raise ReplayNotPossible(why)
        if target not in self.job.get("frames", {}):
            nodes = self.job["nodes"]
            inputs = {n["input"]: n for n in nodes.values() if "input" in n}
            for cid in deleted:
                check_deletable(cid, inputs[cid]["op"] if cid in inputs else None, target)
        try:
            replay = Replay(target, deleted, dead.get(target, BitMap64()) if dead is not None else None, dead, job=self)
            found = self.replayed(replay, STRATEGIES)
            assert found is not None  # the whole job always applies
            return found
        except OutsideTask as exc:
            raise ReplayNotPossible(str(exc)) from None
        except Exception as exc:
            if LOAD_FAILED in str(exc):
                line = next((x for x in str(exc).splitlines() if LOAD_FAILED in x), LOAD_FAILED)
                raise ReplayNotPossible(line.split("RuntimeError: ", 1)[-1].strip()) from None
            raise

    def replayed(self, replay: Replay, strategies: tuple[ReplayStrategy, ...]) -> list[Any] | None:
        """The new rows by the first of ``strategies`` that applies (kept as ``last_replay``,
        ``last_strategy``), or None."""
        self.last_replay, self.last_strategy = replay, None
        found = replayed(replay, strategies)
        if found is None:
            return None
        self.last_strategy = found[1]
        return found[0]

    def redo(self, target: str, build: Build) -> list[Any]:
        """``target``'s action on ``build``'s plain RDDs (whose given nodes stand in for theirs)."""
        redo = self.job["outputs"][target]["redo"]
        plain = build.rdd(self.job["outputs"][target]["node"])
        return Redo(redo["method"], *redo["args"], shape=redo["shape"]).run(plain, build.value)

    def frame_rows(self, target: str, deleted: Frontier) -> list[Any]:
        """A DataFrame output's rows again without ``deleted``: its kept plan, loaded for this
        process's session, its sources' files checked unchanged since capture (``frame_replay``)."""
        from pyspark.sql import SparkSession

        from capture_agent.record.query.frame_replay import loaded_plan, replay_rows

        kept = self.job["frames"][target]
        for source in kept["columns"]:
            self._check_files(source)
        spark = SparkSession.getActiveSession() or SparkSession(self.sc)
        data = self.store.fs.read_bytes(self.store.fs.join(self._folder, f"{kept['plan']}.plan"))
        try:
            plan = loaded_plan(self.sc, spark, data)
        except ReplayNotPossible:
            raise
        except Exception as exc:  # noqa: BLE001 - py4j's error: its Java exception says why
            why = next((line.strip(": ") for line in str(exc).splitlines() if "Exception" in line), str(exc))
            raise ReplayNotPossible(f"the query's kept plan cannot be loaded here ({why})") from None
        return replay_rows(spark, plan, kept["columns"], kept["names"], deleted)

    def _check_files(self, source: str) -> None:
        """Raises ReplayNotPossible when a file ``source`` read has changed or gone since capture."""
        from capture_agent.record.errors import InputChangedError
        from capture_agent.record.storage.layouts.inputs import check_files

        try:
            check_files(getattr(self.store.point(source).layout, "files", None) or [])
        except InputChangedError as exc:
            raise ReplayNotPossible(f"the input {source} cannot be replayed: {exc}") from None

    def build_node(self, node: dict[str, Any], value: Callable[[Any], Any], deleted: Frontier) -> RDD:
        spec = node["recipe"]
        if spec["method"] == "slices":  # a parallelized collection, cut in its tasks
            slices, count = spec["args"]
            rdd = self.sc.parallelize(range(count), count).mapPartitionsWithIndex(value(slices))
        else:
            on = Ref(spec["on"]["ref"]) if isinstance(spec["on"], dict) else spec["on"]
            recipe = Recipe(on, spec["method"], *spec["args"], attr=spec["attr"], **spec["kwargs"])
            rdd = recipe.build(self.sc, value)
        cid = node.get("input")
        if cid is None:
            return rdd
        if rdd.getNumPartitions() != node["partitions"]:
            raise ReplayNotPossible(f"the input {cid} has {rdd.getNumPartitions()} partitions here against "
                                    f"{node['partitions']} when it was captured (its files or split size changed)")
        ids = deleted.get(cid)
        if ids:
            gone = {part: BitMap(positions) for part, positions in split_by_partition(ids)}
            rdd = rdd.mapPartitionsWithIndex(dropping(gone))
        return rdd

    def function(self, digest: str) -> StoredFunction:
        if digest not in self._functions:
            data = self.store.fs.read_bytes(self.store.fs.join(self._folder, f"{digest}.pkl"))
            self._functions[digest] = StoredFunction(digest, data)
        return self._functions[digest]


class Build:
    """The plain RDDs of one replay of a kept job (each node built once), and its arguments decoded."""

    def __init__(self, job: StoredJob, deleted: Frontier, given: dict[int, RDD] | None = None) -> None:
        self.job = job
        self.deleted = deleted
        self._built: dict[int, RDD] = dict(given or {})  # nodes whose RDD is given

    def value(self, argument: Any) -> Any:
        if isinstance(argument, Ref):
            return self.rdd(argument.node)
        if "ref" in argument:
            return self.rdd(argument["ref"])
        if "value" in argument:
            return argument["value"]
        if "name" in argument:
            return _named(argument["name"])
        return self.job.function(argument["pickled"])

    def rdd(self, seq: int) -> RDD:
        if seq not in self._built:
            self._built[seq] = self.job.build_node(self.job.job["nodes"][str(seq)], self.value, self.deleted)
        return self._built[seq]
