"""Ingest a batch of validated agent events: accept it (record its event ids, store it), then apply it.

Applying is done in rounds (``_rounds``), each applying the batches accepted so far in one
transaction, so the requests that arrive together share the cost of writing the catalog.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from django.db import connection, transaction
from django.utils import timezone

from lineage_server.accounts.models import AgentToken
from lineage_server.accounts.services import record_audits
from lineage_server.catalog.models import Application, IngestBatch, IngestedEvent
from lineage_server.catalog.services import _locks
from lineage_server.catalog.services._rounds import apply_accepted_now


class EncodedBody(dict[str, Any]):
    """An event's body that carries its own JSON text (``json``), so storing its batch does not encode it again."""

    __slots__ = ("json",)

    def __init__(self, body: dict[str, Any], text: str) -> None:
        super().__init__(body)
        self.json = text


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
    """How many events of a batch were accepted, how many had been accepted before, and whether the
    accepted ones are applied yet (else the next round applies them)."""

    accepted: int
    duplicates: int
    applied: bool = True


def ingest_events(events: list[dict[str, Any]], token: AgentToken) -> IngestResult:
    """Accept each event once, and apply it: an event whose id the application already has changes nothing.

    In one transaction, the events their applications do not have yet are accepted (their ids
    recorded, the batch stored) and, unless a round is under way, a round applies the oldest
    accepted batches, this one among them. Otherwise the worker's next round applies it
    (``IngestResult.applied`` is false). Either way each batch is applied whole, its
    events in the order sent, and the batches of one application in the order they were
    accepted. Once the transaction commits the batch is applied whatever becomes of the request
    (a lost answer: the agent's retry counts its events as duplicates). Applications are created for
    the token's team; a batch naming another team's application is refused whole.

    Raises:
        ForeignApplicationError: an application of the batch belongs to another team.
    """
    with transaction.atomic():
        result, batch_pk = _accept(events, token)
        if batch_pk is None or apply_accepted_now(batch_pk):
            return result
        return replace(result, applied=False)


def _accept(events: list[dict[str, Any]], token: AgentToken) -> tuple[IngestResult, int | None]:
    """Record the ids of the events their applications do not have yet and store those events (in the caller's
    transaction, holding the applications' accept lock until it ends).

    Returns:
        The counts, and the stored batch's id (None when every event was a duplicate).
    """
    app_ids = sorted({event["app_id"] for event in events})
    _locks.lock_applications_for_accept(app_ids)
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    apps = _applications(app_ids, token)
    fresh = _fresh_events(events, {app_id: app.pk for app_id, app in apps.items()}, now)
    # An application none of whose events was accepted before (its query says): its capture starts now.
    had_events = {app_id for app_id, app in apps.items() if app.has_events}
    record_audits("application.capture", actor=token, team=token.team,
                  targets=sorted({event["app_id"] for event in fresh} - had_events))
    batch_pk = _store_batch(fresh, now) if fresh else None
    return IngestResult(accepted=len(fresh), duplicates=len(events) - len(fresh)), batch_pk


class _KnownApplication(NamedTuple):
    """What accepting needs of an application: its row, its team, and whether any of its events was accepted."""

    pk: int
    team_id: int
    has_events: bool


def _applications(app_ids: list[str], token: AgentToken) -> dict[str, _KnownApplication]:
    """The batch's applications, those missing created for the token's team (then read again).

    Raises:
        ForeignApplicationError: one of them belongs to another team.
    """
    apps = _read_applications(app_ids)
    missing = [app_id for app_id in app_ids if app_id not in apps]
    if missing:
        apps.update(_create_applications(missing, token))
        # Made meanwhile by a writer that does not take the accept lock: read as they are.
        apps.update(_read_applications([app_id for app_id in missing if app_id not in apps]))
    foreign = sorted(app_id for app_id, app in apps.items() if app.team_id != token.team_id)
    if foreign:
        raise ForeignApplicationError(foreign)
    return apps


