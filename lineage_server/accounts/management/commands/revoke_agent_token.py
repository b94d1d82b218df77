from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Q

from lineage_server.accounts.management.commands._teams import team_by_slug
from lineage_server.accounts.models import AgentToken
from lineage_server.accounts.services import revoke_token


class Command(BaseCommand):
    help = "Revoke agent tokens by name or prefix, or list them with --list (optionally of one --team)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name_or_prefix", nargs="?")
        parser.add_argument("--team", help="Only this team's tokens.")
        parser.add_argument("--list", action="store_true", help="List tokens instead.")

    def handle(self, *args: Any, **options: Any) -> None:
        tokens = AgentToken.objects.select_related("team")
        if options["team"]:
            tokens = tokens.filter(team=team_by_slug(options["team"]))
        if options["list"]:
            for token in tokens:
                state = "active" if token.is_active else f"revoked {token.revoked_at:%Y-%m-%d}"
                self.stdout.write(f"{token.prefix}…  {token.team.slug}  {token.name}  {state}")
            return
        key = options["name_or_prefix"]
        if not key:
            raise CommandError("Name a token (its name or prefix), or use --list.")
        matches = tokens.filter(Q(name=key) | Q(prefix=key))
        if not matches.exists():
            raise CommandError(f"No agent token named or starting with {key!r}.")
        for token in matches:
            revoke_token(token, by="command:revoke_agent_token")
            self.stdout.write(f"Revoked {token} of team {token.team.slug}")
