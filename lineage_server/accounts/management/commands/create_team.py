from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from lineage_server.accounts.models import Role
from lineage_server.accounts.services import create_team, set_member_role


class Command(BaseCommand):
    help = "Create a team (it owns applications, capture points and traces), optionally with its first admin."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="Short name: lowercase letters, digits and dashes.")
        parser.add_argument("--name", default="", help="Display name (default: the slug).")
        parser.add_argument("--admin", help="Username of an existing user to make the team's admin.")

    @transaction.atomic
    def handle(self, *args: Any, **options: Any) -> None:
        admin = None
        if options["admin"]:
            admin = get_user_model().objects.filter(username=options["admin"]).first()
            if admin is None:
                raise CommandError(
                    f"No user {options['admin']!r}: create it first (manage.py createsuperuser or /admin/)."
                )
        try:
            team = create_team(options["slug"], options["name"], by="command:create_team")
        except ValidationError as error:
            raise CommandError("; ".join(f"{k}: {' '.join(v)}" for k, v in error.message_dict.items())) from None
        if admin is not None:
            set_member_role(team, admin, Role.ADMIN, by="command:create_team")
        self.stdout.write(f"Created team {team.slug}" + (f" with admin {admin.get_username()}" if admin else ""))
