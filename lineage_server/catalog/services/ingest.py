"""Apply a batch of validated agent events to the catalog, idempotently and in any order."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction

from lineage_server.catalog.models import Application, IngestedEvent
from lineage_server.catalog.services import _apply


@dataclass(frozen=True)
class IngestResult:
    """How many events of a batch were applied, and how many had been applied before."""

    accepted: int
    duplicates: int


def ingest_events(events: list[dict[str, Any]]) -> IngestResult:
    """Apply each event once: an event whose id the application already has changes nothing.

    Each event commits on its own, so a batch cut short by a crash leaves only whole events and
    the agent's retry of the batch applies exactly the rest.
    """
    accepted = duplicates = 0
    ended: set[int] = set()
    app_pks: dict[str, int] = {}  # a batch is mostly one application: look it up once
    for event in events:
        if event["app_id"] not in app_pks:
            app_pks[event["app_id"]] = _application(event["app_id"]).pk
        application = _apply_once(event, app_pks[event["app_id"]])
        if application is None:
            duplicates += 1
            continue
        accepted += 1
        if application.ended_at is not None:
            # The end, or a late event of an ended application: settle the books (again).
            ended.add(application.pk)
    for app_pk in ended:
        _schedule_finalize(app_pk)
    return IngestResult(accepted=accepted, duplicates=duplicates)


def _apply_once(event: dict[str, Any], app_pk: int) -> Application | None:
    """Apply one event in its own transaction; None if the application already had it."""
    try:
        with transaction.atomic():
            # One event of an application at a time: two at once (a spool flush racing the agent)
            # would create its jobs and stages in opposite orders and deadlock, or save stale rows.
            application = Application.objects.select_for_update(no_key=True).get(pk=app_pk)
            IngestedEvent.objects.create(application=application, event_id=event["event_id"], type=event["type"])
            _apply.HANDLERS[event["type"]](application, event["body"], _apply.to_datetime(event["time"]))
    except IntegrityError:
        if IngestedEvent.objects.filter(application_id=app_pk, event_id=event["event_id"]).exists():
            return None
        raise
    return application


def _application(app_id: str) -> Application:
    """The application, created as a placeholder when an event arrives before its start."""
    application, _ = Application.objects.get_or_create(app_id=app_id)
    return application


def _schedule_finalize(app_pk: int) -> None:
    from lineage_server.catalog.tasks import finalize_application_task

    transaction.on_commit(lambda: finalize_application_task.delay(app_pk))
