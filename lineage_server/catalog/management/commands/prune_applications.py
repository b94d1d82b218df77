from __future__ import annotations

import datetime as dt
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from lineage_server.catalog.management.commands._report import describe
from lineage_server.catalog.selectors import applications_ended_before
from lineage_server.catalog.services import delete_application, plan_deletion


class Command(BaseCommand):
    help = (
        "Delete the lineage (database rows and lineage store files) of applications that ended more "
        "than N days ago; N is --days, else LINEAGE_RETENTION_DAYS. Applications that never reported "
        "their end are kept."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--days", type=int, help="Keep applications that ended in the last N days.")
        parser.add_argument("--dry-run", action="store_true", help="Only print what would be deleted.")

    def handle(self, *args: Any, **options: Any) -> None:
        days = options["days"] if options["days"] is not None else settings.LINEAGE["RETENTION_DAYS"]
        if days <= 0:
            raise CommandError(
                f"No retention period (days={days}): pass --days N with N > 0, or set LINEAGE_RETENTION_DAYS "
                "(0, the default, keeps every application forever)."
            )
        cutoff = timezone.now() - dt.timedelta(days=days)
        dry_run = options["dry_run"]
        count = 0
        # One transaction per application: a failure part-way keeps what was already pruned.
        for app in list(applications_ended_before(cutoff)):
            deletion = (
                plan_deletion(app)
                if dry_run
                else delete_application(app, by=f"command:prune_applications --days {days}")
            )
            for line in describe(deletion, dry_run):
                self.stdout.write(line)
            count += 1
        verb = "would delete" if dry_run else "deleted"
        self.stdout.write(f"{verb} {count} applications that ended before {cutoff:%Y-%m-%d %H:%M} UTC")
