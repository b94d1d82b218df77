"""Rounds: accepted batches (``IngestBatch``) applied to the catalog, many in one transaction, oldest first.

A round takes the lock for applying, the oldest accepted batches up to a number of events (at
least one batch), locks their applications, applies their events in the order accepted with one
bulk upsert per kind of row (``CatalogBatch``), and deletes the batches, all in one transaction:
a round is applied whole or not at all, and the batches a failed round leaves are taken by the
next. The request that accepts a batch runs a round itself when no round is under way (so an
agent alone sees its events applied when it is answered); while one is, it leaves its batch to
the worker's applier (``catalog.tasks``), which runs rounds while batches wait. Under load each
round thus applies the batches of many requests for the fixed cost of one.
"""

from __future__ import annotations

import logging
import traceback
from typing import Any

from django.db import InterfaceError, OperationalError, transaction

from lineage_server.catalog.models import Application, IngestBatch
from lineage_server.catalog.services import _apply, _locks
from lineage_server.catalog.services._batch import CatalogBatch, by_application
from lineage_server.catalog.services.finalize import FINALIZE_TASK
from lineage_server.task_queue import queue_task_on_commit

log = logging.getLogger(__name__)
ROUND_EVENTS = 5000  # events one round applies at most (a bigger single batch is applied alone)
REQUEST_ROUND_EVENTS = 1000  # events a request's round applies at most
_LOOK_AHEAD = 1000  # accepted batches a round looks at to choose its own
# What the database did, not what a batch holds (a lost connection, a deadlock): the round is tried again,
# no batch is set aside for it.
_TRANSIENT = (OperationalError, InterfaceError)


def apply_accepted(retry_set_aside: bool = False) -> int:
    """Apply every accepted batch, oldest first, in rounds (waiting for a round under way to end first).

    A batch that fails to apply alone is set aside (its ``error`` kept and logged), so one bad batch
    never holds up the others; ``retry_set_aside`` tries those again first (after a fix).

    Returns:
        The number of events applied.

    Raises:
        OperationalError, InterfaceError: the database failed (the batches wait for the next call).
    """
    if retry_set_aside:
        IngestBatch.objects.exclude(error="").update(error="")
    applied = 0
    # A plain read first: looking for work takes no lock (on SQLite a transaction takes the write lock).
    while IngestBatch.objects.filter(error="").exists():
        try:
            with transaction.atomic():
                _locks.lock_for_applying()
                events, _ = _round(ROUND_EVENTS)
        except _TRANSIENT:
            raise
        except Exception:
            log.exception("a round of accepted ingest batches failed; applying them one at a time")
            applied += _apply_one_by_one()
            continue
        applied += len(events)
    return applied


def apply_accepted_now(batch_pk: int) -> bool:
    """In the transaction that accepted batch ``batch_pk``: unless a round is under way, apply one with it.

    Returns:
        Whether batch ``batch_pk`` is applied (false: a round under way, too many events before it, or a
        failed round leave it to the worker's applier).
    """
    if not _locks.lock_for_applying(wait=False):
        return False
    try:
        with transaction.atomic():  # a savepoint: whatever becomes of the round, the batch stays accepted
            _, last = _round(REQUEST_ROUND_EVENTS)
    except Exception:
        log.exception("a round of accepted ingest batches failed; the worker's applier takes them")
        return False
    return batch_pk <= last


def _apply_one_by_one() -> int:
    """Rounds of one batch, oldest first, until one fails (set aside) or none is left; returns events applied."""
    applied = 0
    while True:
        try:
            with transaction.atomic():
                _locks.lock_for_applying()
                events, _ = _round(0)
        except _TRANSIENT:
            raise
        except Exception:
            oldest = IngestBatch.objects.filter(error="").order_by("pk").first()
            if oldest is not None:
                log.exception("accepted ingest batch %s failed to apply; set aside", oldest.pk)
                IngestBatch.objects.filter(pk=oldest.pk).update(error=traceback.format_exc()[-10_000:])
            return applied
        if not events:
            return applied
        applied += len(events)


def _round(limit: int) -> tuple[list[dict[str, Any]], int]:
    """Apply the oldest accepted batches holding at most ``limit`` events (at least one batch) and delete them.

    Returns:
        Their events, and the id of the last batch applied (0 when none was waiting).
    """
    chosen: list[int] = []
    total = 0
    for pk, size in IngestBatch.objects.filter(error="").order_by("pk").values_list("pk", "size")[:_LOOK_AHEAD]:
        if chosen and total + size > limit:
            break
        chosen.append(pk)
        total += size
    if not chosen:
        return [], 0
    events = [event for batch in IngestBatch.objects.filter(pk__in=chosen).order_by("pk")
              .values_list("events", flat=True) for event in batch]
    _apply_events(events)
    IngestBatch.objects.filter(pk__in=chosen).delete()
    return events, chosen[-1]


def _apply_events(events: list[dict[str, Any]]) -> None:
    """Apply accepted events in the order given; write what they changed.

    Called in a round's transaction. An application deleted after its events were accepted is
    skipped (its event ids went with it).
    """
    apps = _locked_applications(sorted({event["app_id"] for event in events}))
    events = [event for event in events if event["app_id"] in apps]
    app_pks = {app_id: app.pk for app_id, app in apps.items()}
    batch = CatalogBatch(apps.values())
    refs = [(app_pks[event["app_id"]], _apply.referenced_ids(event["body"])) for event in events]
    batch.load(by_application((app_pk, job) for app_pk, (jobs, _) in refs for job in jobs),
               by_application((app_pk, stage) for app_pk, (_, stages) in refs for stage in stages))
    ended: set[str] = set()
    for event in events:
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


def _locked_applications(app_ids: list[str]) -> dict[str, Application]:
    """The applications, locked in primary key order: finalize and deletion wait for the round, and it for them."""
    return {app.app_id: app for app in Application.objects.select_for_update(no_key=True)
            .filter(app_id__in=app_ids).order_by("pk")}
