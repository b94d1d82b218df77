"""Validation of the agent ingest protocol (docs/ingest-events.md)."""

from __future__ import annotations

import functools
from typing import Any

from django.conf import settings
from rest_framework import serializers

from lineage_server.api.serializers.column_lineage import ColumnLineageSerializer
from lineage_server.catalog.identities import APP_ID_PATTERN
from lineage_server.catalog.metrics import METRIC_NAMES
from lineage_server.catalog.models import CaptureKind, IODirection

STATUS_CHOICES = ["succeeded", "failed"]
_BIG = 2**62
MAX_SPARK_ID = 2**31 - 1
MAX_TIME_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z: later times have no datetime
MAX_MISSING_TABLES = 10_000  # entries of a capture point's `missing` list
MAX_MISSING_REASON = 1000  # characters of one entry's reason
MAX_NOT_CAPTURED = 2000  # characters of a not-captured output's reason


def _int(**kwargs: Any) -> serializers.IntegerField:
    return serializers.IntegerField(min_value=kwargs.pop("min_value", 0), max_value=kwargs.pop("max_value", _BIG),
                                    **kwargs)


def _id(**kwargs: Any) -> serializers.IntegerField:
    """A Spark id or count held in a Java int (job, stage, RDD ids, attempts, tasks, partitions)."""
    return _int(max_value=MAX_SPARK_ID, **kwargs)


def _text(max_length: int = 4096, **kwargs: Any) -> serializers.CharField:
    return serializers.CharField(max_length=max_length, allow_blank=True, trim_whitespace=False, **kwargs)


class MetricsSerializer(serializers.Serializer):
    """Task metrics summed over a stage's tasks; every field optional."""

    locals().update({name: _int(required=False) for name in METRIC_NAMES})


class OperatorSerializer(serializers.Serializer):
    rdd_id = _id()
    name = _text(1024)
    parent_ids = serializers.ListField(child=_id(), max_length=10_000, default=list)
    scope_id = _text(64, required=False, default="")
    scope_name = _text(256, required=False, default="")
    call_site = _text(required=False, default="")
    num_partitions = _id(required=False, default=0)
    cached = serializers.BooleanField(required=False, default=False)


class PythonOperatorSerializer(serializers.Serializer):
    name = _text(256)
    call_site = _text(required=False, default="")


class ApplicationStartSerializer(serializers.Serializer):
    name = _text(512)
    user = _text(256, required=False, default="")
    spark_version = _text(64, required=False, default="")
    master = _text(512, required=False, default="")
    attempt_id = _text(64, required=False, default="", allow_null=True)
    spark_conf = serializers.DictField(child=_text(), required=False, default=dict)


class ApplicationEndSerializer(serializers.Serializer):
    pass


class JobStartSerializer(serializers.Serializer):
    job_id = _id()
    stage_ids = serializers.ListField(child=_id(), max_length=100_000, default=list)
    description = _text(required=False, default="")
    call_site = _text(required=False, default="")
    sql_execution_id = _int(required=False, allow_null=True, default=None)
    job_group = _text(256, required=False, default="", allow_null=True)


class JobEndSerializer(serializers.Serializer):
    job_id = _id()
    status = serializers.ChoiceField(choices=STATUS_CHOICES)
    error = _text(65536, required=False, default="", allow_null=True)


class StageSubmittedSerializer(serializers.Serializer):
    stage_id = _id()
    attempt = _id(required=False, default=0)
    name = _text(512, required=False, default="")
    num_tasks = _id(required=False, default=0)
    parent_stage_ids = serializers.ListField(child=_id(), max_length=100_000, default=list)
    job_id = _id(required=False, allow_null=True, default=None)
    call_site = _text(65536, required=False, default="")
    operators = OperatorSerializer(many=True, required=False, default=list)


class StageCompletedSerializer(StageSubmittedSerializer):
    status = serializers.ChoiceField(choices=STATUS_CHOICES)
    failure_reason = _text(65536, required=False, default="", allow_null=True)
    metrics = MetricsSerializer(required=False, default=dict)


