from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from lineage_server.accounts.models import AgentToken
from lineage_server.accounts.services import revoke_agent_token


class Command(BaseCommand):
    help = "Revoke agent tokens by name or prefix, or list them with --list."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name_or_prefix", nargs="?")
        parser.add_argument("--list", action="store_true", help="List tokens instead.")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["list"]:
            for token in AgentToken.objects.all():
                state = "active" if token.is_active else f"revoked {token.revoked_at:%Y-%m-%d}"
                self.stdout.write(f"{token.prefix}…  {token.name}  {state}")
            return
        key = options["name_or_prefix"]
        if not key:
            raise CommandError("Name a token (its name or prefix), or use --list.")
        tokens = AgentToken.objects.filter(name=key) | AgentToken.objects.filter(prefix=key)
        if not tokens.exists():
            raise CommandError(f"No agent token named or starting with {key!r}.")
        for token in tokens:
            revoke_agent_token(token)
            self.stdout.write(f"Revoked {token}")
