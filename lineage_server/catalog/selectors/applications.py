from __future__ import annotations

import datetime as dt
from typing import Any

from django.db.models import (
    BooleanField,
    Count,
    ExpressionWrapper,
    F,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
)
from django.db.models.functions import Coalesce

from lineage_server.accounts.selectors import teams_for
from lineage_server.catalog.models import Application, CapturePoint, RunStatus


def visible_applications(user: Any) -> QuerySet[Application]:
    """The applications of ``user``'s teams: every read of the catalog starts here."""
    return Application.objects.filter(team__in=teams_for(user))


def missing_table_count() -> Coalesce:
    """An application's per-partition lineage tables its agent could not write, over all its capture points."""
    per_app = (
        CapturePoint.objects.filter(application=OuterRef("pk"))
        .order_by()
        .values("application")
        .annotate(total=Sum("missing_table_count"))
        .values("total")
    )
    return Coalesce(Subquery(per_app, output_field=IntegerField()), 0)


def applications_with_counts(user: Any) -> QuerySet[Application]:
    """``user``'s applications annotated with the counts the list view shows, in one query."""
    return (
        visible_applications(user)
        .annotate(
            job_count=Count("jobs", distinct=True),
            failed_job_count=Count("jobs", filter=Q(jobs__status=RunStatus.FAILED), distinct=True),
            stage_count=Count("stages", filter=~Q(stages__status=RunStatus.SKIPPED), distinct=True),
            # A subquery, not a join: a third joined table would multiply the counts' rows again.
            missing_table_count=missing_table_count(),
        )
        .annotate(lineage_complete=ExpressionWrapper(Q(missing_table_count=0), output_field=BooleanField()))
        .order_by(F("started_at").desc(nulls_last=True), "-id")
    )  # Meta.ordering does not apply to aggregate queries


def applications_ended_before(cutoff: dt.datetime) -> QuerySet[Application]:
    """Applications that reported their end before ``cutoff``, oldest first (those that never did are kept)."""
    return Application.objects.filter(ended_at__lt=cutoff).order_by("ended_at", "id")
