"""Start a real Celery worker process against the test database and broker."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.db import connection

ROOT = Path(__file__).resolve().parents[2]


def test_database_url() -> str:
    """A DATABASE_URL for the database the tests are using right now (the test database)."""
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    user = db.get("USER") or ""
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    auth = f"{user}{password}@" if user else ""
    return f"postgres://{auth}{db.get('HOST') or 'localhost'}:{db.get('PORT') or 5432}/{db['NAME']}"


@contextmanager
def celery_worker(log: Path, **extra_env: str) -> Iterator[subprocess.Popen[bytes]]:
    """The same worker command `make run` starts (Celery's threads pool, ``LINEAGE_TRACE_CONCURRENCY``
    traces at once), as a child process (with ``extra_env``); stopped on exit."""
    env = {**os.environ, "DATABASE_URL": test_database_url(), **extra_env}
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "lineage_server",
                "worker",
                "--loglevel",
                "INFO",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
            ],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            yield proc
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
