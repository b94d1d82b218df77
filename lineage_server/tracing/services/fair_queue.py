"""Which queued trace a worker runs next: shared fairly across teams, not first come, first served.

Each queued trace has a message in the broker, but a message does not say which trace runs: the
worker that takes one runs the queued trace of the team with the fewest traces running, among
those the team served longest ago (a team never served first), its oldest trace first. So one
team's hundred queued traces hold back another team's single trace by at most the traces already
running. Every message still runs at most one trace, and gives up only when nothing is queued:
there are never fewer messages than queued traces (``recovery`` re-sends any the broker lost), so
no trace is stranded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db.models import Count, F, IntegerField, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce

from lineage_server.tracing.models import Trace, TraceStatus
from lineage_server.tracing.services.dispatch import run_trace

MAX_PICKS = 50  # claims lost to other workers before a message gives up (each loss means another ran)


def next_queued() -> int | None:
    """The id of the queued trace fairness says runs next, or None when none is queued."""
    team = OuterRef("application__team")
    running = (Trace.objects.filter(status=TraceStatus.RUNNING, application__team=team)
               .values("application__team").annotate(n=Count("id")).values("n"))
    served = (Trace.objects.filter(application__team=team, started_at__isnull=False)
              .order_by("-started_at").values("started_at")[:1])
    queued = Trace.objects.filter(status=TraceStatus.QUEUED).annotate(
        team_running=Coalesce(Subquery(running, output_field=IntegerField()), Value(0)),
        team_served=Subquery(served),
    )
    order = ("team_running", F("team_served").asc(nulls_first=True), "created_at", "id")
    return queued.order_by(*order).values_list("pk", flat=True).first()


def run_next_trace(*, worker: str = "", spark: Callable[[], Any] | None = None) -> Trace | None:
    """Runs the queued trace that is next in fairness (``run_trace``); None when none is queued.

    Args:
        worker: the Celery worker's name, kept on the trace.
        spark: gives the warm SparkContext.
    """
    for _ in range(MAX_PICKS):
        pk = next_queued()
        if pk is None:
            return None
        done = run_trace(pk, worker=worker, spark=spark)
        if done is not None:
            return done
    return None
