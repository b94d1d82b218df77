"""manage.py diff: ask a diff of two runs of one job as a user, let the worker run it, print its fates."""

from __future__ import annotations

import json
import time
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.urls import reverse

from lineage_server.catalog.selectors import visible_applications
from lineage_server.tracing.models import Trace
from lineage_server.tracing.services import TraceQuestionError, ask_diff


class Command(BaseCommand):
    help = ("Ask a diff of APP_ID against an earlier run of the same job as USER (as POST /api/v1/diffs/ does), "
            "wait for the worker, and print the outputs' fates (and one output's explanation with --key).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("app_id", help="the newer run")
        parser.add_argument("--user", required=True, help="who asks (an analyst or admin of the app's team)")
        parser.add_argument("--compared-with", default=None, help="the older run (default: the previous run)")
        parser.add_argument("--capture-point", default=None, help="the output compared (default: the last action's)")
        parser.add_argument("--key", default=None, help='one output key to explain, as JSON (e.g. "incident")')
        parser.add_argument("--wait", type=float, default=300, help="seconds to wait for the answer")

    def handle(self, *args: Any, **options: Any) -> None:
        user = get_user_model().objects.filter(username=options["user"], is_active=True).first()
        if user is None:
            raise CommandError(f"no active user {options['user']!r}")
        runs = visible_applications(user).select_related("team")
        app = runs.filter(app_id=options["app_id"]).first()
        if app is None:
            raise CommandError(f"{options['user']} sees no application {options['app_id']!r}")
        other = None
        if options["compared_with"]:
            other = runs.filter(app_id=options["compared_with"]).first()
            if other is None:
                raise CommandError(f"compared_with: {options['user']} sees no application {options['compared_with']!r}")
        try:
            key = json.loads(options["key"]) if options["key"] is not None else None
            diff = ask_diff(app, by=user, compared_with=other, capture_point=options["capture_point"], key=key,
                            runs=runs)
        except json.JSONDecodeError as exc:
            raise CommandError(f"key: not JSON ({exc})") from None
        except TraceQuestionError as exc:
            raise CommandError(f"{exc.field}: {exc}") from None
        deadline = time.monotonic() + options["wait"]
        while diff.is_open and time.monotonic() < deadline:
            time.sleep(0.2)
            diff = Trace.objects.get(pk=diff.pk)
        if diff.status != "succeeded":
            raise CommandError(f"diff {diff.pk} is {diff.status}{': ' + diff.error if diff.error else ''}")
        summary = diff.summary
        self.stdout.write(f"diff {diff.pk} of {app.app_id} against {summary['compared_with']}: "
                          + ", ".join(f"{n} {fate}" for fate, n in summary["counts"].items()))
        self.stdout.write(f"Diff page: {reverse('web:diff', kwargs={'pk': diff.pk})}")
        for output in summary["outputs"]:
            if output["fate"] != "unchanged":
                self.stdout.write(f"  {json.dumps(output['key'])}: {output['fate']} {output['old_value']} -> "
                                  f"{output['new_value']}")
        why = summary.get("explained")
        if why:
            self.stdout.write(f"{json.dumps(why['key'])}: {why['added']} input records added, {why['removed']} "
                              f"removed, {why['common']} in both")
            if why["check"]:
                self.stdout.write("the change adds up" if why["check"]["holds"] else "the change does not add up")
