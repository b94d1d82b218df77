"""Spark event-log JSON (as JsonProtocol writes it) -> v1 ingest events (docs/ingest-events.md).

Every ``event_id`` is derived from the Spark event alone, so a retry or a re-delivery from the
spool carries the same id and the server counts it as a duplicate.
"""

from __future__ import annotations

import collections
import json
import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

from capture_agent.column_lineage import column_lineage_facet
from capture_agent.protocol import (
    APPLICATION_END,
    APPLICATION_START,
    DATASET_IO,
    JOB_END,
    JOB_START,
    MAX_LONG_TEXT,
    MAX_PATH,
    MAX_TEXT,
    OUTPUT_FORMAT_PROPERTY,
    OUTPUT_PATH_PROPERTY,
    PYTHON_OPERATORS,
    STAGE_COMPLETED,
    STAGE_SUBMITTED,
    Event,
    event_id,
)
from capture_agent.python_ops import OperatorChain

log = logging.getLogger("capture_agent")

# Text longer than the server's field limits (capture_agent.protocol) is cut here rather than
# costing the whole batch a 400.
_MAX_TRACKED = 20000
# RDD scopes whose leaf RDD is named after the path it reads, with the format it implies.
READ_SCOPES = {
    "textFile": "text",
    "wholeTextFiles": "text",
    "binaryFiles": "binary",
    "binaryRecords": "binary",
    "hadoopFile": "hadoop",
    "newAPIHadoopFile": "hadoop",
    "sequenceFile": "sequence",
    "objectFile": "object",
}
_ACCUMULATORS = {
    "internal.metrics.executorRunTime": "executor_run_time_ms",
    "internal.metrics.executorCpuTime": "executor_cpu_time_ns",
    "internal.metrics.jvmGCTime": "jvm_gc_time_ms",
    "internal.metrics.input.bytesRead": "input_bytes",
    "internal.metrics.input.recordsRead": "input_records",
    "internal.metrics.output.bytesWritten": "output_bytes",
    "internal.metrics.output.recordsWritten": "output_records",
    "internal.metrics.shuffle.read.remoteBytesRead": "shuffle_read_bytes",
    "internal.metrics.shuffle.read.localBytesRead": "shuffle_read_bytes",
    "internal.metrics.shuffle.read.recordsRead": "shuffle_read_records",
    "internal.metrics.shuffle.write.bytesWritten": "shuffle_write_bytes",
    "internal.metrics.shuffle.write.recordsWritten": "shuffle_write_records",
    "internal.metrics.memoryBytesSpilled": "memory_bytes_spilled",
    "internal.metrics.diskBytesSpilled": "disk_bytes_spilled",
}


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _text(value: Any, limit: int = MAX_TEXT) -> str | None:
    return None if value is None else str(value)[:limit]


def _nonnegative(value: Any) -> int:
    number = _int(value)
    return number if number is not None and number > 0 else 0


