from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from lineage_server.accounts.management.commands._teams import team_by_slug
from lineage_server.accounts.models import Role
from lineage_server.accounts.services import MembershipError, remove_member, set_member_role


class Command(BaseCommand):
    help = "Add a user to a team or change their role (--role viewer|analyst|admin), or --remove them."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("team", help="Team slug.")
        parser.add_argument("username")
        action = parser.add_mutually_exclusive_group(required=True)
        action.add_argument("--role", choices=[r.value for r in Role])
        action.add_argument("--remove", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        team = team_by_slug(options["team"])
        user = get_user_model().objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"No user {options['username']!r}.")
        try:
            if options["remove"]:
                remove_member(team, user, by="command:team_member")
                self.stdout.write(f"Removed {user.get_username()} from {team.slug}")
            else:
                set_member_role(team, user, options["role"], by="command:team_member")
                self.stdout.write(f"{user.get_username()} is {options['role']} in {team.slug}")
        except MembershipError as error:
            raise CommandError(str(error)) from None
