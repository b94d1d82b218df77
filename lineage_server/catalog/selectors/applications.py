from __future__ import annotations

import datetime as dt
from typing import Any

from django.db.models import Count, F, Q, QuerySet

from lineage_server.accounts.selectors import teams_for
from lineage_server.catalog.models import Application, RunStatus


def visible_applications(user: Any) -> QuerySet[Application]:
    """The applications of ``user``'s teams: every read of the catalog starts here."""
    return Application.objects.filter(team__in=teams_for(user))


def applications_with_counts(user: Any) -> QuerySet[Application]:
    """``user``'s applications annotated with the counts the list view shows, in one query."""
    return (
        visible_applications(user)
        .annotate(
            job_count=Count("jobs", distinct=True),
            failed_job_count=Count("jobs", filter=Q(jobs__status=RunStatus.FAILED), distinct=True),
            stage_count=Count("stages", filter=~Q(stages__status=RunStatus.SKIPPED), distinct=True),
        )
        .order_by(F("started_at").desc(nulls_last=True), "-id")
    )  # Meta.ordering does not apply to aggregate queries


def applications_ended_before(cutoff: dt.datetime) -> QuerySet[Application]:
    """Applications that reported their end before ``cutoff``, oldest first (those that never did are kept)."""
    return Application.objects.filter(ended_at__lt=cutoff).order_by("ended_at", "id")
