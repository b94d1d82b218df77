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
from lineage_server.catalog.models import Application, CapturePoint, Job, RunStatus, Stage


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


def _count_of(model: type[Job] | type[Stage], condition: Q) -> Coalesce:
    """How many of an application's ``model`` rows meet ``condition``, as a subquery."""
    rows = (
        model.objects.filter(condition, application=OuterRef("pk"))
        .order_by()
        .values("application")
        .annotate(count=Count("pk"))
        .values("count")
    )
    return Coalesce(Subquery(rows, output_field=IntegerField()), 0)


def applications_with_counts(user: Any) -> QuerySet[Application]:
    """``user``'s applications annotated with the counts the list view shows, in one query."""
    return (
        visible_applications(user)
        .annotate(
            # Subqueries, not joins: joining jobs and stages multiplied each other's rows (25,000
            # for 50 jobs of 10 stages: 28 ms of a 5,000-operator graph's answer, now 4 ms).
            job_count=_count_of(Job, Q()),
            failed_job_count=_count_of(Job, Q(status=RunStatus.FAILED)),
            stage_count=_count_of(Stage, ~Q(status=RunStatus.SKIPPED)),
            missing_table_count=missing_table_count(),
        )
        .annotate(lineage_complete=ExpressionWrapper(Q(missing_table_count=0), output_field=BooleanField()))
        .order_by(F("started_at").desc(nulls_last=True), "-id")
    )  # Meta.ordering does not apply to aggregate queries


def applications_ended_before(cutoff: dt.datetime) -> QuerySet[Application]:
    """Applications that reported their end before ``cutoff``, oldest first (those that never did are kept)."""
    return Application.objects.filter(ended_at__lt=cutoff).order_by("ended_at", "id")
