"""Serializers of traces: the question asked, and the answer's summary as history pages show it."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from lineage_server.api.serializers.column_lineage import TRANSFORMATION_TYPES
from lineage_server.tracing.models import Direction, Trace
from lineage_server.tracing.selectors import traced_columns

SELECTION_HELP = (
    'Exactly one of: {"ids": [record ids]}; {"predicate": filter} (a declarative filter on the records\' '
    'values, e.g. {"field": 0, "op": "equals", "value": "error"}; ops: equals, in, contains, prefix, regex, '
    'range; combined with {"and": [...]}, {"or": [...]}, {"not": ...}); {"trace": id, "capture_point": '
    'optional} (the records of an earlier trace\'s result); {"all": true} (every record of the point).'
)


class QuestionSerializer(serializers.Serializer[Any]):
    """What asking a trace or a what-if shares: the application, and how the answer is kept."""

    application = serializers.CharField(help_text="App id of the application.")
    name = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)
    note = serializers.CharField(required=False, allow_blank=True, default="")
    recompute = serializers.BooleanField(
        required=False, default=False,
        help_text="Run it even if the same question was answered on unchanged lineage (else that answer is reused).",
    )


class TraceQuestionSerializer(QuestionSerializer):
    """What POST /traces/ asks."""

    capture_point = serializers.CharField(
        required=False, allow_blank=True, allow_null=True,
        help_text="Capture point to start at (its capture_id); left out: the outputs of the last action. "
        "Leave it out when selecting an earlier trace's result.",
    )
    direction = serializers.ChoiceField(choices=Direction.choices)
    selection = serializers.JSONField(help_text=SELECTION_HELP)
    target = serializers.CharField(
        required=False, allow_blank=True, default="end",
        help_text="end (the job's inputs backward, its outputs forward), step (one capture point), "
        "or a capture point's capture_id to stop at.",
    )


class TraceUpdateSerializer(serializers.ModelSerializer[Trace]):
    class Meta:
        model = Trace
        fields = ["name", "note", "pinned"]


class TraceSerializer(serializers.ModelSerializer[Trace]):
    """A trace in the history."""

    application = serializers.CharField(source="application.app_id", read_only=True)
    team = serializers.CharField(source="application.team.slug", read_only=True)
    capture_point = serializers.CharField(source="start_capture_id", read_only=True)
    created_by = serializers.CharField(source="created_by_label", read_only=True)
    duration_ms = serializers.IntegerField(read_only=True, allow_null=True)
    reused = serializers.SerializerMethodField(help_text="True when the stored answer of an earlier trace was reused.")
    progress = serializers.SerializerMethodField()
    kind = serializers.SerializerMethodField()
    url = serializers.SerializerMethodField()
    links = serializers.SerializerMethodField()

    class Meta:
        model = Trace
        fields = [
            "id", "kind", "url", "application", "team", "created_by", "created_at", "direction", "capture_point",
            "selection", "target", "name", "note", "pinned", "status", "started_at", "finished_at",
            "duration_ms", "error", "progress", "result_count", "reused", "answered_from", "rerun_of", "seed",
            "links",
        ]
        read_only_fields = fields

    def get_kind(self, trace: Trace) -> str:
        return trace.kind

    def get_reused(self, trace: Trace) -> bool:
        return trace.answered_from_id is not None

    def get_progress(self, trace: Trace) -> dict[str, int]:
        return {"points_done": trace.points_done, "points_total": trace.points_total,
                "records": trace.records_so_far}

    def _absolute(self, path: str) -> str:
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request is not None else path

    def get_url(self, trace: Trace) -> str:
        return self._absolute(reverse(f"api:{trace.kind}-detail", kwargs={"pk": trace.pk}))

    def get_links(self, trace: Trace) -> dict[str, str]:
        links = {key: self._absolute(reverse(f"api:{trace.kind}-{key}", kwargs={"pk": trace.pk}))
                 for key in ("records", "graph", "cancel", "rerun")}
        for fmt in ("csv", "jsonl"):
            path = reverse(f"api:{trace.kind}-download", kwargs={"pk": trace.pk, "fmt": fmt})
            links[f"download_{fmt}"] = self._absolute(path)
        return links


class ColumnSourceSerializer(serializers.Serializer[Any]):
    """A source column of a traced output's column, and how it made it."""

    dataset = serializers.CharField(help_text="The source dataset's path (or table name).")
    dataset_id = serializers.IntegerField(allow_null=True, help_text="Its catalog id; null when not in the catalog.")
    column = serializers.CharField()
    type = serializers.ChoiceField(choices=TRANSFORMATION_TYPES)
    kind = serializers.CharField(help_text="IDENTITY, TRANSFORMATION, AGGREGATION, CONDITIONAL; for the rows: "
                                 "FILTER, JOIN, GROUP_BY, SORT, WINDOW.")


class TracedColumnSerializer(serializers.Serializer[Any]):
    column = serializers.CharField(help_text="A column of the traced output.")
    sources = ColumnSourceSerializer(many=True)


