"""Apply a batch of validated agent events to the catalog, idempotently and in any order."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction

from lineage_server.accounts.models import AgentToken
from lineage_server.accounts.services import record_audit
from lineage_server.catalog.models import Application, IngestedEvent
from lineage_server.catalog.services import _apply
from lineage_server.catalog.services.finalize import FINALIZE_TASK
from lineage_server.task_queue import queue_task_on_commit


class ForeignApplicationError(PermissionError):
    """A batch names an application another team's agent reported: a token writes its own team only."""

    def __init__(self, app_ids: list[str]) -> None:
        super().__init__(
            f"Application(s) {', '.join(app_ids)} belong to another team; this agent token writes its own "
            "team's lineage only. Nothing in this batch was applied."
        )
        self.app_ids = app_ids


@dataclass(frozen=True)
class IngestResult:
    """How many events of a batch were applied, and how many had been applied before."""

    accepted: int
    duplicates: int


def ingest_events(events: list[dict[str, Any]], token: AgentToken) -> IngestResult:
    """Apply each event once: an event whose id the application already has changes nothing.

    Each event commits on its own, so a batch cut short by a crash leaves only whole events and
    the agent's retry of the batch applies exactly the rest. Applications are created for the
    token's team; a batch naming another team's application is refused whole.

    Raises:
        ForeignApplicationError: an application of the batch belongs to another team.
    """
    app_ids = sorted({event["app_id"] for event in events})
    foreign = list(
        Application.objects.filter(app_id__in=app_ids).exclude(team_id=token.team_id).values_list("app_id", flat=True)
    )
    if foreign:
        raise ForeignApplicationError(sorted(foreign))
    accepted = duplicates = 0
    ended: set[int] = set()
    app_pks = {app_id: _application(app_id, token).pk for app_id in app_ids}
    for event in events:
        application = _apply_once(event, app_pks[event["app_id"]])
        if application is None:
            duplicates += 1
            continue
        accepted += 1
        if application.ended_at is not None:
            # The end, or a late event of an ended application: settle the books (again).
            ended.add(application.pk)
    for app_pk in ended:
        queue_task_on_commit(FINALIZE_TASK, app_pk)
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
            if application.ended_at is not None and not application.finalize_pending:
                # Owed from this commit until finalize clears it, whatever becomes of the task message.
                application.finalize_pending = True
                application.save(update_fields=["finalize_pending"])
    except IntegrityError:
        if IngestedEvent.objects.filter(application_id=app_pk, event_id=event["event_id"]).exists():
            return None
        raise
    return application


def _application(app_id: str, token: AgentToken) -> Application:
    """The application, created for the token's team when its first event arrives (in any order)."""
    with transaction.atomic():
        application, created = Application.objects.get_or_create(
            app_id=app_id, defaults={"team_id": token.team_id, "agent_token": token}
        )
        if created:
            record_audit("application.capture", actor=token, team=token.team, target=app_id)
    if application.team_id != token.team_id:  # created by another team's agent meanwhile
        raise ForeignApplicationError([app_id])
    return application
