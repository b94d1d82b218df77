"""LineageContext: wraps a SparkContext so that the RDDs it creates capture record lineage.

    lc = LineageContext(spark)             # or a SparkContext; store root: LINEAGE_STORE
    counts = lc.textFile(path).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add)
    counts.collect()
    counts.getLineage().filter(lambda kv: kv[0] == "error").goBackAll().collect()

The lineage of one LineageContext lives in one run folder of the lineage store
(``<LINEAGE_STORE>/<application id>``), and its capture points are announced to the lineage server
through the coarse capture agent when one runs for the same SparkContext. At start it checks, once
per SparkContext and with one tiny task, that the executors' Python can run the capture code.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from pyroaring import BitMap64
from pyspark.core.rdd import RDD

from capture_agent.config import ConfigError, Settings, load_settings
from capture_agent.record.capture import events as _events
from capture_agent.record.capture.actions import Actions
from capture_agent.record.capture.captured_frames import CapturedDataFrame, user_frame
from capture_agent.record.capture.compiler import Compiler
from capture_agent.record.capture.frame_readers import CapturedReader
from capture_agent.record.capture.frame_sources import local_frame, rdd_frame
from capture_agent.record.capture.frames import FrameState, LineageFrame
from capture_agent.record.capture.inputs import CsvInput, ParallelizeInput, ParquetInput, TextInput
from capture_agent.record.capture.kept import KeptJob
from capture_agent.record.capture.outputs import OutputRun
from capture_agent.record.capture.plan import SourceNode
from capture_agent.record.capture.rdd import CapturedRDD
from capture_agent.record.capture.rerun import rerun_without
from capture_agent.record.capture.runtime import CaptureRuntime
from capture_agent.record.errors import LineageError, NotCaptured, ReplayNotPossible, ValuesNotAvailable
from capture_agent.record.query.engine import TraceEngine
from capture_agent.record.query.executors import check_executors, ship_task_code
from capture_agent.record.query.lineage_rdd import LineageRDD
from capture_agent.record.query.recipes import READ, SC, Recipe
from capture_agent.record.query.replay_strategies import Replay, replayed, report
from capture_agent.record.query.session import TraceSession
from capture_agent.record.query.stored_job import StoredJob
from capture_agent.record.query.values import Predicate
from capture_agent.record.storage.fs import StoreFS
from capture_agent.record.storage.ids import SHIFT, split_by_partition
from capture_agent.record.storage.manifest import CapturePoint, LineageStore
from capture_agent.record.storage.tables import FailureList, TableTarget

log = logging.getLogger("capture_agent")
class LineageContext:
    """Creates captured RDDs and holds the lineage of their jobs (one run of the lineage store).

    Args:
        spark_or_sc: a SparkSession or SparkContext.
        store: lineage store root, a local path or a URL (``s3://``, ``hdfs://``...; default
            ``LINEAGE_STORE``, else ``var/lineage`` in the cwd).
        trace_mode: ``auto`` (small trace steps in this process, big ones as Spark jobs),
            ``local`` or ``spark``.
        enabled: False (or ``LINEAGE_DISABLED=true`` / ``LINEAGE_ENABLED=false`` in the file or the
            environment) returns plain PySpark RDDs, capturing nothing.
        **agent_settings: settings of the coarse capture agent (``server_url``, ``token``, ``sink``...,
            see ``capture_agent.config``); when given, the agent is enabled for this SparkContext.
            Capture points are registered through the agent running for the SparkContext, if any.

    Raises:
        LineageError: the store cannot be written, or the executors cannot run the capture code.
    """

    def __init__(self, spark_or_sc: Any, store: str | None = None, *, trace_mode: str = "auto",
                 enabled: bool | None = None, **agent_settings: Any) -> None:
        sc = getattr(spark_or_sc, "sparkContext", spark_or_sc)
        if getattr(sc, "_jsc", None) is None:
            raise TypeError("LineageContext needs an active SparkSession or SparkContext")
        self.sc = sc
        self._spark = spark_or_sc if spark_or_sc is not sc else None
        self.app_id = str(sc.applicationId)
        try:
            # one settings path: these arguments, then LINEAGE_CONFIG's file, LINEAGE_* variables, defaults
            self.settings: Settings = load_settings({"store": store, "enabled": enabled})
        except ConfigError as exc:
            raise LineageError(str(exc)) from exc
        self.enabled = self.settings.active
        self.outputs: dict[str, OutputRun] = {}
        self.rdd_type: type[CapturedRDD] = CapturedRDD  # the implicit capture's falls back to plain RDDs
        self.events_sent = 0
        self._reported: dict[str, tuple[int, int, int]] = {}
        if not self.enabled:
            return
        try:
            fs = StoreFS.resolve(self.settings.store)
        except (ValueError, OSError) as exc:
            raise LineageError(f"LINEAGE_STORE={self.settings.store!r} cannot be opened: {exc}") from exc
        self.store = LineageStore.create(fs, self.app_id)
        ship_task_code()
        check_executors(sc)
        self._failures = sc.accumulator([], FailureList())
        self.compiler = Compiler(sc, self.store, self._target)
        self.compiler.keep_aggregates = self.settings.keep_aggregates
        self.kept = KeptJob(self.store, sc, self.settings.keep_functions_mb)
        self.frames = FrameState()
        self.actions = Actions(sc, self.compiler, self.outputs, self.after_action, self.kept)
        self._replay_report: dict[str, Any] = {}  # how the last what-if rerun computed its output
        self.lineage_session = TraceSession(self.store, sc, trace_mode, self.outputs, self._replay,
                                            self.capture_id_of, self._rerun, lambda: self._replay_report)
        self._rt = CaptureRuntime(sc, self.compiler, self.actions, self.lineage_session,
                                  lambda rdd, schema, ratio: user_frame(self, rdd_frame(self, rdd, schema, ratio)))
        if agent_settings:
            from capture_agent.agent import enable

            enable(spark_or_sc, **agent_settings)

    @property
    def run_dir(self) -> str:
        return self.store.fs.uri(self.store.run_dir)

    @property
    def engine(self) -> TraceEngine:
        return self.lineage_session.engine

    @property
    def spark(self) -> Any:
        if self._spark is None:
            from pyspark.sql import SparkSession

            self._spark = SparkSession.getActiveSession() or SparkSession(self.sc)
        return self._spark

    def _target(self, point: CapturePoint) -> TableTarget:
        return TableTarget.of(self.store.fs, point.location, point.capture_id, self._failures)

    # ------------------------------------------------------------------ inputs
    def textFile(self, name: str, minPartitions: int | None = None, use_unicode: bool = True) -> CapturedRDD:
        """Text lines (files, folders, globs, comma-separated lists); ids (split, line number),
        positions (file, byte offset)."""
        if not self.enabled:
            return self.sc.textFile(name, minPartitions, use_unicode)
        source = TextInput(self.sc, name, minPartitions, use_unicode)
        node = SourceNode(self.sc, "textFile", source, source.num_partitions,
                          Recipe(SC, "textFile", name, source.min_partitions, use_unicode))
        return self.rdd_type(self._rt, node)

    def parallelize(self, c: Iterable[Any], numSlices: int | None = None) -> CapturedRDD:
        if not self.enabled:
            return self.sc.parallelize(c, numSlices)
        data = c if isinstance(c, range) else list(c)
        rdd = self.sc.parallelize(data, numSlices)
        node = SourceNode(self.sc, "parallelize", ParallelizeInput(rdd), rdd.getNumPartitions(),
                          Recipe(SC, "parallelize", data, rdd.getNumPartitions()))
        return self.rdd_type(self._rt, node)

    def parquet(self, *paths: str) -> CapturedRDD:
        """Rows of Parquet files (DataFrame reader), ids kept as (file, row index)."""
        if not self.enabled:
            return self.spark.read.parquet(*paths).rdd
        source = ParquetInput(self.sc, self.spark, paths)
        node = SourceNode(self.sc, "parquet", source, source.num_partitions,
                          Recipe(READ, "parquet", *paths, attr="rdd"))
        return self.rdd_type(self._rt, node)

    def csv(self, path: str, header: bool = False, sep: str = ",", quote: str = '"') -> CapturedRDD:
        """Rows of CSV files (string fields), read as lines with byte-offset ids."""
        if not self.enabled:
            return self.spark.read.csv(path, header=header, sep=sep, quote=quote).rdd
        source = CsvInput(self.sc, self.spark, path, header, sep, quote)
        node = SourceNode(self.sc, "csv", source, source.num_partitions,
                          Recipe(READ, "csv", path, header=header, sep=sep, quote=quote, attr="rdd"))
        return self.rdd_type(self._rt, node)

    @property
    def read(self) -> Any:
        """Captured DataFrames from Parquet files and tables, text, CSV and JSON Lines
        (``capture.frame_sources``)."""
        if not self.enabled:
            return self.spark.read
        return CapturedReader(self)

    def createDataFrame(self, data: Any, schema: Any = None, samplingRatio: float | None = None,
                        verifySchema: bool = True) -> Any:
        """A captured DataFrame of local data (rows, tuples, dicts, a pandas DataFrame; ids are
        positions in the data) or of a captured RDD's records (its lineage continues), like
        ``spark.createDataFrame``."""
        if self.enabled and isinstance(data, CapturedRDD):
            return user_frame(self, rdd_frame(self, data, schema, samplingRatio))
        df = self.spark.createDataFrame(data, schema, samplingRatio, verifySchema)
        if not self.enabled:
            return df
        return user_frame(self, local_frame(self, df))

    def sql(self, sqlQuery: str, args: Any = None) -> Any:
        """``spark.sql(sqlQuery, args)`` as a captured DataFrame: its actions run the query with its
        plan rewritten in the JVM to carry its rows' ids (``capture/frame_plan.py``), as an
        unmodified job's queries are. A view of a captured DataFrame (``frame.createOrReplaceTempView``)
        is read as that frame's sources, with their ids; any other table or view is read as a new
        source. A query the capture cannot take raises ``UnsupportedOperation`` at its action."""
        if not self.enabled:
            return self.spark.sql(sqlQuery, args)
        return CapturedDataFrame(self, self.spark.sql(sqlQuery, args))

    def union(self, rdds: list[CapturedRDD]) -> CapturedRDD:
        result = rdds[0]
        for rdd in rdds[1:]:
            result = result.union(rdd)
        return result

    def emptyRDD(self) -> CapturedRDD:
        return self.parallelize([], 1)

    # ------------------------------------------------------------------ lineage
    def capture_points(self) -> list[CapturePoint]:
        return self.store.by_seq()

    def capture_id_of(self, target: Any) -> str:
        """The capture id of a point given as an id, a CapturePoint or a (compiled) captured RDD."""
        if isinstance(target, str):
            self.store.point(target)
            return target
        if isinstance(target, CapturePoint):
            return target.capture_id
        if isinstance(target, (CapturedDataFrame, LineageFrame)):
            if target._point is None:
                raise NotCaptured(f"{target!r} is not a source nor the output of an action that ran")
            return target._point
        if isinstance(target, CapturedRDD):
            head = self.compiler.compiled(target._node)
            if head is None:
                raise NotCaptured(f"{target!r} is not a capture point of a job that ran")
            return head.point.capture_id
        raise TypeError(f"cannot find the capture point of {target!r}")

    def lineage(self, target: Any, ids: Iterable[int] | None = None) -> LineageRDD:
        """A LineageRDD at any capture point (all its records, or the given ids)."""
        return LineageRDD.at_point(self.lineage_session, self.capture_id_of(target), ids)

    def capture_point_events(self) -> list[dict[str, Any]]:
        """``capture_point`` ingest events of every point and of every action that ran plain (for a
        caller that sends them itself)."""
        return (_events.capture_point_events(self.app_id, self.store, self.store.by_seq())
                + _events.not_captured_events(self.app_id, self.store))

    def lineage_bytes(self) -> int:
        return self.store.lineage_bytes()

    def missing_tables(self) -> dict[str, dict[int, str]]:
        """{capture id: {partition: why}} of the tables tasks could not write (empty: complete)."""
        return self.store.missing_tables()

    # ------------------------------------------------------------------ after each action
    def after_action(self, point: CapturePoint) -> None:
        """Records tables tasks could not write, refreshes the row and byte counts of the action's
        points, saves the manifest, and registers the points that changed; a storage failure is
        logged, never raised."""
        failures = list(self._failures.value)
        self._failures.value = []
        self.store.record_failures(failures)
        for capture_id, part, reason in failures:
            log.warning("lineage: table %d of %s was not written (%s): traces through it will say so",
                        part, capture_id, reason)
        try:
            self._after_action(point)
        except OSError as exc:
            log.warning("lineage: cannot update the lineage store %s: %s", self.run_dir, exc)

    def _after_action(self, point: CapturePoint) -> None:
        changed = []
        for cid in sorted(self.store.ancestors(point.capture_id)):
            p = self.store.point(cid)
            self.store.refresh_stats(p)
            state = (p.rows, p.bytes, len(p.missing))
            if self._reported.get(cid) != state:
                self._reported[cid] = state
                changed.append(p)
        self.store.save()
        batch = _events.capture_point_events(self.app_id, self.store, sorted(changed, key=lambda p: p.seq))
        if _events.deliver(self.sc, batch):
            self.events_sent += len(batch)

    def _rerun(self, target: str, deleted: dict[str, BitMap64], dead: dict[str, BitMap64] | None = None) -> list[Any]:
        """The output ``target`` computed again without ``deleted`` (``capture.rerun``); ``dead``:
        per capture point, the ids lineage says die."""
        run = self.outputs.get(target)
        if run is None:
            raise ReplayNotPossible(f"{target} is not the output of an action of this context")
        job = StoredJob(self.store, self.sc, self.kept.document()) if target in self.kept.outputs else None
        if job is not None and job.why_not(target) is None:
            job.values = self.lineage_session.values
        else:
            job = None
        replay = Replay(target, deleted, dead.get(target, BitMap64()) if dead is not None else None, dead, job=job,
                        frame_redo=run.frame_redo,
                        whole=lambda: rerun_without(self.compiler, run, deleted))
        found = replayed(replay)
        assert found is not None  # the whole job always applies
        self._replay_report = report(replay, found[1])
        return found[0]

    def _replay(self, point: CapturePoint, ids: BitMap64, predicate: Predicate) -> list[tuple[int, Any]]:
        """Recomputes the partitions of ``point`` that hold ``ids`` and picks those records."""
        recipe = self.compiler.replay.get(point.capture_id)
        if recipe is None:
            raise ValuesNotAvailable(f"records at {point.capture_id} cannot be replayed here")
        rdd, kind = recipe
        wanted = {part: positions for part, positions in split_by_partition(ids)}

        def select(split: int, iterator: Iterable[Any]) -> Iterable[tuple[int, Any]]:
            chosen = wanted.get(split)
            if chosen is None:
                return
            hi = split << SHIFT
            if kind == "combined":
                for key, (combined, cid) in iterator:
                    if (cid & 0xFFFFFFFF) in chosen and (predicate is None or predicate((key, combined))):
                        yield cid, (key, combined)
            else:
                for i, value in iterator:
                    if i in chosen and (predicate is None or predicate(value)):
                        yield hi | i, value

        picked: RDD = rdd.mapPartitionsWithIndex(select)
        found = self.sc.runJob(picked, lambda it: it, sorted(wanted))
        return sorted(found, key=lambda t: t[0])
