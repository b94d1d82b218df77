from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from lineage_server.catalog.management.commands._report import describe
from lineage_server.catalog.models import Application
from lineage_server.catalog.services import delete_application, plan_deletion


class Command(BaseCommand):
    help = "Delete one application's lineage: its database rows and its files in the lineage store."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("app_id", help="Spark application id, e.g. local-1763731200000.")
        parser.add_argument("--dry-run", action="store_true", help="Only print what would be deleted.")

    def handle(self, *args: Any, **options: Any) -> None:
        app = Application.objects.filter(app_id=options["app_id"]).first()
        if app is None:
            raise CommandError(f"No application {options['app_id']!r}.")
        dry_run = options["dry_run"]
        deletion = plan_deletion(app) if dry_run else delete_application(app, by="command:delete_application")
        for line in describe(deletion, dry_run):
            self.stdout.write(line)
