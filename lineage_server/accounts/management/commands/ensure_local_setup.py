from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction

from lineage_server import env
from lineage_server.accounts.models import Role, Team
from lineage_server.accounts.services import create_agent_token, create_team, find_active_agent_token, set_member_role
from lineage_server.secret_key import write_secret_key

TEAM = "default"
ADMIN = "admin"


def _write_secret(path: Path, value: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(value)


class Command(BaseCommand):
    help = (
        "For a one-machine run (`make run`): make sure a team 'default', a superuser 'admin' (its password "
        "kept in <var>/admin-password, mode 0600) who administers it, and an agent token of that team (kept "
        "in <var>/agent-token) exist, and, when SECRET_KEY is unset, a secret key in LINEAGE_VAR_DIR/secret_key "
        "for the processes started next. Existing ones are kept. Prints the two files' paths."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--var", required=True, type=Path, help="Folder for the two files.")

    def handle(self, *args: Any, **options: Any) -> None:
        if not env.SECRET_KEY.read():
            # The web server and the worker started next all read this one (settings never write it).
            write_secret_key(settings.VAR_DIR)
        self._ensure_team_admin_and_token(options["var"])

    @transaction.atomic
    def _ensure_team_admin_and_token(self, var: Path) -> None:
        actor = "command:ensure_local_setup"
        team = Team.objects.filter(slug=TEAM).first() or create_team(TEAM, "Default team", by=actor)
        password_file, token_file = var / "admin-password", var / "agent-token"
        users = get_user_model().objects
        admin = users.filter(username=ADMIN).first()
        if admin is None:
            password = secrets.token_urlsafe(12)
            admin = users.create_superuser(ADMIN, email="", password=password)
            _write_secret(password_file, password)
        set_member_role(team, admin, Role.ADMIN, by=actor)
        if not (token_file.exists() and find_active_agent_token(token_file.read_text().strip())):
            _write_secret(token_file, create_agent_token(team, "make run", by=actor)[1])
        self.stdout.write(f"{password_file}\n{token_file}")
