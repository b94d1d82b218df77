"""The queue is fair across teams: the next trace a worker runs is from the team with the fewest
traces running, then the one served longest ago, oldest trace first (rows built inline, real database)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.utils import timezone

from lineage_server.accounts.services import create_team
from lineage_server.catalog.models import Application
from lineage_server.tracing.models import Trace, TraceStatus
from lineage_server.tracing.services.fair_queue import next_queued

pytestmark = pytest.mark.django_db


@pytest.fixture
def apps(team: Any) -> tuple[Application, Application]:
    other = create_team("other-team", "Other team")
    return (Application.objects.create(app_id="app-a", team=team),
            Application.objects.create(app_id="app-b", team=other))


def _trace(app: Application, status: str = TraceStatus.QUEUED, started_ago: float | None = None) -> Trace:
    started = timezone.now() - dt.timedelta(seconds=started_ago) if started_ago is not None else None
    return Trace.objects.create(application=app, direction="backward", question_key="k", status=status,
                                started_at=started)


def test_one_teams_burst_does_not_hold_back_another_teams_single_trace(apps):
    a, b = apps
    burst = [_trace(a) for _ in range(50)]
    _trace(a, TraceStatus.RUNNING, started_ago=1)  # a worker is busy with team a's first trace
    single = _trace(b)  # asked last
    assert next_queued() == single.pk
    single.status = TraceStatus.RUNNING
    single.started_at = timezone.now()
    single.save()
    assert next_queued() == burst[0].pk  # then team a again, its oldest first


def test_with_nothing_running_the_team_served_longest_ago_goes_first(apps):
    a, b = apps
    _trace(a, TraceStatus.SUCCEEDED, started_ago=5)
    _trace(b, TraceStatus.SUCCEEDED, started_ago=60)
    first_a, first_b = _trace(a), _trace(b)
    assert next_queued() == first_b.pk
    Trace.objects.filter(application=b, status=TraceStatus.SUCCEEDED).update(started_at=timezone.now())
    assert next_queued() == first_a.pk


def test_nothing_queued_is_none(apps):
    a, _ = apps
    _trace(a, TraceStatus.CANCELLED)
    assert next_queued() is None


def test_the_team_with_fewer_traces_running_goes_first_however_recently_served(apps):
    """Several workers: team a holds two of them since long ago, team b one since just now."""
    a, b = apps
    _trace(a, TraceStatus.RUNNING, started_ago=100)
    _trace(a, TraceStatus.RUNNING, started_ago=90)
    _trace(b, TraceStatus.RUNNING, started_ago=1)
    _trace(a)
    next_b = _trace(b)
    assert next_queued() == next_b.pk
