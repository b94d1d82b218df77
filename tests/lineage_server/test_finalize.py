"""Finalizing an ended application, and late events that arrive after it."""
from __future__ import annotations

import pytest

from lineage_server.catalog.models import Application, Job, Stage
from lineage_server.catalog.services import finalize_application
from tests.lineage_server.events import event

pytestmark = pytest.mark.django_db


def test_a_late_real_end_replaces_the_cut_off_and_refinalizes(post_events, django_capture_on_commit_callbacks):
    post_events([
        event("application_start", t=0, name="late"),
        event("job_start", t=1, job_id=0, stage_ids=[0]),
        event("stage_submitted", t=2, stage_id=0, attempt=0, parent_stage_ids=[], job_id=0),
        event("application_end", t=10),
    ])
    app = Application.objects.get(app_id="local-1")
    finalize_application(app.pk)
    app.refresh_from_db()
    assert app.status == "failed"
    assert Job.objects.get(job_id=0).status == "failed"

    with django_capture_on_commit_callbacks() as scheduled:
        post_events([
            event("stage_completed", t=8, stage_id=0, attempt=0, status="succeeded", parent_stage_ids=[], job_id=0,
                  metrics={"tasks": 2}),
            event("job_end", t=9, job_id=0, status="succeeded"),
        ])
    assert scheduled, "a late event of an ended application schedules the finalize again"
    finalize_application(app.pk)
    app.refresh_from_db()
    job = Job.objects.get(job_id=0)
    stage = Stage.objects.get(stage_id=0)
    assert (job.status, job.error) == ("succeeded", "")
    assert (stage.status, stage.failure_reason) == ("succeeded", "")
    assert app.status == "succeeded" and app.totals["tasks"] == 2


def test_a_real_failure_is_not_replaced(post_events):
    post_events([
        event("job_start", t=1, job_id=0, stage_ids=[]),
        event("job_end", t=2, job_id=0, status="failed", error="boom"),
        event("job_end", t=3, job_id=0, status="succeeded", event_id="job_end:0:again"),
    ])
    job = Job.objects.get(job_id=0)
    assert (job.status, job.error) == ("failed", "boom")
