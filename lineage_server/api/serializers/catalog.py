"""Read serializers of the catalog."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from lineage_server.accounts.models import Team
from lineage_server.catalog.models import (
    Application,
    CapturePoint,
    Dataset,
    DatasetIO,
    Job,
    OpenLineageRun,
    Operator,
    Stage,
)
from lineage_server.catalog.selectors.pipeline import MAX_DEPTH
from lineage_server.catalog.selectors.samples import MAX_SAMPLE


class ApplicationSerializer(serializers.ModelSerializer):
    job_count = serializers.IntegerField(read_only=True)
    failed_job_count = serializers.IntegerField(read_only=True)
    stage_count = serializers.IntegerField(read_only=True)
    duration_ms = serializers.IntegerField(read_only=True, allow_null=True)
    lineage_complete = serializers.BooleanField(
        read_only=True,
        help_text="False when per-partition record-level lineage tables could not be written "
        "(see the capture points' missing_tables).",
    )
    missing_table_count = serializers.IntegerField(
        read_only=True, help_text="Per-partition lineage tables the agent could not write, over all capture points."
    )
    team: serializers.SlugRelatedField[Team] = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    url = serializers.SerializerMethodField()
    web_url = serializers.SerializerMethodField()

    class Meta:
        model = Application
        fields = [
            "app_id",
            "team",
            "attempt_id",
            "name",
            "user",
            "status",
            "started_at",
            "ended_at",
            "duration_ms",
            "job_count",
            "failed_job_count",
            "stage_count",
            "lineage_complete",
            "missing_table_count",
            "spark_version",
            "master",
            "url",
            "web_url",
        ]

    def get_url(self, app: Application) -> str:
        return self._absolute(reverse("api:application-detail", kwargs={"app_id": app.app_id}))

    def get_web_url(self, app: Application) -> str:
        return self._absolute(reverse("web:application", kwargs={"app_id": app.app_id}))

    def _absolute(self, path: str) -> str:
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request else path


class OpenLineageRunSerializer(serializers.Serializer):
    """The OpenLineage run an application is (docs/openlineage.md), when it is one."""

    job_namespace = serializers.CharField(source="job.namespace")
    job_name = serializers.CharField(source="job.name")
    job_facets = serializers.JSONField(source="job.facets")
    run_id = serializers.UUIDField()
    parent_run_id = serializers.UUIDField(allow_null=True)
    producer = serializers.CharField()
    run_facets = serializers.JSONField(source="facets")


class ApplicationDetailSerializer(ApplicationSerializer):
    openlineage = serializers.SerializerMethodField()

    class Meta(ApplicationSerializer.Meta):
        fields = [*ApplicationSerializer.Meta.fields, "spark_conf", "totals", "openlineage"]

    @extend_schema_field(OpenLineageRunSerializer(allow_null=True))
    def get_openlineage(self, app: Application) -> dict[str, Any] | None:
        run = OpenLineageRun.objects.select_related("job").filter(application=app).first()
        return OpenLineageRunSerializer(run).data if run else None


class JobSerializer(serializers.ModelSerializer):
    stage_ids = serializers.SerializerMethodField()

    class Meta:
        model = Job
        fields = [
            "job_id",
            "status",
            "description",
            "call_site",
            "job_group",
            "sql_execution_id",
            "error",
            "submitted_at",
            "completed_at",
            "stage_ids",
        ]

    @extend_schema_field(serializers.ListField(child=serializers.IntegerField()))
    def get_stage_ids(self, job: Job) -> list[int]:
        return sorted(stage.stage_id for stage in job.stages.all())


class OperatorSerializer(serializers.ModelSerializer):
    stage_id = serializers.IntegerField(source="stage.stage_id", read_only=True)

    class Meta:
        model = Operator
        fields = [
            "stage_id",
            "rdd_id",
            "name",
            "parent_ids",
            "scope_id",
            "scope_name",
            "call_site",
            "num_partitions",
            "cached",
        ]


class StageSerializer(serializers.ModelSerializer):
    job_ids = serializers.SerializerMethodField()

    class Meta:
        model = Stage
        fields = [
            "stage_id",
            "attempt",
            "name",
            "status",
            "num_tasks",
            "parent_stage_ids",
            "job_ids",
            "call_site",
            "failure_reason",
            "metrics",
            "submitted_at",
            "completed_at",
        ]

    @extend_schema_field(serializers.ListField(child=serializers.IntegerField()))
    def get_job_ids(self, stage: Stage) -> list[int]:
        return sorted(job.job_id for job in stage.jobs.all())


class StageDetailSerializer(StageSerializer):
    operators = OperatorSerializer(many=True, read_only=True)

    class Meta(StageSerializer.Meta):
        fields = [*StageSerializer.Meta.fields, "operators"]


class DatasetSerializer(serializers.ModelSerializer):
    class Meta:
        model = Dataset
        fields = ["id", "path", "format", "size_bytes", "namespace", "name", "schema_fields", "updated_at"]


class DatasetIOSerializer(serializers.ModelSerializer):
    app_id = serializers.CharField(source="application.app_id", read_only=True)
    dataset = DatasetSerializer(read_only=True)

    class Meta:
        model = DatasetIO
        fields = ["app_id", "dataset", "direction", "job_id", "sql_execution_id", "rdd_id", "size_bytes", "at",
                  "column_lineage"]


class MissingTableSerializer(serializers.Serializer):
    partition = serializers.IntegerField()
    reason = serializers.CharField()


class CapturePointSerializer(serializers.ModelSerializer):
    lineage_complete = serializers.SerializerMethodField(help_text="False when some tables could not be written.")
    missing_tables = MissingTableSerializer(
        many=True, read_only=True, help_text="Per-partition tables the agent could not write, and why."
    )
    files = serializers.ListField(
        child=serializers.CharField(), read_only=True,
        help_text="An input point's files (Hadoop paths, the first 1000); empty for other points.",
    )

    class Meta:
        model = CapturePoint
        fields = [
            "capture_id",
            "kind",
            "stage_id",
            "rdd_id",
            "location",
            "rows",
            "bytes",
            "parent_capture_ids",
            "files",
            "lineage_complete",
            "missing_table_count",
            "missing_tables",
            "not_captured",
            "column_lineage",
        ]
        read_only_fields = ["not_captured", "column_lineage"]
        extra_kwargs = {"not_captured": {"help_text": "Non-empty: the action ran plain and its output was not "
                                                      "captured; why (the operator that stopped it)."},
                        "column_lineage": {"help_text": "An output's columns' sources: OpenLineage's columnLineage "
                                                        "facet of the query its action ran; {} when not known."}}

    def get_lineage_complete(self, point: CapturePoint) -> bool:
        return point.missing_table_count == 0


class GraphNodeSerializer(serializers.Serializer):
    # Declared in get_fields: "label", "parent" and "data" are also attributes of every serializer field.
    def get_fields(self) -> dict[str, serializers.Field]:
        return {
            "id": serializers.CharField(),
            "kind": serializers.ChoiceField(choices=["application", "job", "stage", "operator", "capture", "dataset"]),
            "label": serializers.CharField(),
            "parent": serializers.CharField(allow_null=True),
            "data": serializers.DictField(),
        }


class GraphEdgeSerializer(serializers.Serializer):
    # Declared in get_fields: "source" is also an attribute of every serializer field.
    def get_fields(self) -> dict[str, serializers.Field]:
        return {
            "id": serializers.CharField(),
            "source": serializers.CharField(),
            "target": serializers.CharField(),
            "kind": serializers.ChoiceField(choices=["narrow", "shuffle", "read", "write", "stage", "capture"]),
        }


class ApplicationGraphSerializer(serializers.Serializer):
    application = ApplicationSerializer()
    nodes = GraphNodeSerializer(many=True)
    edges = GraphEdgeSerializer(many=True)

    def to_representation(self, instance: Any) -> dict[str, Any]:
        return {
            "application": ApplicationSerializer(instance.application, context=self.context).data,
            "nodes": instance.nodes,
            "edges": instance.edges,
        }


class PipelineParamsSerializer(serializers.Serializer):
    """How far the dataset graph across applications reaches from its centre, in edges."""

    upstream = serializers.IntegerField(min_value=0, max_value=MAX_DEPTH, default=2)
    downstream = serializers.IntegerField(min_value=0, max_value=MAX_DEPTH, default=2)


class SampleParamsSerializer(serializers.Serializer):
    """Which capture point to sample, and how many of its records."""

    capture_id = serializers.CharField(max_length=128, help_text="The capture point, as listed by capture-points/.")
    limit = serializers.IntegerField(min_value=1, max_value=MAX_SAMPLE, default=10)


class SampleRecordSerializer(serializers.Serializer):
    record_id = serializers.IntegerField(help_text="(partition << 32) | position, as in traces.")
    text = serializers.CharField(help_text="The record as kept: an input line, a Parquet row, or a value's repr.")


class SampleSerializer(serializers.Serializer):
    capture_id = serializers.CharField()
    kept = serializers.BooleanField(help_text="False when the point keeps only record ids; ``note`` says why.")
    records = SampleRecordSerializer(many=True)
    note = serializers.CharField(allow_blank=True)


class PipelineNodeSerializer(serializers.Serializer):
    def get_fields(self) -> dict[str, serializers.Field]:
        return {
            "id": serializers.CharField(help_text="dataset:<id> or app:<app_id>"),
            "kind": serializers.ChoiceField(choices=["dataset", "application"]),
            "label": serializers.CharField(),
            "depth": serializers.IntegerField(help_text="edges from the centre; negative upstream"),
            "data": serializers.DictField(),
        }


class PipelineGraphSerializer(serializers.Serializer):
    center = serializers.CharField()
    truncated = serializers.BooleanField(help_text="the walk stopped at its node limit")
    nodes = PipelineNodeSerializer(many=True)
    edges = GraphEdgeSerializer(many=True)
