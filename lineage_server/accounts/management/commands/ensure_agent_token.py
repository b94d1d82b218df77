from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from lineage_server.accounts.services import create_agent_token, find_active_token


class Command(BaseCommand):
    help = (
        "Keep a working agent token in a file (mode 0600) for local runs: reuse the one there if the "
        "server still accepts it, else create a new one. Prints the file's path."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="Name of the token if one must be created.")
        parser.add_argument("--file", required=True, type=Path, help="Where the raw token is kept.")

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["file"]
        if path.exists() and find_active_token(path.read_text().strip()):
            self.stdout.write(str(path))
            return
        _, raw = create_agent_token(options["name"])
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(raw)
        self.stdout.write(str(path))
