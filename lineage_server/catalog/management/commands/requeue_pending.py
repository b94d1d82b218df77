from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from lineage_server.catalog.services import apply_accepted, requeue_pending_finalizes


class Command(BaseCommand):
    help = (
        "Queue the finalize task again for every application still owed one (e.g. after the broker "
        "lost its messages), and apply the accepted ingest batches still waiting, those set aside "
        "because they failed to apply included (after a fix). A starting Celery worker does the same, "
        "set-aside batches excepted."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        applied = apply_accepted(retry_set_aside=True)
        if applied:
            self.stdout.write(f"applied {applied} accepted ingest events")
        count = requeue_pending_finalizes()
        self.stdout.write(f"queued finalize for {count} applications")
