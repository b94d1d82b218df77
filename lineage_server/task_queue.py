"""Queue Celery tasks by name once the current transaction commits.

Write code records the work it owes and calls ``queue_task_on_commit``; it never imports the
task modules (tasks import services, never the reverse). Sending by name keeps the worker's
code out of the web process's imports, as Zulip's ``queue_event_on_commit`` does.
"""

from __future__ import annotations

import logging

from django.db import transaction

from lineage_server.celery import app

log = logging.getLogger(__name__)


def queue_task_on_commit(name: str, *args: object) -> None:
    """Send task ``name`` with ``args`` when the transaction commits (at once outside one).

    A rolled-back transaction sends nothing. What a task does must be owed in the database too
    (as ``Application.finalize_pending``, or a trace's ``sent_at``): a broker may lose a message
    that was sent, and one that is down refuses it. Either way the request that asked has done
    its part (its transaction committed), so a failed send is logged, not raised; the owed work is
    sent again by the worker's sweep or ``manage.py requeue_pending``.
    """
    transaction.on_commit(lambda: send_task(name, *args), robust=True)


def send_task(name: str, *args: object) -> None:
    """Send task ``name`` with ``args`` now."""
    app.send_task(name, args=list(args))
    log.debug("queued %s%r", name, args)
