"""Accepted batches wait while a round is under way (202) and are applied later, whole, in the order accepted."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import OperationalError, connection
from django.test.utils import CaptureQueriesContext

from lineage_server.catalog.models import Application, CapturePoint, IngestBatch, IngestedEvent, Job
from lineage_server.catalog.services import _apply, _locks, _rounds, apply_accepted
from tests.lineage_server.events import event, word_count_with_join

pytestmark = pytest.mark.django_db


@pytest.fixture
def round_under_way(monkeypatch: pytest.MonkeyPatch) -> None:
    """Requests find a round under way (the lock for applying taken): they only accept their batches."""
    takes = _locks.lock_for_applying
    monkeypatch.setattr(_locks, "lock_for_applying", lambda wait=True: takes() if wait else False)


def _point(rows: int, event_id: str) -> dict[str, Any]:
    return event("capture_point", "local-cp", rows, event_id=event_id, capture_id="cp-0", kind="stage",
                 location="/store/local-cp/cp-0", rows=rows)


def test_a_batch_accepted_while_a_round_is_under_way_is_answered_202_and_applied_by_the_next(
    post_events, round_under_way
):
    response = post_events(word_count_with_join())
    assert response.status_code == 202, response.content
    assert response.json() == {"accepted": 10, "duplicates": 0}
    assert IngestedEvent.objects.count() == 10 and IngestBatch.objects.count() == 1
    assert not Job.objects.exists(), "accepted, not applied yet"

    assert apply_accepted() == 10
    app = Application.objects.get(app_id="local-1")
    assert (app.status, app.stages.count(), IngestBatch.objects.count()) == ("succeeded", 2, 0)


def test_a_batch_sent_again_while_it_waits_counts_as_duplicates(post_events, round_under_way):
    events = word_count_with_join()
    assert post_events(events).status_code == 202
    again = post_events(events)
    assert (again.status_code, again.json()) == (200, {"accepted": 0, "duplicates": 10})
    assert IngestBatch.objects.count() == 1
    apply_accepted()
    assert Job.objects.count() == 1 and IngestedEvent.objects.count() == 10


def test_batches_of_an_application_are_applied_in_the_order_accepted(post_events, round_under_way):
    for rows in (10, 30, 20):  # a point's counts sent again as they change: the last sent is the one kept
        assert post_events([_point(rows, f"cp-0:{rows}")]).status_code == 202
    apply_accepted()
    assert CapturePoint.objects.get(capture_id="cp-0").rows == 20


def test_the_next_request_applies_the_batches_left_before_its_own(post_events, monkeypatch):
    takes = _locks.lock_for_applying
    monkeypatch.setattr(_locks, "lock_for_applying", lambda wait=True: takes() if wait else False)
    assert post_events([_point(10, "cp-0:10")]).status_code == 202  # left, as by a request that stopped
    monkeypatch.setattr(_locks, "lock_for_applying", takes)

    assert post_events([_point(20, "cp-0:20")]).status_code == 200
    assert CapturePoint.objects.get(capture_id="cp-0").rows == 20 and not IngestBatch.objects.exists()


def test_a_batch_that_fails_to_apply_is_set_aside_and_the_others_are_applied(
    post_events, round_under_way, monkeypatch
):
    post_events([event("application_start", "local-a", 0, name="first")])
    post_events([event("application_start", "local-bad", 0, name="bad")])
    post_events([event("application_start", "local-b", 0, name="after")])
    start = _apply.HANDLERS["application_start"]

    def fails_for_bad(batch: Any, app: Application, body: dict[str, Any], at: Any) -> None:
        if app.app_id == "local-bad":
            raise RuntimeError("a bug in a handler")
        start(batch, app, body, at)

    monkeypatch.setitem(_apply.HANDLERS, "application_start", fails_for_bad)
    assert apply_accepted() == 2
    names = dict(Application.objects.values_list("app_id", "name"))
    assert names == {"local-a": "first", "local-bad": "", "local-b": "after"}
    (left,) = IngestBatch.objects.all()
    assert left.events[0]["app_id"] == "local-bad" and "a bug in a handler" in left.error
    assert apply_accepted() == 0, "set aside: not tried again by every round"
    monkeypatch.setitem(_apply.HANDLERS, "application_start", start)  # the bug fixed
    assert apply_accepted(retry_set_aside=True) == 1 and not IngestBatch.objects.exists()
    assert Application.objects.get(app_id="local-bad").name == "bad"


def test_a_database_failure_sets_no_batch_aside(post_events, round_under_way, monkeypatch):
    post_events([event("application_start", "local-a", 0, name="first")])

    def connection_lost(*_: Any) -> None:
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(_rounds, "_apply_events", connection_lost)
    with pytest.raises(OperationalError):
        apply_accepted()
    assert IngestBatch.objects.get().error == "", "waits for the next round"


def test_a_round_of_many_applications_costs_the_queries_of_one(post_events, round_under_way):
    def queries_to_apply(app_ids: list[str]) -> int:
        for app_id in app_ids:
            post_events(word_count_with_join(app_id))
        with CaptureQueriesContext(connection) as queries:
            apply_accepted()
        return len(queries)

    queries_to_apply(["local-first"])  # the datasets they all read and write, new to this round only
    one = queries_to_apply(["local-one"])
    assert queries_to_apply([f"local-many-{n}" for n in range(12)]) == one