class EventConverter:
    """Stateful converter: remembers which job a stage and an RDD output belong to."""

    def __init__(self, app_id: str, qualify: Callable[[str], str] = lambda p: p) -> None:
        self.app_id = app_id
        self.qualify = qualify
        self.application_ended = False
        self.dropped = 0
        self._stage_job: collections.OrderedDict[int, int] = collections.OrderedDict()
        self._job_outputs: dict[int, tuple[str, str]] = {}
        self._handlers: dict[str, Callable[[dict[str, Any]], list[Event]]] = {
            "SparkListenerJobStart": self._job_start,
            "SparkListenerJobEnd": self._job_end,
            "SparkListenerStageSubmitted": self._stage_submitted,
            "SparkListenerStageCompleted": self._stage_completed,
            "SparkListenerApplicationEnd": self._application_end,
            "lineage.SqlIo": self._sql_io,
            "lineage.Dropped": self._dropped,
            "lineage.Error": self._listener_error,
        }

    def convert_lines(self, lines: Iterable[str]) -> list[Event]:
        events: list[Event] = []
        for line in lines:
            if not line:
                continue
            try:
                events.extend(self.convert(json.loads(line)))
            except Exception:
                log.debug("lineage: cannot convert %.200s", line, exc_info=True)
        return events

    def convert(self, spark_event: dict[str, Any]) -> list[Event]:
        handler = self._handlers.get(str(spark_event.get("Event")))
        return handler(spark_event) if handler else []

    def _base(self, kind: str, when: Any, *id_parts: object) -> Event:
        millis = _int(when)
        if millis is None or millis <= 0:
            millis = int(time.time() * 1000)
        return {"event_id": event_id(kind, *id_parts), "type": kind, "app_id": self.app_id, "time": millis}

    def application_start(self, name: str, user: str, spark_version: str, master: str,
                          start_time: int, attempt_id: str | None,
                          spark_conf: dict[str, str]) -> Event:
        event = self._base(APPLICATION_START, start_time)
        event.update(name=name[:512], user=user[:256], spark_version=spark_version[:64],
                     master=master[:512],
                     spark_conf={k: v[:MAX_TEXT] for k, v in spark_conf.items()})
        if attempt_id:
            event["attempt_id"] = attempt_id[:64]
        return event

    def application_end(self, when: int | None = None) -> Event:
        self.application_ended = True
        return self._base(APPLICATION_END, when)

    def python_operators(self, rdd_id: int, operators: OperatorChain, when: int) -> Event:
        event = self._base(PYTHON_OPERATORS, when, rdd_id)
        event["rdd_id"] = rdd_id
        event["operators"] = [{"name": name[:256], "call_site": site[:MAX_TEXT]}
                              for name, site in operators]
        return event

    def _dataset(self, direction: str, path: str, fmt: str | None, scope: str,
                 when: Any, **ids: int) -> Event:
        path = self.qualify(path)[:MAX_PATH]
        event = self._base(DATASET_IO, when, direction, scope, path)
        event.update(path=path, direction=direction, **ids)
        if fmt:
            event["format"] = fmt[:64]
        return event

    def _application_end(self, e: dict[str, Any]) -> list[Event]:
        return [self.application_end(_int(e.get("Timestamp")))]

    def _dropped(self, e: dict[str, Any]) -> list[Event]:
        count = _int(e.get("Count")) or 0
        self.dropped += count
        log.warning("lineage: the listener queue was full, %d Spark events were dropped", count)
        return []

    def _listener_error(self, e: dict[str, Any]) -> list[Event]:
        log.debug("lineage: listener could not describe an event: %s", e.get("Message"))
        return []

    def _job_start(self, e: dict[str, Any]) -> list[Event]:
        job_id = int(e["Job ID"])
        props = e.get("Properties") or {}
        stage_ids = [int(s) for s in e.get("Stage IDs", [])]
        for stage_id in stage_ids:
            self._stage_job.setdefault(stage_id, job_id)
        while len(self._stage_job) > _MAX_TRACKED:
            self._stage_job.popitem(last=False)
        when = e.get("Submission Time")
        event = self._base(JOB_START, when, job_id)
        event.update(job_id=job_id, stage_ids=stage_ids)
        infos = e.get("Stage Infos") or []
        call_site = props.get("callSite.short")
        if not call_site and infos:
            call_site = max(infos, key=lambda i: i.get("Stage ID", 0)).get("Stage Name")
        optional = {
            "description": _text(props.get("spark.job.description")),
            "call_site": _text(call_site),
            "sql_execution_id": _int(props.get("spark.sql.execution.id")),
            "job_group": _text(props.get("spark.jobGroup.id"), 256),
        }
        event.update({k: v for k, v in optional.items() if v is not None})
        events = [event]
        seen: set[str] = set()
        for info in infos:
            for rdd in info.get("RDD Info") or []:
                scope = _scope(rdd.get("Scope"))
                fmt = READ_SCOPES.get(scope.get("name", ""))
                if fmt is None or rdd.get("Parent IDs"):
                    continue
                for path in str(rdd.get("Name", "")).split(","):
                    if path and path not in seen:
                        seen.add(path)
                        events.append(self._dataset("read", path, fmt, f"job{job_id}", when,
                                                    job_id=job_id, rdd_id=int(rdd["RDD ID"])))
        output = props.get(OUTPUT_PATH_PROPERTY)
        if output:
            self._job_outputs[job_id] = (output, props.get(OUTPUT_FORMAT_PROPERTY) or "")
        return events

    def _job_end(self, e: dict[str, Any]) -> list[Event]:
        job_id = int(e["Job ID"])
        result = e.get("Job Result") or {}
        succeeded = result.get("Result") == "JobSucceeded"
        when = e.get("Completion Time")
        event = self._base(JOB_END, when, job_id)
        event.update(job_id=job_id, status="succeeded" if succeeded else "failed")
        if not succeeded:
            error = (result.get("Exception") or {}).get("Message") or result.get("Result")
            event["error"] = _text(error, MAX_LONG_TEXT) or "failed"
        events = [event]
        output = self._job_outputs.pop(job_id, None)
        if output and succeeded:
            events.append(self._dataset("written", output[0], output[1] or None, f"job{job_id}",
                                        when, job_id=job_id))
        return events

    def _stage(self, kind: str, e: dict[str, Any], when_key: str) -> Event:
        info = e["Stage Info"]
        stage_id, attempt = int(info["Stage ID"]), int(info.get("Stage Attempt ID", 0))
        event = self._base(kind, info.get(when_key), stage_id, attempt)
        event.update(
            stage_id=stage_id,
            attempt=attempt,
            name=str(info.get("Stage Name", ""))[:512],
            num_tasks=int(info.get("Number of Tasks", 0)),
            parent_stage_ids=[int(p) for p in info.get("Parent IDs", [])],
            operators=[_operator(rdd) for rdd in sorted(
                info.get("RDD Info") or [], key=lambda r: int(r.get("RDD ID", 0)))],
        )
        job_id = self._stage_job.get(stage_id)
        if job_id is not None:
            event["job_id"] = job_id
        if info.get("Details"):
            event["call_site"] = _text(info["Details"], MAX_LONG_TEXT)
        return event

    def _stage_submitted(self, e: dict[str, Any]) -> list[Event]:
        return [self._stage(STAGE_SUBMITTED, e, "Submission Time")]

    def _stage_completed(self, e: dict[str, Any]) -> list[Event]:
        event = self._stage(STAGE_COMPLETED, e, "Completion Time")
        info = e["Stage Info"]
        reason = info.get("Failure Reason")
        event["status"] = "failed" if reason else "succeeded"
        if reason:
            event["failure_reason"] = _text(reason, MAX_LONG_TEXT)
        metrics: dict[str, int] = {}
        for accumulable in info.get("Accumulables") or []:
            field = _ACCUMULATORS.get(str(accumulable.get("Name")))
            value = _int(accumulable.get("Value"))
            if field and value is not None and value >= 0:
                metrics[field] = metrics.get(field, 0) + value
        counts = e.get("Lineage Task Counts")
        if counts:
            metrics["tasks"] = _nonnegative(counts.get("Tasks"))
            metrics["failed_tasks"] = _nonnegative(counts.get("Failed"))
            metrics["duration_ms"] = _nonnegative(counts.get("Duration"))
        event["metrics"] = metrics
        return [event]

    def _sql_io(self, e: dict[str, Any]) -> list[Event]:
        exec_id = int(e["Execution ID"])
        events: list[Event] = []
        for key, direction in (("Reads", "read"), ("Writes", "written")):
            seen: set[str] = set()
            for item in e.get(key) or []:
                path = str(item.get("Path", ""))
                if path and path not in seen:
                    seen.add(path)
                    event = self._dataset(direction, path, item.get("Format"), f"sql{exec_id}",
                                          e.get("Time"), sql_execution_id=exec_id)
                    if direction == "written" and item.get("Columns") is not None:
                        event["column_lineage"] = column_lineage_facet(
                            item["Columns"], item.get("Dataset") or [], self.qualify)
                    events.append(event)
        return events


def _scope(raw: Any) -> dict[str, str]:
    if not raw:
        return {}
    try:
        scope = json.loads(raw) if isinstance(raw, str) else raw
        return {k: str(v) for k, v in scope.items()} if isinstance(scope, dict) else {}
    except ValueError:
        return {}


def _operator(rdd: dict[str, Any]) -> Event:
    level = rdd.get("Storage Level") or {}
    operator: Event = {
        "rdd_id": int(rdd["RDD ID"]),
        "name": str(rdd.get("Name", ""))[:1024],
        "parent_ids": [int(p) for p in rdd.get("Parent IDs", [])],
        "num_partitions": int(rdd.get("Number of Partitions", 0)),
        "cached": bool(level.get("Use Memory") or level.get("Use Disk") or level.get("Use Off Heap")),
    }
    scope = _scope(rdd.get("Scope"))
    if scope.get("id"):
        operator["scope_id"] = scope["id"][:64]
    if scope.get("name"):
        operator["scope_name"] = scope["name"][:256]
    if rdd.get("Callsite"):
        operator["call_site"] = _text(rdd["Callsite"])
    return operator
