"""The column lineage answers of datasets and applications (their viewsets' ``columns`` actions)."""

from __future__ import annotations

from django.db.models import QuerySet
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from lineage_server.api.serializers import column_lineage as s
from lineage_server.catalog.identities import DatasetKey
from lineage_server.catalog.models import Application, Dataset, DatasetIO
from lineage_server.catalog.selectors.columns import column_graph, dataset_columns, impact_rows
from lineage_server.catalog.selectors.pipeline import app_node_id, as_answer


def _known_column(apps: QuerySet[Application], dataset: Dataset, column: str) -> str:
    """``column`` if the lineage knows it in ``dataset``, else a 400 naming the parameter."""
    known = dataset_columns(apps, dataset)
    if column not in known:
        shown = ", ".join(known[:20]) or "none"
        raise serializers.ValidationError({"column": [f"No column {column!r} in {dataset.path}'s column lineage "
                                                      f"(known: {shown})."]})
    return column


def dataset_columns_answer(request: Request, apps: QuerySet[Application], dataset: Dataset) -> Response:
    params = s.ColumnGraphParamsSerializer(data=request.query_params)
    params.is_valid(raise_exception=True)
    column = params.validated_data.get("column")
    starts = {dataset.pk: {_known_column(apps, dataset, column)} if column is not None else None}
    center = f"column:{dataset.pk}:{column}" if column is not None else DatasetKey(dataset.pk).node_id()
    graph = column_graph(apps, starts, center, upstream=params.validated_data["upstream"],
                         downstream=params.validated_data["downstream"])
    return Response(as_answer(graph))


def dataset_impact_answer(request: Request, apps: QuerySet[Application], dataset: Dataset) -> Response:
    params = s.ColumnImpactParamsSerializer(data=request.query_params)
    params.is_valid(raise_exception=True)
    column = _known_column(apps, dataset, params.validated_data["column"])
    graph = column_graph(apps, {dataset.pk: {column}}, f"column:{dataset.pk}:{column}", upstream=0,
                         downstream=params.validated_data["depth"])
    rows = impact_rows(graph)
    response = Response(s.ColumnImpactRowSerializer(rows, many=True).data)
    if request.accepted_renderer.format == "csv":
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in column)[:64]
        response["Content-Disposition"] = f'attachment; filename="impact-{dataset.pk}-{safe}.csv"'
    return response


def application_columns_answer(request: Request, apps: QuerySet[Application], app: Application) -> Response:
    params = s.ColumnGraphParamsSerializer(data=request.query_params)
    params.is_valid(raise_exception=True)
    if params.validated_data.get("column") is not None:
        raise serializers.ValidationError({"column": ["Name a column on a dataset's columns/, not an application's."]})
    pks = set(DatasetIO.objects.filter(application=app).values_list("dataset_id", flat=True))
    graph = column_graph(apps, dict.fromkeys(pks), app_node_id(app.app_id),
                         upstream=params.validated_data["upstream"], downstream=params.validated_data["downstream"])
    return Response(as_answer(graph))
