"""Column lineage as it is sent and answered: OpenLineage's ``columnLineage`` facet (without its
``_producer``/``_schemaURL``) on an agent's written ``dataset_io`` event, and the column graph the
API answers (``catalog.selectors.columns``)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

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
