from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from lineage_server.accounts.management.commands._teams import team_by_slug
from lineage_server.accounts.services import create_agent_token


class Command(BaseCommand):
    help = "Create a team's agent token for capture agents (LINEAGE_TOKEN). The token is shown once."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="What the token is for, e.g. the job or the pipeline.")
        parser.add_argument("--team", required=True, help="Slug of the team whose lineage the token writes.")
        parser.add_argument("--quiet", action="store_true", help="Print only the token.")

    def handle(self, *args: Any, **options: Any) -> None:
        token, raw = create_agent_token(team_by_slug(options["team"]), options["name"], by="command:create_agent_token")
        if options["quiet"]:
            self.stdout.write(raw)
            return
        self.stdout.write(f"Created agent token {token.name!r} ({token.prefix}…) for team {token.team.slug}.")
        self.stdout.write("It is shown only now:")
        self.stdout.write(raw)
        self.stdout.write("Give it to the job as LINEAGE_TOKEN.")
