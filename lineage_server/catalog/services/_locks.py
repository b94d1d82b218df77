"""The two locks of ingest, held until the current transaction ends.

On PostgreSQL they are advisory locks: one per application for accepting its events (so the
batches of one application are accepted one after the other, and their ids grow in that order),
and one for applying (one round of accepted batches at a time, so each application's batches are
applied in the order they were accepted). Neither waits on the rows the other writes: a request
accepting events is not held up by a round applying earlier ones. SQLite needs neither: its
transactions take the database's write lock when they begin (``transaction_mode: IMMEDIATE``), so
only one writes at a time.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable

from django.db import connection

# The first key of each advisory lock says whose it is (the second is the application's hash, or 0).
_ACCEPT = 1_404_001
_APPLY = 1_404_002


def lock_applications_for_accept(app_ids: Iterable[str]) -> None:
    """Wait until no other transaction accepts events of these applications; hold that until this one ends."""
    # Sorted, so two requests naming the same applications never wait on each other in opposite orders.
    keys = sorted({zlib.crc32(app_id.encode()) - 2**31 for app_id in app_ids})
    if keys and connection.vendor == "postgresql":
        calls = ", ".join("pg_advisory_xact_lock(%s, %s)" for _ in keys)
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT {calls}", [value for key in keys for value in (_ACCEPT, key)])


def lock_for_applying(wait: bool = True) -> bool:
    """Take the lock for applying accepted events until this transaction ends, waiting for it unless ``wait``
    is false; returns whether it was taken (always on SQLite, which waits for its write lock)."""
    if connection.vendor != "postgresql":
        return True
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {'pg_advisory_xact_lock' if wait else 'pg_try_advisory_xact_lock'}(%s, 0)", [_APPLY])
        row = cursor.fetchone()
    return wait or bool(row and row[0])
