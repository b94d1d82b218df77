"""A real Celery worker process finalizes applications after they end."""

from __future__ import annotations

import time

import pytest

from lineage_server.catalog.models import Application, Job, Stage
from tests.lineage_server.events import event
from tests.lineage_server.worker import celery_worker

pytestmark = [pytest.mark.processes, pytest.mark.django_db(transaction=True)]
# These workers finalize and apply batches, never trace: no Spark session (a JVM) started with them.
NO_SPARK = {"LINEAGE_TRACE_SPARK_AT_START": "false"}


def test_worker_settles_open_jobs_and_rolls_up_totals(post_events, tmp_path):
    events = [
        event("application_start", "local-w", 0, name="cut short"),
        event("job_start", "local-w", 1, job_id=0, stage_ids=[0, 1, 2]),
        event(
            "stage_completed",
            "local-w",
            2,
            stage_id=0,
            attempt=0,
            status="succeeded",
            parent_stage_ids=[],
            job_id=0,
            metrics={"tasks": 4, "input_bytes": 100},
        ),
        event("stage_submitted", "local-w", 3, stage_id=1, attempt=0, parent_stage_ids=[0], job_id=0),
        event(
            "stage_completed",
            "local-w",
            4,
            stage_id=3,
            attempt=0,
            status="succeeded",
            parent_stage_ids=[],
            metrics={"tasks": 1, "input_bytes": 11},
        ),
        event("application_end", "local-w", 10),
    ]
    with celery_worker(tmp_path / "worker.log", **NO_SPARK) as worker:
        assert post_events(events).status_code == 200
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not Application.objects.get(app_id="local-w").totals:
            assert worker.poll() is None, (tmp_path / "worker.log").read_text()
            time.sleep(0.2)
    app = Application.objects.get(app_id="local-w")
    assert app.totals, (tmp_path / "worker.log").read_text()
    assert (app.totals["tasks"], app.totals["input_bytes"], app.totals["jobs"]) == (5, 111, 1)
    assert app.status == "failed"  # its only job never finished
    assert Job.objects.get(application=app, job_id=0).status == "failed"
    statuses = dict(Stage.objects.filter(application=app).values_list("stage_id", "status"))
    assert statuses == {0: "succeeded", 1: "failed", 2: "skipped", 3: "succeeded"}


def test_worker_applies_the_batches_requests_left_to_it(post_events, tmp_path, monkeypatch):
    from lineage_server.catalog.models import IngestBatch
    from lineage_server.catalog.services import _locks

    takes = _locks.lock_for_applying
    monkeypatch.setattr(_locks, "lock_for_applying", lambda wait=True: takes() if wait else False)
    left = [event("application_start", "local-left", 0, name="left"), event("job_start", "local-left", 1, job_id=0)]
    assert post_events(left).status_code == 202  # accepted while a round was under way (or before a crash)
    with celery_worker(tmp_path / "worker.log", **NO_SPARK) as worker:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and IngestBatch.objects.exists():
            assert worker.poll() is None, (tmp_path / "worker.log").read_text()
            time.sleep(0.2)
        assert post_events([event("job_end", "local-left", 2, job_id=0, status="succeeded")]).status_code == 202
        while time.monotonic() < deadline and IngestBatch.objects.exists():
            time.sleep(0.1)
    assert not IngestBatch.objects.exists(), (tmp_path / "worker.log").read_text()
    assert Job.objects.get(application__app_id="local-left", job_id=0).status == "succeeded"
