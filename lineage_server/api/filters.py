"""Query filters of the list endpoints (django-filter)."""

from __future__ import annotations

import datetime

import django_filters
from django.core.exceptions import ValidationError
from django.db.models import Q, QuerySet

from lineage_server.catalog.models import Application, CapturePoint, Dataset, Job, Operator, RunStatus, Stage
from lineage_server.tracing.models import Direction, Trace, TraceKind, TraceStatus


class UtcDateTimeField(django_filters.fields.IsoDateTimeField):
    """An ISO 8601 date and time, given to the database in UTC: PostgreSQL refuses UTC offsets
    past 15:59, which ISO 8601 allows (a 400 then, not a server error)."""

    def to_python(self, value: object) -> datetime.datetime | None:
        parsed = super().to_python(value)
        if parsed is None or parsed.tzinfo is None:
            return parsed
        try:
            return parsed.astimezone(datetime.UTC)
        except OverflowError:
            raise ValidationError("the date and time is out of range once in UTC", code="invalid") from None


class UtcDateTimeFilter(django_filters.IsoDateTimeFilter):
    field_class = UtcDateTimeField


class ApplicationFilter(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(choices=RunStatus.choices)
    user = django_filters.CharFilter()
    team = django_filters.CharFilter(field_name="team__slug", help_text="Slug of one of your teams.")
    search = django_filters.CharFilter(method="filter_search", help_text="Text in the name or app id.")
    started_after = UtcDateTimeFilter(field_name="started_at", lookup_expr="gte")
    started_before = UtcDateTimeFilter(field_name="started_at", lookup_expr="lt")

    class Meta:
        model = Application
        fields = ["status", "user"]

    def filter_search(self, queryset: QuerySet[Application], name: str, value: str) -> QuerySet[Application]:
        return queryset.filter(Q(name__icontains=value) | Q(app_id__icontains=value))


class JobFilter(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(choices=RunStatus.choices)

    class Meta:
        model = Job
        fields = ["status", "sql_execution_id"]


class StageFilter(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(choices=RunStatus.choices)
    job = django_filters.NumberFilter(field_name="jobs__job_id", help_text="Stages of this job id.")

    class Meta:
        model = Stage
        fields = ["status"]


class OperatorFilter(django_filters.FilterSet):
    stage = django_filters.NumberFilter(field_name="stage__stage_id")
    rdd = django_filters.NumberFilter(field_name="rdd_id")

    class Meta:
        model = Operator
        fields: list[str] = []


class DatasetFilter(django_filters.FilterSet):
    path = django_filters.CharFilter(lookup_expr="icontains", help_text="Text in the path.")
    format = django_filters.CharFilter()

    class Meta:
        model = Dataset
        fields = ["format"]


class CapturePointFilter(django_filters.FilterSet):
    lineage_complete = django_filters.BooleanFilter(
        method="filter_lineage_complete", help_text="false: only points with tables the agent could not write."
    )

    class Meta:
        model = CapturePoint
        fields = ["kind"]

    def filter_lineage_complete(
        self, queryset: QuerySet[CapturePoint], name: str, value: bool
    ) -> QuerySet[CapturePoint]:
        return queryset.filter(missing_table_count=0) if value else queryset.filter(missing_table_count__gt=0)


class PinnedFirstOrdering(django_filters.OrderingFilter):
    """The order asked for, with pinned traces first."""

    def filter(self, qs: QuerySet[Trace], value: list[str] | None) -> QuerySet[Trace]:
        ordered = super().filter(qs, value)
        return ordered.order_by("-pinned", *ordered.query.order_by, "-id") if value else ordered


class TraceFilter(django_filters.FilterSet):
    application = django_filters.CharFilter(field_name="application__app_id", help_text="App id of the application.")
    user = django_filters.CharFilter(field_name="created_by_label", help_text="Username of who asked.")
    direction = django_filters.ChoiceFilter(choices=Direction.choices)
    status = django_filters.ChoiceFilter(choices=TraceStatus.choices)
    pinned = django_filters.BooleanFilter()
    created_after = UtcDateTimeFilter(field_name="created_at", lookup_expr="gte")
    created_before = UtcDateTimeFilter(field_name="created_at", lookup_expr="lt")
    search = django_filters.CharFilter(method="filter_search", help_text="Text in the name or the note.")
    ordering = PinnedFirstOrdering(
        fields=["created_at", "finished_at", "name", "status", "result_count"],
        help_text="created_at, finished_at, name, status or result_count; a leading - sorts descending. "
        "Pinned traces come first whatever the order.",
    )

    class Meta:
        model = Trace
        fields = ["direction", "status", "pinned"]

    def filter_search(self, queryset: QuerySet[Trace], name: str, value: str) -> QuerySet[Trace]:
        return queryset.filter(Q(name__icontains=value) | Q(note__icontains=value))


class WhatIfFilter(TraceFilter):
    direction = None  # a what-if always goes forward

    class Meta:
        model = Trace
        fields = ["status", "pinned"]


class HistoryFilter(TraceFilter):
    kind = django_filters.ChoiceFilter(choices=TraceKind.choices, help_text="trace, whatif or diff.")

    class Meta:
        model = Trace
        fields = ["kind", "direction", "status", "pinned"]
