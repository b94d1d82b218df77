"""Django's SQLite backend, creating the database file's folder when it first connects.

Settings create no folders when imported; the embedded database makes its own under var/ on
first use (``migrate`` on a fresh install, the test database, a worker started first).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.db.backends.sqlite3 import base


class DatabaseWrapper(base.DatabaseWrapper):
    """SQLite, with the folder of a file database made before connecting."""

    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        name = str(conn_params.get("database") or "")
        if name and not self.is_in_memory_db() and not name.startswith("file:"):
            Path(name).parent.mkdir(parents=True, exist_ok=True)
        return super().get_new_connection(conn_params)
