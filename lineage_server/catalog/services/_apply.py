"""One handler per event type; each merges its event into the batch's rows (``CatalogBatch``), written at its end."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from lineage_server.catalog.models import Application, IODirection, Job, RunStatus, Stage
from lineage_server.catalog.models.dataset import dataset_key
from lineage_server.catalog.services._batch import CatalogBatch
from lineage_server.catalog.services._openlineage import OPENLINEAGE_EVENT_TYPE, openlineage_run
from lineage_server.catalog.services.finalize import JOB_CUT_OFF, STAGE_CUT_OFF

Body = dict[str, Any]


def to_datetime(epoch_ms: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(epoch_ms / 1000, tz=dt.UTC)


def _advance(obj: Application | Job | Stage, status: str) -> None:
    """Move to ``status`` unless the row already holds a later one (events may come late)."""
    if RunStatus.rank(status) >= RunStatus.rank(obj.status):
        obj.status = status


def application_start(batch: CatalogBatch, app: Application, body: Body, at: dt.datetime) -> None:
    for field in ("name", "user", "spark_version", "master", "spark_conf"):
        setattr(app, field, body[field])
    app.attempt_id = body["attempt_id"] or ""
    app.started_at = at
    _advance(app, RunStatus.RUNNING)


def application_end(batch: CatalogBatch, app: Application, body: Body, at: dt.datetime) -> None:
    app.ended_at = at
    _advance(app, RunStatus.FAILED if batch.has_failed_job(app) else RunStatus.SUCCEEDED)


def job_start(batch: CatalogBatch, app: Application, body: Body, at: dt.datetime) -> None:
    job = batch.job(app, body["job_id"])
    job.submitted_at = at
    job.description = body["description"]
    job.call_site = body["call_site"]
    job.sql_execution_id = body["sql_execution_id"]
    job.job_group = body["job_group"] or ""
    _advance(job, RunStatus.RUNNING)
    for stage_id in body["stage_ids"]:
        # A stage listed by its job but never submitted was skipped (its output was reused).
        _advance(batch.stage(app, stage_id), RunStatus.PENDING)
        batch.link_stage_to_job(app, stage_id, job.job_id)


def job_end(batch: CatalogBatch, app: Application, body: Body, at: dt.datetime) -> None:
    job = batch.job(app, body["job_id"])
    if job.error == JOB_CUT_OFF:
        job.status = RunStatus.UNKNOWN  # the job's real end arrived after the application's
    _advance(job, body["status"])
    if job.status == body["status"]:  # else an earlier failure stands, with its own error and time
        job.completed_at = at
        job.error = body["error"] or ""
    if body["status"] == RunStatus.FAILED and app.ended_at is not None:
        _advance(app, RunStatus.FAILED)


def _merge_stage(batch: CatalogBatch, app: Application, body: Body, at: dt.datetime, completed: bool) -> Stage | None:
    stage = batch.stage(app, body["stage_id"])
    if body["attempt"] < stage.attempt:
        return None  # an older attempt's event, superseded
    if body["attempt"] > stage.attempt:
        stage.attempt = body["attempt"]
        stage.status = RunStatus.PENDING
        stage.failure_reason = ""
    for field in ("name", "num_tasks", "parent_stage_ids", "call_site"):
        if body[field]:
            setattr(stage, field, body[field])
    if completed:
        if stage.failure_reason == STAGE_CUT_OFF:
            stage.status = RunStatus.UNKNOWN  # the stage's real end arrived after the application's
        stage.completed_at = at
        stage.failure_reason = body["failure_reason"] or ""
        stage.metrics = dict(body["metrics"])
        _advance(stage, body["status"])
    else:
        stage.submitted_at = at
        _advance(stage, RunStatus.RUNNING)
    if body["job_id"] is not None:
        batch.link_stage_to_job(app, stage.stage_id, body["job_id"])
    for op in body["operators"]:
        batch.put_operator(app, stage.stage_id, dict(op))
    return stage


def stage_submitted(batch: CatalogBatch, app: Application, body: Body, at: dt.datetime) -> None:
    _merge_stage(batch, app, body, at, completed=False)


def stage_completed(batch: CatalogBatch, app: Application, body: Body, at: dt.datetime) -> None:
    _merge_stage(batch, app, body, at, completed=True)


def dataset_io(batch: CatalogBatch, app: Application, body: Body, at: dt.datetime) -> None:
    key = dataset_key(body["path"])
    batch.see_dataset(key, {"path": body["path"], "format": body["format"], "size_bytes": body["size_bytes"]})
    fields = ("direction", "job_id", "sql_execution_id", "rdd_id", "size_bytes")
    lineage = body.get("column_lineage") if body["direction"] == IODirection.WRITTEN else None
    batch.add_dataset_io(app, key, {**{name: body[name] for name in fields}, "at": at,
                                    "column_lineage": lineage or {}})


def python_operators(batch: CatalogBatch, app: Application, body: Body, at: dt.datetime) -> None:
    batch.put_python_pipeline(app, body["rdd_id"], [dict(op) for op in body["operators"]])


def capture_point(batch: CatalogBatch, app: Application, body: Body, at: dt.datetime) -> None:
    """Create or replace the point; its missing tables are replaced too (the agent re-sends the whole list)."""
    fields = {k: body[k] for k in ("kind", "stage_id", "rdd_id", "location", "rows", "bytes")}
    missing = [{"partition": m["partition"], "reason": m["reason"]} for m in body["missing"]]
    missing.sort(key=lambda m: m["partition"])
    batch.put_capture_point(app, body["capture_id"], {
        **fields,
        "parent_capture_ids": list(body["parents"]),
        "files": list(body["files"]),
        "missing_tables": missing,
        "missing_table_count": len(missing),
        "not_captured": body["not_captured"],
        "column_lineage": body.get("column_lineage") or {},
    })


def referenced_ids(body: Body) -> tuple[list[int], list[int]]:
    """The job ids and stage ids an event's handler reads (``CatalogBatch.load`` fetches them first)."""
    jobs = [body["job_id"]] if body.get("job_id") is not None else []
    stages = [body["stage_id"]] if body.get("stage_id") is not None else []
    return jobs, stages + list(body.get("stage_ids", ()))


Handler = Callable[[CatalogBatch, Application, Body, dt.datetime], None]

HANDLERS: dict[str, Handler] = {
    "application_start": application_start,
    "application_end": application_end,
    "job_start": job_start,
    "job_end": job_end,
    "stage_submitted": stage_submitted,
    "stage_completed": stage_completed,
    "dataset_io": dataset_io,
    "python_operators": python_operators,
    "capture_point": capture_point,
    OPENLINEAGE_EVENT_TYPE: openlineage_run,
}
# An event of these types owes the finalize of its application once it has ended (late ones again);
# an OpenLineage run has no jobs or stages to settle, and its own status.
FINALIZED_TYPES = frozenset(HANDLERS) - {OPENLINEAGE_EVENT_TYPE}
