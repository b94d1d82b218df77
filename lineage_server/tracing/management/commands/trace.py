"""manage.py trace: ask a trace as a user, let the worker run it, and print where its answer is."""

from __future__ import annotations

import json
import time
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.urls import reverse

from lineage_server.catalog.selectors import visible_applications
from lineage_server.tracing.models import Trace
from lineage_server.tracing.selectors import visible_traces
from lineage_server.tracing.services import TraceQuestionError, ask_trace


class Command(BaseCommand):
    help = ("Ask a trace of an application's record-level lineage as USER (as POST /api/v1/traces/ does), "
            "wait for the worker to answer it, and print its status, counts and URL.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("app_id")
        parser.add_argument("--user", required=True, help="who asks (an analyst or admin of the app's team)")
        parser.add_argument("--direction", choices=["backward", "forward"], default="backward")
        parser.add_argument("--capture-point", default=None, help="start here (default: the last action's output)")
        which = parser.add_mutually_exclusive_group(required=True)
        which.add_argument("--ids", help="comma-separated record ids")
        which.add_argument("--predicate", help='a filter as JSON, e.g. {"field": 0, "op": "equals", "value": "x"}')
        which.add_argument("--all", action="store_true", help="every record of the capture point")
        parser.add_argument("--target", default="end", help="end, step or a capture point id")
        parser.add_argument("--name", default="")
        parser.add_argument("--wait", type=float, default=300, help="seconds to wait for the answer (0: don't)")
        parser.add_argument("--base-url", default="", help="prefix of the printed URL, e.g. http://127.0.0.1:8000")

    def handle(self, *args: Any, **options: Any) -> None:
        user = get_user_model().objects.filter(username=options["user"], is_active=True).first()
        if user is None:
            raise CommandError(f"no active user {options['user']!r}")
        app = visible_applications(user).select_related("team").filter(app_id=options["app_id"]).first()
        if app is None:
            raise CommandError(f"{options['user']} sees no application {options['app_id']!r}")
        if options["ids"]:
            selection: dict[str, Any] = {"ids": [int(i) for i in options["ids"].split(",")]}
        elif options["predicate"]:
            selection = {"predicate": json.loads(options["predicate"])}
        else:
            selection = {"all": True}
        try:
            trace = ask_trace(app, by=user, direction=options["direction"], selection=selection,
                              capture_point=options["capture_point"], target=options["target"],
                              name=options["name"], seeds=visible_traces(user))
        except TraceQuestionError as exc:
            raise CommandError(f"{exc.field}: {exc}") from None
        deadline = time.monotonic() + options["wait"]
        while trace.is_open and time.monotonic() < deadline:
            time.sleep(0.2)
            trace = Trace.objects.get(pk=trace.pk)
        url = options["base_url"].rstrip("/") + reverse("api:trace-detail", kwargs={"pk": trace.pk})
        self.stdout.write(f"trace {trace.pk}: {trace.status}"
                          + (f", {trace.result_count} records" if trace.result_count is not None else "")
                          + (f" ({trace.error})" if trace.error else ""))
        self.stdout.write(f"Trace URL: {url}")
        page = options["base_url"].rstrip("/") + reverse("web:trace", kwargs={"pk": trace.pk})
        self.stdout.write(f"Trace page: {page}")
        if trace.status == "succeeded":
            for record in trace.summary.get("first_page", [])[:5]:
                self.stdout.write(f"  {record['file'] or record['capture_id']}:{record['offset']}  {record['value']}")
        elif trace.is_open:
            raise CommandError(f"trace {trace.pk} is still {trace.status} after {options['wait']} s: is a worker "
                               f"running (celery -A lineage_server worker)? Broker: {settings.CELERY_BROKER_URL}")
        else:
            raise CommandError(f"trace {trace.pk} {trace.status}: {trace.error}")
