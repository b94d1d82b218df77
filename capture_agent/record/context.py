"""LineageContext: wraps a SparkContext so that the RDDs it creates capture record lineage.

    lc = LineageContext(spark)             # or a SparkContext; store root: LINEAGE_STORE
    counts = lc.textFile(path).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add)
    counts.collect()
    counts.getLineage().filter(lambda kv: kv[0] == "error").goBackAll().collect()

The lineage of one LineageContext lives in one run folder of the lineage store
(``<LINEAGE_STORE>/<application id>``), and its capture points are announced to the lineage server
through the coarse capture agent when one runs for the same SparkContext.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterable
from typing import Any

from pyroaring import BitMap64
from pyspark import cloudpickle
from pyspark.core.rdd import RDD

from capture_agent.record import events as _events
from capture_agent.record.actions import Actions
from capture_agent.record.compile import Compiler
from capture_agent.record.errors import NotCaptured, ValuesNotAvailable
from capture_agent.record.ids import SHIFT, split_by_partition
from capture_agent.record.inputs import CsvInput, ParallelizeInput, ParquetInput, TextInput
from capture_agent.record.lineage_rdd import LineageRDD
from capture_agent.record.outputs import OutputRun
from capture_agent.record.plan import SourceNode
from capture_agent.record.rdd import CapturedRDD
from capture_agent.record.store import CapturePoint, LineageStore, store_root
from capture_agent.record.trace import TraceEngine
from capture_agent.record.values import Predicate, ValueReader

log = logging.getLogger("capture_agent")


def _truthy(value: str) -> bool:
    return value.strip().lower() in ("1", "true", "yes", "on")


def _ship_by_value() -> None:
    # Workers need not have this package installed (or see the driver's sys.path): the task
    # code of capture_agent.record travels with the tasks.
    cloudpickle.register_pickle_by_value(sys.modules["capture_agent.record"])


class LineageContext:
    """Creates captured RDDs and holds the lineage of their jobs (one run of the lineage store).

    Args:
        spark_or_sc: a SparkSession or SparkContext.
        store: lineage store root (default ``LINEAGE_STORE``, else ``var/lineage`` in the cwd).
        trace_mode: ``auto`` (small trace steps in this process, big ones as Spark jobs),
            ``local`` or ``spark``.
        enabled: False (or ``LINEAGE_DISABLED=true``) returns plain PySpark RDDs, capturing nothing.
        **agent_settings: settings of the coarse capture agent (``server_url``, ``token``, ``sink``...,
            see ``capture_agent.config``); when given, the agent is enabled for this SparkContext.
            Capture points are registered through the agent running for the SparkContext, if any.
    """

    def __init__(self, spark_or_sc: Any, store: str | None = None, *, trace_mode: str = "auto",
                 enabled: bool | None = None, **agent_settings: Any) -> None:
        sc = getattr(spark_or_sc, "sparkContext", spark_or_sc)
        if getattr(sc, "_jsc", None) is None:
            raise TypeError("LineageContext needs an active SparkSession or SparkContext")
        self.sc = sc
        # LINEAGE_DISABLED=true (or enabled=False): inputs are plain PySpark RDDs, nothing is captured.
        self.enabled = enabled if enabled is not None else not _truthy(os.environ.get("LINEAGE_DISABLED", ""))
        self._spark = spark_or_sc if spark_or_sc is not sc else None
        self.app_id = str(sc.applicationId)
        if self.enabled:
            self.store = LineageStore.create(store, self.app_id)
        else:
            self.store = LineageStore(os.path.join(store_root(store), self.app_id), self.app_id)
        self.compiler = Compiler(self)
        self.actions = Actions(self)
        self.outputs: dict[str, OutputRun] = {}
        self.engine = TraceEngine(self.store, sc, trace_mode)
        self.values = ValueReader(self.store, self.engine.run_units, self.outputs, self._replay)
        self.events_sent = 0
        self._reported: dict[str, tuple[int, int]] = {}
        _ship_by_value()
        if agent_settings and self.enabled:
            from capture_agent.agent import enable

            enable(spark_or_sc, **agent_settings)

    @property
    def run_dir(self) -> str:
        return self.store.run_dir

    @property
    def spark(self) -> Any:
        if self._spark is None:
            from pyspark.sql import SparkSession

            self._spark = SparkSession.getActiveSession() or SparkSession(self.sc)
        return self._spark

    # ------------------------------------------------------------------ inputs
    def textFile(self, name: str, minPartitions: int | None = None, use_unicode: bool = True) -> CapturedRDD:
        """Text lines (files, folders, globs, comma-separated lists); ids (split, line number),
        positions (file, byte offset)."""
        if not self.enabled:
            return self.sc.textFile(name, minPartitions, use_unicode)  # type: ignore[return-value]
        source = TextInput(self.sc, name, minPartitions, use_unicode)
        node = SourceNode(self, "textFile", source, source.num_partitions,
                          lambda ps: self.sc.textFile(name, minPartitions, use_unicode))
        return CapturedRDD(self, node)

    def parallelize(self, c: Iterable[Any], numSlices: int | None = None) -> CapturedRDD:
        rdd = self.sc.parallelize(c, numSlices)
        if not self.enabled:
            return rdd  # type: ignore[return-value]
        node = SourceNode(self, "parallelize", ParallelizeInput(rdd), rdd.getNumPartitions(), lambda ps: rdd)
        return CapturedRDD(self, node)

    def parquet(self, *paths: str) -> CapturedRDD:
        """Rows of Parquet files (DataFrame reader), ids kept as (file, row index)."""
        if not self.enabled:
            return self.spark.read.parquet(*paths).rdd  # type: ignore[no-any-return]
        source = ParquetInput(self.sc, self.spark, paths)
        node = SourceNode(self, "parquet", source, source.num_partitions, lambda ps: source.df.rdd)
        return CapturedRDD(self, node)

    def csv(self, path: str, header: bool = False, sep: str = ",", quote: str = '"') -> CapturedRDD:
        """Rows of CSV files (string fields), read as lines with byte-offset ids."""
        if not self.enabled:
            return self.spark.read.csv(path, header=header, sep=sep, quote=quote).rdd  # type: ignore[no-any-return]
        source = CsvInput(self.sc, self.spark, path, header, sep, quote)
        node = SourceNode(self, "csv", source, source.num_partitions,
                          lambda ps: self.spark.read.csv(path, header=header, sep=sep, quote=quote).rdd)
        return CapturedRDD(self, node)

    def union(self, rdds: list[CapturedRDD]) -> CapturedRDD:
        result = rdds[0]
        for rdd in rdds[1:]:
            result = result.union(rdd)
        return result

    def emptyRDD(self) -> CapturedRDD:
        return self.parallelize([], 1)

    # ------------------------------------------------------------------ lineage
    def capture_points(self) -> list[CapturePoint]:
        return sorted(self.store.points.values(), key=lambda p: p.seq)

    def capture_id_of(self, target: Any) -> str:
        """The capture id of a point given as an id, a CapturePoint or a (compiled) captured RDD."""
        if isinstance(target, str):
            self.store.point(target)
            return target
        if isinstance(target, CapturePoint):
            return target.capture_id
        if isinstance(target, CapturedRDD):
            head = self.compiler._heads.get(target._node.seq)
            if head is None:
                raise NotCaptured(f"{target!r} is not a capture point of a job that ran")
            return head.point.capture_id
        raise TypeError(f"cannot find the capture point of {target!r}")

    def lineage(self, target: Any, ids: Iterable[int] | None = None) -> LineageRDD:
        """A LineageRDD at any capture point (all its records, or the given ids)."""
        return LineageRDD.at_point(self, self.capture_id_of(target), ids)

    def capture_point_events(self) -> list[dict[str, Any]]:
        """``capture_point`` ingest events of every point (for a caller that sends them itself)."""
        return _events.capture_point_events(self)

    def lineage_bytes(self) -> int:
        return self.store.lineage_bytes()

    # ------------------------------------------------------------------ internals
    def after_action(self, point: CapturePoint) -> None:
        """Refreshes the row and byte counts of the action's points, saves the manifest, and
        registers the points that changed; a storage failure is logged, never raised."""
        try:
            self._after_action(point)
        except OSError as exc:
            log.warning("lineage: cannot update the lineage store %s: %s", self.run_dir, exc)

    def _after_action(self, point: CapturePoint) -> None:
        changed = []
        for cid in sorted(self.store.ancestors(point.capture_id)):
            p = self.store.point(cid)
            self.store.refresh_stats(p)
            if self._reported.get(cid) != (p.rows, p.bytes):
                self._reported[cid] = (p.rows, p.bytes)
                changed.append(p)
        self.store.save()
        batch = _events.capture_point_events(self, sorted(changed, key=lambda p: p.seq))
        if _events.deliver(self, batch):
            self.events_sent += len(batch)

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