# The queries every ingest request makes are written in SQL: built by the ORM (an Exists annotation, model
# instances, bulk_create's per-field preparation) they cost 0.5-1.4 ms of CPU more each, together a third of
# what accepting a batch of OpenLineage events cost. So are creating applications and storing the batch:
# bulk_create and reading the new rows again, and Model.save with the JSON field encoding the events a second
# time, were 25% and 7% of the CPU of an OpenLineage request (cProfile), in SQL 19% and 4.5%.
_APPLICATIONS = Application._meta.db_table
_EVENTS = IngestedEvent._meta.db_table
_BATCHES = IngestBatch._meta.db_table


def _read_applications(app_ids: list[str]) -> dict[str, _KnownApplication]:
    if not app_ids:
        return {}
    sql = (f"SELECT a.app_id, a.id, a.team_id, EXISTS (SELECT 1 FROM {_EVENTS} e WHERE e.application_id = a.id) "
           f"FROM {_APPLICATIONS} a WHERE a.app_id IN ({_marks(app_ids)})")
    return {app_id: _KnownApplication(pk, team_id, bool(has_events))
            for app_id, pk, team_id, has_events in _rows(sql, app_ids)}


def _create_applications(app_ids: list[str], token: AgentToken) -> dict[str, _KnownApplication]:
    """Insert the applications for the token's team, each column as its model makes a new one; those that exist
    are skipped (not returned)."""
    new = Application(team_id=token.team_id, agent_token=token)
    fields = [field for field in Application._meta.concrete_fields if not field.primary_key]
    values = [field.get_db_prep_save(field.pre_save(new, add=True), connection) for field in fields]
    at = fields.index(Application._meta.get_field("app_id"))
    sql = (f"INSERT INTO {_APPLICATIONS} ({', '.join(connection.ops.quote_name(f.column) for f in fields)}) VALUES "
           + ", ".join([f"({_marks(fields)})"] * len(app_ids))
           + " ON CONFLICT (app_id) DO NOTHING RETURNING app_id, id")
    params = [value for app_id in app_ids for value in (*values[:at], app_id, *values[at + 1:])]
    return {app_id: _KnownApplication(pk, token.team_id, False) for app_id, pk in _rows(sql, params)}


def _fresh_events(events: list[dict[str, Any]], app_pks: dict[str, int], received_at: Any) -> list[dict[str, Any]]:
    """The events their application does not have yet (the first of repeats in the batch), now recorded as had.

    One insert that skips the ids already recorded and returns the others. Called holding the
    applications' accept lock, so no other request records events of theirs meanwhile.
    """
    types: dict[tuple[int, str], str] = {}  # (app pk, event id) -> type, in the order sent
    for event in events:
        types.setdefault((app_pks[event["app_id"]], event["event_id"]), event["type"])
    if not types:
        return []
    sql = (f"INSERT INTO {_EVENTS} (application_id, event_id, type, received_at) VALUES "
           + ", ".join(["(%s, %s, %s, %s)"] * len(types))
           + " ON CONFLICT (application_id, event_id) DO NOTHING RETURNING application_id, event_id")
    recorded = set(_rows(sql, [value for (pk, event_id), kind in types.items()
                               for value in (pk, event_id, kind, received_at)]))
    fresh = []
    for event in events:
        key = (app_pks[event["app_id"]], event["event_id"])
        if key in recorded:
            recorded.remove(key)
            fresh.append(event)
    return fresh


def _store_batch(events: list[dict[str, Any]], received_at: Any) -> int:
    """Store the accepted events as one batch, each body encoded once (an ``EncodedBody`` is already)."""
    sql = f"INSERT INTO {_BATCHES} (events, size, received_at, error) VALUES (%s, %s, %s, '') RETURNING id"
    text = "[" + ", ".join(_event_json(event) for event in events) + "]"
    return int(_rows(sql, [text, len(events), received_at])[0][0])


def _event_json(event: dict[str, Any]) -> str:
    body = event["body"]
    if not isinstance(body, EncodedBody):
        return json.dumps(event)
    rest = json.dumps({name: value for name, value in event.items() if name != "body"})
    return f'{rest[:-1]}, "body": {body.json}}}'


def _marks(values: list[Any]) -> str:
    return ", ".join(["%s"] * len(values))


def _rows(sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()
