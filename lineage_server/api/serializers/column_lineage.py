"""Column lineage as it is sent and answered: OpenLineage's ``columnLineage`` facet (without its
``_producer``/``_schemaURL``) on an agent's written ``dataset_io`` event, and the column graph the
API answers (``catalog.selectors.columns``)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from lineage_server.catalog.selectors.columns import MAX_DEPTH

MAX_COLUMNS = 10_000  # output columns of one written dataset, and input columns of one of them

TRANSFORMATION_TYPES = ["DIRECT", "INDIRECT"]


class TransformationSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=TRANSFORMATION_TYPES)
    subtype = serializers.CharField(max_length=64, required=False)
    description = serializers.CharField(max_length=4096, required=False, allow_blank=True)
    masking = serializers.BooleanField(required=False)


class InputFieldSerializer(serializers.Serializer):
    namespace = serializers.CharField(max_length=1024, allow_blank=True, trim_whitespace=False)
    name = serializers.CharField(max_length=2048, trim_whitespace=False)
    field = serializers.CharField(max_length=1024, trim_whitespace=False)
    transformations = serializers.ListField(child=TransformationSerializer(), max_length=20, required=False)


class OutputFieldSerializer(serializers.Serializer):
    inputFields = serializers.ListField(child=InputFieldSerializer(), max_length=MAX_COLUMNS)


class ColumnLineageSerializer(serializers.Serializer):
    """``{"fields": {column: {"inputFields": [...]}}, "dataset": [...]}`` (``fields`` is declared in
    ``get_fields``: a Serializer attribute of that name is taken)."""

    def get_fields(self) -> dict[str, serializers.Field]:
        return {"fields": serializers.DictField(child=OutputFieldSerializer()),
                "dataset": serializers.ListField(child=InputFieldSerializer(), max_length=MAX_COLUMNS,
                                                 required=False)}

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if len(attrs["fields"]) > MAX_COLUMNS:
            raise serializers.ValidationError({"fields": [f"At most {MAX_COLUMNS} columns."]})
        return attrs


class ColumnGraphParamsSerializer(serializers.Serializer):
    """Where the column graph starts (one column, else all of them) and how far it reaches, in
    column-to-column edges (one job each)."""

    column = serializers.CharField(max_length=1024, required=False, trim_whitespace=False,
                                   help_text="Start from this column of the dataset only.")
    upstream = serializers.IntegerField(min_value=0, max_value=MAX_DEPTH, default=2)
    downstream = serializers.IntegerField(min_value=0, max_value=MAX_DEPTH, default=2)


class ColumnImpactParamsSerializer(serializers.Serializer):
    """The column whose impact (everything downstream of it) is listed, and how deep."""

    column = serializers.CharField(max_length=1024, trim_whitespace=False)
    depth = serializers.IntegerField(min_value=1, max_value=MAX_DEPTH, default=MAX_DEPTH)


class ColumnNodeSerializer(serializers.Serializer):
    def get_fields(self) -> dict[str, serializers.Field]:
        return {
            "id": serializers.CharField(help_text="dataset:<id> or column:<dataset id>:<column>"),
            "kind": serializers.ChoiceField(choices=["dataset", "column"]),
            "label": serializers.CharField(),
            "parent": serializers.CharField(allow_null=True, help_text="a column's dataset node"),
            "depth": serializers.IntegerField(allow_null=True,
                                              help_text="a column's edges from the centre; negative upstream"),
            "data": serializers.DictField(),
        }


class ColumnEdgeSerializer(serializers.Serializer):
    def get_fields(self) -> dict[str, serializers.Field]:
        return {
            "id": serializers.CharField(),
            "source": serializers.CharField(help_text="an input column"),
            "target": serializers.CharField(
                help_text="a written column, or a written dataset (INDIRECT row-deciding inputs)"),
            "type": serializers.ChoiceField(choices=TRANSFORMATION_TYPES),
            "kind": serializers.CharField(help_text="IDENTITY, TRANSFORMATION, AGGREGATION, CONDITIONAL, FILTER, "
                                                    "JOIN, GROUP_BY, SORT, WINDOW..."),
            "app_ids": serializers.ListField(child=serializers.CharField(),
                                             help_text="the applications that wrote it"),
        }


class ColumnGraphSerializer(serializers.Serializer):
    center = serializers.CharField()
    truncated = serializers.BooleanField(help_text="the walk stopped at its column limit")
    nodes = ColumnNodeSerializer(many=True)
    edges = ColumnEdgeSerializer(many=True)


class ColumnImpactRowSerializer(serializers.Serializer):
    depth = serializers.IntegerField(help_text="jobs between the column and this one")
    dataset = serializers.CharField()
    column = serializers.CharField()
    via = serializers.CharField(help_text="the kinds of the edges into it, ';'-separated")
    applications = serializers.CharField(help_text="the applications that wrote it from upstream, ';'-separated")
