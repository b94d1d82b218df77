"""One handler per event type; each merges its event into whatever rows already exist."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from lineage_server.catalog.models import (
    Application,
    CapturePoint,
    Dataset,
    DatasetIO,
    Job,
    Operator,
    PythonPipeline,
    RunStatus,
    Stage,
)
from lineage_server.catalog.models.dataset import dataset_key
from lineage_server.catalog.services.finalize import JOB_CUT_OFF, STAGE_CUT_OFF

Body = dict[str, Any]


def to_datetime(epoch_ms: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(epoch_ms / 1000, tz=dt.UTC)


def _advance(obj: Application | Job | Stage, status: str) -> None:
    """Move to ``status`` unless the row already holds a later one (events may come late)."""
    if RunStatus.rank(status) >= RunStatus.rank(obj.status):
        obj.status = status


def application_start(app: Application, body: Body, at: dt.datetime) -> None:
    for field in ("name", "user", "spark_version", "master", "spark_conf"):
        setattr(app, field, body[field])
    app.attempt_id = body["attempt_id"] or ""
    app.started_at = at
    _advance(app, RunStatus.RUNNING)
    app.save()


def application_end(app: Application, body: Body, at: dt.datetime) -> None:
    app.ended_at = at
    failed = app.jobs.filter(status=RunStatus.FAILED).exists()
    _advance(app, RunStatus.FAILED if failed else RunStatus.SUCCEEDED)
    app.save()


def _job(app: Application, job_id: int) -> Job:
    job, _ = Job.objects.get_or_create(application=app, job_id=job_id)
    return job


def _stage(app: Application, stage_id: int) -> Stage:
    stage, _ = Stage.objects.get_or_create(application=app, stage_id=stage_id)
    return stage


def job_start(app: Application, body: Body, at: dt.datetime) -> None:
    job = _job(app, body["job_id"])
    job.submitted_at = at
    job.description = body["description"]
    job.call_site = body["call_site"]
    job.sql_execution_id = body["sql_execution_id"]
    job.job_group = body["job_group"] or ""
    _advance(job, RunStatus.RUNNING)
    job.save()
    for stage_id in body["stage_ids"]:
        stage = _stage(app, stage_id)
        # A stage listed by its job but never submitted was skipped (its output was reused).
        _advance(stage, RunStatus.PENDING)
        stage.save(update_fields=["status"])
        stage.jobs.add(job)


def job_end(app: Application, body: Body, at: dt.datetime) -> None:
    job = _job(app, body["job_id"])
    if job.error == JOB_CUT_OFF:
        job.status = RunStatus.UNKNOWN  # the job's real end arrived after the application's
    _advance(job, body["status"])
    if job.status == body["status"]:  # else an earlier failure stands, with its own error and time
        job.completed_at = at
        job.error = body["error"] or ""
    job.save()
    if body["status"] == RunStatus.FAILED and app.ended_at is not None:
        _advance(app, RunStatus.FAILED)
        app.save(update_fields=["status"])


def _merge_stage(app: Application, body: Body, at: dt.datetime, completed: bool) -> Stage | None:
    stage = _stage(app, body["stage_id"])
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
    stage.save()
    if body["job_id"] is not None:
        stage.jobs.add(_job(app, body["job_id"]))
    for op in body["operators"]:
        Operator.objects.update_or_create(stage=stage, rdd_id=op["rdd_id"], defaults={**op, "application": app})
    return stage


def stage_submitted(app: Application, body: Body, at: dt.datetime) -> None:
    _merge_stage(app, body, at, completed=False)


def stage_completed(app: Application, body: Body, at: dt.datetime) -> None:
    _merge_stage(app, body, at, completed=True)


def dataset_io(app: Application, body: Body, at: dt.datetime) -> None:
    dataset, _ = Dataset.objects.get_or_create(key=dataset_key(body["path"]), defaults={"path": body["path"]})
    if body["format"]:
        dataset.format = body["format"]
    if body["size_bytes"] is not None:
        dataset.size_bytes = body["size_bytes"]
    dataset.save()
    DatasetIO.objects.create(
        dataset=dataset,
        application=app,
        direction=body["direction"],
        job_id=body["job_id"],
        sql_execution_id=body["sql_execution_id"],
        rdd_id=body["rdd_id"],
        size_bytes=body["size_bytes"],
        at=at,
    )


def python_operators(app: Application, body: Body, at: dt.datetime) -> None:
    operators = [dict(op) for op in body["operators"]]
    PythonPipeline.objects.update_or_create(application=app, rdd_id=body["rdd_id"], defaults={"operators": operators})


def capture_point(app: Application, body: Body, at: dt.datetime) -> None:
    """Create or replace the point; its missing tables are replaced too (the agent re-sends the whole list)."""
    fields = {k: body[k] for k in ("kind", "stage_id", "rdd_id", "location", "rows", "bytes")}
    missing = [{"partition": m["partition"], "reason": m["reason"]} for m in body["missing"]]
    missing.sort(key=lambda m: m["partition"])
    CapturePoint.objects.update_or_create(
        application=app,
        capture_id=body["capture_id"],
        defaults={
            **fields,
            "parent_capture_ids": list(body["parents"]),
            "missing_tables": missing,
            "missing_table_count": len(missing),
        },
    )


HANDLERS: dict[str, Callable[[Application, Body, dt.datetime], None]] = {
    "application_start": application_start,
    "application_end": application_end,
    "job_start": job_start,
    "job_end": job_end,
    "stage_submitted": stage_submitted,
    "stage_completed": stage_completed,
    "dataset_io": dataset_io,
    "python_operators": python_operators,
    "capture_point": capture_point,
}
