"""Concurrent ingest on PostgreSQL: events of one application applied at once neither deadlock nor lose updates.

This happens when `python -m capture_agent flush-spool` delivers spooled batches while the agent
sends its next ones. SQLite runs one writer at a time, so these tests need PostgreSQL
(`make test-services`, or DATABASE_URL pointing at one); bench/ingest_load.py found the deadlock.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, connections, transaction

from lineage_server.api.serializers.ingest import IngestBatchSerializer
from lineage_server.catalog.models import Application, IngestedEvent, Job, Operator, Stage
from lineage_server.catalog.services import apply_accepted, ingest_events
from tests.lineage_server.events import event, operator

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks and deadlocks need PostgreSQL"),
]


def _validated(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    batch = IngestBatchSerializer(data={"events": events})
    batch.is_valid(raise_exception=True)
    return batch.validated_data["events"]


def _in_threads(*work: Callable[[], object]) -> list[BaseException]:
    """Run each callable in its own thread (own database connection), started together; returns their errors."""
    start = threading.Barrier(len(work))
    errors: list[BaseException] = []

    def run(fn: Callable[[], object]) -> None:
        try:
            start.wait()
            fn()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)
        finally:
            connections.close_all()  # this thread's connections only

    threads = [threading.Thread(target=run, args=(fn,)) for fn in work]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return errors


def _job_and_its_stages(app_id: str, job_id: int, stage_ids: list[int]) -> tuple[list[dict], list[dict]]:
    """A job's start (listing its stages) and, separately, its stages' own events naming the job."""
    job = [event("job_start", app_id, job_id, job_id=job_id, stage_ids=stage_ids)]
    stages = []
    for sid in stage_ids:
        common: dict[str, Any] = {
            "stage_id": sid,
            "attempt": 0,
            "name": f"s{sid}",
            "num_tasks": 2,
            "parent_stage_ids": [],
            "job_id": job_id,
            "operators": [operator(10 * sid + i, "op", []) for i in range(3)],
        }
        stages.append(event("stage_submitted", app_id, 100 + sid, **common))
        stages.append(
            event(
                "stage_completed",
                app_id,
                200 + sid,
                **common,
                status="succeeded",
                metrics={"tasks": 2, "input_bytes": 7},
            )
        )
    return job, stages


@pytest.fixture
def token(team):
    from lineage_server.accounts.services import create_agent_token

    return create_agent_token(team, "racing agents")[0]


def test_a_job_and_its_stages_arriving_at_once_create_each_row_once_without_deadlock(token):
    apps = [f"local-race-{n}" for n in range(6)]
    work = []
    for app_id in apps:
        jobs, stages = [], []
        for job_id in range(4):
            job, its_stages = _job_and_its_stages(app_id, job_id, [10 * job_id + i for i in range(3)])
            jobs.append(_validated(job))
            stages.append(_validated(its_stages))
        # The job starts name their stages first, the stages name their job first: opposite lock orders.
        work += [
            lambda b=jobs: [ingest_events(j, token) for j in b],
            lambda b=stages: [ingest_events(s, token) for s in b],
        ]

    assert _in_threads(*work) == []
    # a request that found another's round under way left its batch to the worker's applier: apply it as it does
    apply_accepted()

    for app_id in apps:
        app = Application.objects.get(app_id=app_id)
        assert IngestedEvent.objects.filter(application=app).count() == 4 * (1 + 6)
        assert app.jobs.count() == 4 and app.stages.count() == 12
        assert Operator.objects.filter(application=app).count() == 36
        app_stages = Stage.objects.filter(application=app)
        assert {s.status for s in app_stages} == {"succeeded"} and all(s.metrics["tasks"] == 2 for s in app_stages)
        for app_job in Job.objects.filter(application=app):
            assert sorted(app_job.stages.values_list("stage_id", flat=True)) == [
                10 * app_job.job_id + i for i in range(3)
            ]


def test_an_event_waits_while_another_event_of_its_application_is_being_applied(token):
    ingest_events(_validated([event("application_start", "local-lock", 0, name="locked")]), token)
    holding, release = threading.Event(), threading.Event()

    def in_flight_event() -> None:
        with transaction.atomic():  # holds the application's row as an event being applied does
            Application.objects.select_for_update(no_key=True).get(app_id="local-lock")
            holding.set()
            release.wait(30)

    def next_event() -> None:
        assert holding.wait(30)
        ingest_events(_validated([event("job_start", "local-lock", 5, job_id=0, stage_ids=[0])]), token)

    threads = [threading.Thread(target=_in_threads, args=(fn,)) for fn in (in_flight_event, next_event)]
    for thread in threads:
        thread.start()
    assert holding.wait(30)
    time.sleep(0.5)
    assert not Job.objects.filter(application__app_id="local-lock").exists(), "applied beside the other event"
    release.set()
    for thread in threads:
        thread.join(30)
    assert Job.objects.filter(application__app_id="local-lock", job_id=0).exists()
