"""Checks, from the database, that the load lost nothing and duplicated nothing (needs Django set up)."""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from dataclasses import dataclass

from _ingest_events import SimulatedApplication
from django.db.models import Count, Model, Q

from lineage_server.catalog.models import (
    Application,
    CapturePoint,
    DatasetIO,
    IngestBatch,
    IngestedEvent,
    Job,
    Operator,
    PythonPipeline,
    Stage,
)

# Rows each application must have exactly, by the SimulatedApplication field that counts them.
ROWS: dict[str, type[Model]] = {
    "jobs": Job,
    "stages": Stage,
    "operators": Operator,
    "dataset_ios": DatasetIO,
    "python_pipelines": PythonPipeline,
    "capture_points": CapturePoint,
}


@dataclass(frozen=True)
class Check:
    """One property of the stored catalog and how many applications (or events) break it."""

    name: str
    failures: int
    example: str = ""

    @property
    def ok(self) -> bool:
        return self.failures == 0


def wait_for_applied(timeout: float) -> float:
    """Wait until no accepted batch waits to be applied (the worker's applier takes those requests left);
    returns the seconds waited."""
    started = time.monotonic()
    while IngestBatch.objects.exists() and time.monotonic() - started < timeout:
        time.sleep(0.05)
    return time.monotonic() - started


def wait_for_finalize(prefix: str, expected: int, timeout: float) -> float:
    """Wait until the worker has rolled up every application named ``prefix``...; returns the seconds waited."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        done = Application.objects.filter(app_id__startswith=prefix).exclude(totals={}).count()
        if done >= expected:
            break
        time.sleep(0.5)
    return time.monotonic() - started


def check_catalog(prefix: str, apps: list[SimulatedApplication], finalized: bool) -> list[Check]:
    """Every sent event stored exactly once, every row created exactly once, every run in its final state.

    The agents' applications are named ``prefix``...; OpenLineage runs by their run ids, in ``apps``.
    """
    expected = {app.app_id: app for app in apps}
    ours = Q(application__app_id__startswith=prefix) | Q(application__app_id__in=list(expected))
    stored: dict[str, list[str]] = defaultdict(list)
    for app_id, event_id in IngestedEvent.objects.filter(ours).values_list("application__app_id", "event_id"):
        stored[app_id].append(event_id)
    lost = [(a, sorted(app.event_ids - set(stored[a]))) for a, app in expected.items()]
    extra = [(a, sorted(set(ids) - expected[a].event_ids)) for a, ids in stored.items() if a in expected]
    repeated = [(a, [e for e, n in Counter(ids).items() if n > 1]) for a, ids in stored.items()]
    checks = [
        _check("lost events (sent, not stored)", lost),
        _check("events stored twice", repeated),
        _check("events stored that were never sent", extra),
        _check("applications stored that were never sent", [(a, [a]) for a in stored if a not in expected]),
    ]
    for name, model in ROWS.items():
        counts = _counts(model, ours)
        wrong = [(a, [f"{counts.get(a, 0)} != {getattr(app, name)}"]) for a, app in expected.items()
                 if counts.get(a, 0) != getattr(app, name)]
        checks.append(_check(f"{model.__name__} rows == distinct {name} sent", wrong))
    checks.append(_check("applications not succeeded/ended", _unfinished(prefix, expected, finalized)))
    checks.append(_check("jobs or stages not succeeded (or stage metrics lost)", _open_runs(prefix)))
    return checks


def _counts(model: type[Model], ours: Q) -> dict[str, int]:
    rows = model._default_manager.filter(ours).values("application__app_id")
    return {row["application__app_id"]: row["n"] for row in rows.annotate(n=Count("id")).order_by()}


def _unfinished(prefix: str, expected: dict[str, SimulatedApplication], finalized: bool) -> list[tuple[str, list]]:
    bad = []
    for app in Application.objects.filter(Q(app_id__startswith=prefix) | Q(app_id__in=list(expected))):
        rolled_up = finalized and expected[app.app_id].finalized
        stages = app.totals.get("stages") if rolled_up else expected[app.app_id].stages
        if app.status != "succeeded" or app.ended_at is None or stages != expected[app.app_id].stages:
            bad.append((app.app_id, [f"{app.status} ended_at={app.ended_at} totals.stages={stages}"]))
    return bad


def _open_runs(prefix: str) -> list[tuple[str, list]]:
    jobs = Job.objects.filter(application__app_id__startswith=prefix).exclude(status="succeeded")
    stages = Stage.objects.filter(application__app_id__startswith=prefix).exclude(status="succeeded")
    bad: dict[str, list] = defaultdict(list)
    for app_id, job_id, status in jobs.values_list("application__app_id", "job_id", "status"):
        bad[app_id].append(f"job {job_id} {status}")
    for app_id, stage_id, status in stages.values_list("application__app_id", "stage_id", "status"):
        bad[app_id].append(f"stage {stage_id} {status}")
    all_stages = Stage.objects.filter(application__app_id__startswith=prefix)
    for app_id, stage_id, metrics, tasks in all_stages.values_list(
        "application__app_id", "stage_id", "metrics", "num_tasks"
    ):
        if metrics.get("tasks") != tasks or not metrics.get("input_bytes"):
            bad[app_id].append(f"stage {stage_id} metrics {metrics}")
    return list(bad.items())


def _check(name: str, per_app: list[tuple[str, list]]) -> Check:
    failing = [(a, items) for a, items in per_app if items]
    example = f"{failing[0][0]}: {failing[0][1][:3]}" if failing else ""
    return Check(name, sum(len(items) for _, items in failing), example)