class TracedColumnsSerializer(serializers.Serializer[Any]):
    """Where the columns of a backward trace's output rows come from (docs/column-lineage.md)."""

    columns = TracedColumnSerializer(many=True)
    rows_decided_by = ColumnSourceSerializer(many=True, help_text="Source columns that decided which rows there are.")


class TraceDetailSerializer(TraceSerializer):
    """A trace with its answer's summary: the capture points crossed, the first records, timings; and,
    for a backward trace of a DataFrame output, the source columns of its columns."""

    summary = serializers.JSONField(read_only=True)
    columns = serializers.SerializerMethodField()

    class Meta(TraceSerializer.Meta):
        fields = [*TraceSerializer.Meta.fields, "summary", "columns"]
        read_only_fields = fields

    @extend_schema_field(TracedColumnsSerializer(allow_null=True))
    def get_columns(self, trace: Trace) -> dict[str, Any] | None:
        """Null unless the trace goes backward from an output whose column lineage is known."""
        return traced_columns(trace)


class TraceRecordSerializer(serializers.Serializer[Any]):
    """One record of a trace's result."""

    capture_id = serializers.CharField()
    record_id = serializers.IntegerField()
    partition = serializers.IntegerField()
    position = serializers.IntegerField()
    value = serializers.JSONField(allow_null=True, help_text="The record (JSON); null where values are not kept.")
    file = serializers.CharField(allow_null=True)
    offset = serializers.IntegerField(allow_null=True, help_text="Byte offset (text) or row (Parquet) in file.")


class WhatIfQuestionSerializer(QuestionSerializer):
    """What POST /whatifs/ asks: which records to delete, and which output to look at."""

    capture_point = serializers.CharField(
        required=False, allow_blank=True, allow_null=True,
        help_text="Capture point whose records are deleted (an input, for a replay with new values); leave it "
        "out when deleting an earlier trace's result.",
    )
    selection = serializers.JSONField(help_text="The records deleted. " + SELECTION_HELP)
    target = serializers.CharField(
        required=False, allow_blank=True, default="end",
        help_text="end (the output of the last action computed from the deleted records) or an output's "
        "capture_id.",
    )


class WhatIfDetailSerializer(TraceDetailSerializer):
    """A what-if with its answer's summary: counts per capture point and fate, the output's classes,
    the first changed records (old and new), whether the job was replayed (and why not), timings."""

    columns = None  # type: ignore[assignment]  # a what-if goes forward: no traced columns (DRF drops the field)

    class Meta(TraceSerializer.Meta):
        fields = [*TraceSerializer.Meta.fields, "summary"]
        read_only_fields = fields


class WhatIfRecordSerializer(serializers.Serializer[Any]):
    """One record of a what-if's result."""

    capture_id = serializers.CharField()
    record_id = serializers.IntegerField(allow_null=True, help_text="Null for a record that only appears.")
    partition = serializers.IntegerField(allow_null=True)
    position = serializers.IntegerField(allow_null=True)
    fate = serializers.ChoiceField(choices=["deleted", "changed", "unchanged", "appeared"])
    value = serializers.JSONField(allow_null=True, help_text="The record (its old value when changed).")
    new_value = serializers.JSONField(allow_null=True, help_text="A changed record's new value; an appeared one's.")


class DiffQuestionSerializer(serializers.Serializer[Any]):
    """What POST /diffs/ asks: a run, the run it is compared with, which output, which key."""

    application = serializers.CharField(help_text="The newer run's app_id.")
    compared_with = serializers.CharField(
        required=False, allow_blank=True, allow_null=True,
        help_text="The older run's app_id; left out: the previous run of the same job (same application name and "
        "capture points) in the team.")
    capture_point = serializers.CharField(required=False, allow_blank=True, allow_null=True,
                                          help_text="The output compared (capture_id); default the last action's.")
    key = serializers.JSONField(required=False, allow_null=True, default=None,
                                help_text="One output's key (JSON; a list for several key columns) to explain: "
                                "the input records in its lineage in one run only, and the additive check.")
    key_fields = serializers.ListField(child=serializers.CharField(), required=False, allow_null=True, default=None,
                                       help_text="DataFrame columns outputs are matched by (default: the "
                                       "aggregate's group columns; an RDD pair's key; else the whole record).")
    name = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)
    note = serializers.CharField(required=False, allow_blank=True, default="")


class DiffSerializer(TraceSerializer):
    """A diff in a list: its two runs, status and counts per fate."""

    compared_with = serializers.CharField(source="compared_with.app_id", read_only=True, allow_null=True)

    class Meta(TraceSerializer.Meta):
        fields = [*TraceSerializer.Meta.fields, "compared_with"]
        read_only_fields = fields


class DiffDetailSerializer(DiffSerializer):
    """A diff with its summary: counts per fate, every output's fate with its old and new records (up to
    500), and the explained output's input records added and removed with the additive check."""

    summary = serializers.JSONField(read_only=True)

    class Meta(DiffSerializer.Meta):
        fields = [*DiffSerializer.Meta.fields, "summary"]
        read_only_fields = fields
