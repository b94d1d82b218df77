"""Apply a batch of validated agent events to the catalog, idempotently and in any order, in one transaction."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from django.db import transaction
from django.db.models import Exists, OuterRef

from lineage_server.accounts.models import AgentToken
from lineage_server.accounts.services import record_audits
from lineage_server.catalog.models import Application, IngestedEvent
from lineage_server.catalog.services import _apply
from lineage_server.catalog.services._batch import CatalogBatch, by_application
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

    The whole batch is one transaction: it locks its applications, skips the events they already have,
    applies the rest in the order sent, and writes what they changed with one bulk upsert per kind
    of row. Batches of one application are thus applied one after the other, each whole or not at
    all, and the agent's retry of a batch cut short applies it all again. Applications are created
    for the token's team; a batch naming another team's application is refused whole.

    Raises:
        ForeignApplicationError: an application of the batch belongs to another team.
    """
    app_ids = sorted({event["app_id"] for event in events})
    with transaction.atomic():
        apps = _locked_applications(app_ids, token)
        if len(apps) == len(app_ids):
            return _apply_batch(events, apps, token)
    # New applications are inserted first, with one query (committed whatever becomes of the batch:
    # another batch naming them meanwhile may have inserted them too), then the batch is applied
    # with them all locked.
    Application.objects.bulk_create(
        [Application(app_id=app_id, team_id=token.team_id, agent_token=token) for app_id in app_ids
         if app_id not in apps],
        ignore_conflicts=True,
    )
    with transaction.atomic():
        return _apply_batch(events, _locked_applications(app_ids, token), token)


def _locked_applications(app_ids: list[str], token: AgentToken) -> dict[str, Application]:
    """The batch's applications that exist, locked in primary key order (two batches never wait on each
    other in opposite orders): one batch of an application at a time, or two at once (a spool flush
    racing the agent) would save stale rows.

    Raises:
        ForeignApplicationError: one of them belongs to another team.
    """
    has_events = Exists(IngestedEvent.objects.filter(application=OuterRef("pk")))
    apps: dict[str, Application] = {
        app.app_id: app for app in Application.objects.select_for_update(no_key=True)
        .filter(app_id__in=app_ids).annotate(has_events=has_events).order_by("pk")
    }
    foreign = sorted(app_id for app_id, app in apps.items() if app.team_id != token.team_id)
    if foreign:
        raise ForeignApplicationError(foreign)
    return apps


def _apply_batch(events: list[dict[str, Any]], apps: dict[str, Application], token: AgentToken) -> IngestResult:
    """Apply the events their applications do not have yet, in the order sent; write what they changed.

    The batch that applies an application's first events records its capture in the audit trail.
    """
    app_pks = {app_id: app.pk for app_id, app in apps.items()}
    fresh = _fresh_events(events, app_pks)
    # An application none of whose events was applied before (its lock query says): its capture starts now.
    had_events = {app_id for app_id, app in apps.items() if cast(Any, app).has_events}
    captured = sorted({event["app_id"] for event in fresh} - had_events)
    record_audits("application.capture", actor=token, team=token.team, targets=captured)
    batch = CatalogBatch(apps.values())
    refs = [(app_pks[event["app_id"]], _apply.referenced_ids(event["body"])) for event in fresh]
    batch.load(by_application((app_pk, job) for app_pk, (jobs, _) in refs for job in jobs),
               by_application((app_pk, stage) for app_pk, (_, stages) in refs for stage in stages))
    ended: set[str] = set()
    for event in fresh:
        app = apps[event["app_id"]]
        _apply.HANDLERS[event["type"]](batch, app, event["body"], _apply.to_datetime(event["time"]))
        if app.ended_at is not None and event["type"] in _apply.FINALIZED_TYPES:
            # The end, or a late event of an ended application: settle the books (again).
            ended.add(app.app_id)
    for app_id in sorted(ended):
        # Owed from this commit until finalize clears it, whatever becomes of the task message.
        apps[app_id].finalize_pending = True
        queue_task_on_commit(FINALIZE_TASK, apps[app_id].pk)
    batch.flush()
    return IngestResult(accepted=len(fresh), duplicates=len(events) - len(fresh))


def _fresh_events(events: list[dict[str, Any]], app_pks: dict[str, int]) -> list[dict[str, Any]]:
    """The events their application does not have yet (the first of repeats in the batch), now recorded as had.

    Called with the applications locked, so no other batch records events of theirs meanwhile.
    """
    stored = set(
        IngestedEvent.objects.filter(application_id__in=app_pks.values(),
                                     event_id__in={event["event_id"] for event in events})
        .values_list("application_id", "event_id")
    )
    fresh = []
    for event in events:
        key = (app_pks[event["app_id"]], event["event_id"])
        if key not in stored:
            stored.add(key)
            fresh.append(event)
    IngestedEvent.objects.bulk_create(
        [IngestedEvent(application_id=app_pks[e["app_id"]], event_id=e["event_id"], type=e["type"]) for e in fresh]
    )
    return fresh