class DatasetIOSerializer(serializers.Serializer):
    path = serializers.CharField(max_length=2048)
    direction = serializers.ChoiceField(choices=IODirection.choices)
    format = _text(64, required=False, default="")
    size_bytes = _int(required=False, allow_null=True, default=None)
    job_id = _id(required=False, allow_null=True, default=None)
    sql_execution_id = _int(required=False, allow_null=True, default=None)
    rdd_id = _id(required=False, allow_null=True, default=None)
    column_lineage = ColumnLineageSerializer(required=False, default=None, allow_null=True)


class PythonOperatorsSerializer(serializers.Serializer):
    rdd_id = _id()
    operators: serializers.ListSerializer[Any] = serializers.ListSerializer(
        child=PythonOperatorSerializer(), max_length=10_000
    )


class MissingTableSerializer(serializers.Serializer):
    """One per-partition table of a capture point that the agent could not write."""

    partition = _id()
    reason = _text(MAX_MISSING_REASON)


def _distinct_partitions(missing: list[dict[str, Any]]) -> None:
    seen: set[int] = set()
    for entry in missing:
        if entry["partition"] in seen:
            raise serializers.ValidationError(f"Partition {entry['partition']} is listed more than once.")
        seen.add(entry["partition"])


class CapturePointSerializer(serializers.Serializer):
    capture_id = serializers.CharField(max_length=128)
    kind = serializers.ChoiceField(choices=CaptureKind.choices)
    stage_id = _id(required=False, allow_null=True, default=None)
    rdd_id = _id(required=False, allow_null=True, default=None)
    location = serializers.CharField(max_length=4096)
    rows = _int(required=False, default=0)
    bytes = _int(required=False, default=0)
    parents = serializers.ListField(child=serializers.CharField(max_length=128), max_length=10_000, default=list)
    files = serializers.ListField(child=serializers.CharField(max_length=4096), max_length=1000, default=list)
    # Absent or empty: every table was written. A later event of the point replaces the list.
    missing: serializers.ListSerializer[Any] = serializers.ListSerializer(
        child=MissingTableSerializer(),
        max_length=MAX_MISSING_TABLES,
        required=False,
        default=list,
        validators=[_distinct_partitions],
    )
    # Non-empty: the action ran plain and its output has no record-level lineage; this is why.
    not_captured = _text(MAX_NOT_CAPTURED, required=False, default="")
    # An output's columns' sources (OpenLineage's columnLineage facet): a traced row's columns name them.
    column_lineage = ColumnLineageSerializer(required=False, default=None, allow_null=True)


EVENT_TYPES: dict[str, type[serializers.Serializer]] = {
    "application_start": ApplicationStartSerializer,
    "application_end": ApplicationEndSerializer,
    "job_start": JobStartSerializer,
    "job_end": JobEndSerializer,
    "stage_submitted": StageSubmittedSerializer,
    "stage_completed": StageCompletedSerializer,
    "dataset_io": DatasetIOSerializer,
    "python_operators": PythonOperatorsSerializer,
    "capture_point": CapturePointSerializer,
}


class EventSerializer(serializers.Serializer):
    """One event: the common fields, then the fields of its type."""

    event_id = serializers.CharField(max_length=128)
    type = serializers.ChoiceField(choices=sorted(EVENT_TYPES))
    app_id = serializers.RegexField(rf"^{APP_ID_PATTERN}$", max_length=128)
    time = _int(max_value=MAX_TIME_MS)

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, dict):
            raise serializers.ValidationError("Each event must be a JSON object.")
        common = super().to_internal_value(data)
        return {**common, "body": _body_serializer(common["type"]).run_validation(data)}


@functools.cache
def _body_serializer(event_type: str) -> serializers.Serializer:
    """One serializer per event type for the process, reused for every event as a ListSerializer reuses
    its child: one made per event (or per request) deep-copies its fields, most of the cost of validating.
    Validating keeps no state in the serializer, so threads share it."""
    return EVENT_TYPES[event_type]()


class IngestBatchSerializer(serializers.Serializer):
    """A batch of events as the agent posts it."""

    events = EventSerializer(many=True, allow_empty=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Built per request so the limit follows settings (and is checked before any event is).
        self.fields["events"] = serializers.ListSerializer(
            child=EventSerializer(), allow_empty=False, max_length=settings.LINEAGE["INGEST_MAX_EVENTS"]
        )


class IngestResultSerializer(serializers.Serializer):
    accepted = serializers.IntegerField()
    duplicates = serializers.IntegerField()
