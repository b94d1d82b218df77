"""Endpoints of the catalog; every UI page is drawn from these. Each shows only the caller's teams."""

from __future__ import annotations

from typing import Any

from django.db.models import Exists, OuterRef, QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from lineage_server.accounts.models import Team
from lineage_server.accounts.selectors import person
from lineage_server.api import filters
from lineage_server.api.permissions import TeamRole
from lineage_server.api.renderers import CSVRenderer
from lineage_server.api.serializers import catalog as s
from lineage_server.api.serializers import column_lineage as cl
from lineage_server.api.views import columns
from lineage_server.catalog.identities import APP_ID_PATTERN
from lineage_server.catalog.models import Application, CapturePoint, Dataset, DatasetIO, Job, Operator, Stage
from lineage_server.catalog.selectors import application_graph, applications_with_counts, visible_applications
from lineage_server.catalog.selectors.pipeline import as_answer, pipeline_graph
from lineage_server.catalog.selectors.samples import point_sample
from lineage_server.catalog.services import delete_application


class ApplicationViewSet(mixins.DestroyModelMixin, viewsets.ReadOnlyModelViewSet):
    """Spark application runs of your teams, newest first. Team admins may delete one."""

    lookup_field = "app_id"
    lookup_value_regex = APP_ID_PATTERN
    filterset_class = filters.ApplicationFilter
    permission_classes = [TeamRole]

    def get_queryset(self) -> QuerySet[Application]:
        return applications_with_counts(self.request.user).select_related("team")

    def team_of(self, app: Application) -> Team:
        return app.team

    @extend_schema(responses={204: None})
    def destroy(self, request: Request, app_id: str) -> Response:
        """Delete the application's lineage: its rows here and its files in the lineage store (admin role)."""
        delete_application(self.get_object(), by=person(request.user))
        return Response(status=status.HTTP_204_NO_CONTENT)

    def get_serializer_class(self) -> type[s.ApplicationSerializer]:
        return s.ApplicationDetailSerializer if self.action == "retrieve" else s.ApplicationSerializer

    @extend_schema(responses=s.ApplicationGraphSerializer)
    @action(detail=True, methods=["get"], filterset_class=None, pagination_class=None)
    def graph(self, request: Request, app_id: str) -> Response:
        """Stages (compound nodes), their operators and the datasets, with the edges between them."""
        app = self.get_object()
        return Response(s.ApplicationGraphSerializer(application_graph(app), context={"request": request}).data)

    @extend_schema(parameters=[s.PipelineParamsSerializer], responses=s.PipelineGraphSerializer)
    @action(detail=True, methods=["get"], filterset_class=None, pagination_class=None)
    def pipeline(self, request: Request, app_id: str) -> Response:
        """The datasets this application read and wrote, and the applications upstream and downstream
        of it through them (the dataset graph across applications), ``upstream``/``downstream`` edges deep."""
        up, down = _pipeline_params(request)
        graph = pipeline_graph(visible_applications(request.user), application=self.get_object(),
                               upstream=up, downstream=down)
        return Response(as_answer(graph))

    @extend_schema(parameters=[cl.ColumnGraphParamsSerializer], responses=cl.ColumnGraphSerializer)
    @action(detail=True, methods=["get"], filterset_class=None, pagination_class=None)
    def columns(self, request: Request, app_id: str) -> Response:
        """The column graph of the datasets this application read and wrote: where each of their
        columns comes from and goes to across applications, ``upstream``/``downstream`` jobs deep."""
        return columns.application_columns_answer(request, visible_applications(request.user), self.get_object())


class _ApplicationChildViewSet(viewsets.ReadOnlyModelViewSet):
    """Rows of one application, found by the ``app_id`` in the URL (404 if unknown)."""

    model: type[Any]

    def application(self) -> Application:
        if not hasattr(self, "_application"):
            self._application = get_object_or_404(visible_applications(self.request.user), app_id=self.kwargs["app_id"])
        return self._application

    def get_queryset(self) -> QuerySet[Any]:
        if getattr(self, "swagger_fake_view", False):  # schema generation has no URL kwargs
            return self.model.objects.none()
        return self.model.objects.filter(application=self.application())


class JobViewSet(_ApplicationChildViewSet):
    """Jobs of an application."""

    model = Job
    serializer_class = s.JobSerializer
    filterset_class = filters.JobFilter
    lookup_field = "job_id"

    def get_queryset(self) -> QuerySet[Job]:
        return super().get_queryset().prefetch_related("stages")


class StageViewSet(_ApplicationChildViewSet):
    """Stages of an application, with their summed task metrics."""

    model = Stage
    filterset_class = filters.StageFilter
    lookup_field = "stage_id"

    def get_queryset(self) -> QuerySet[Stage]:
        queryset = super().get_queryset().prefetch_related("jobs").distinct()
        if self.action == "retrieve":
            queryset = queryset.prefetch_related("operators__stage")
        return queryset

    def get_serializer_class(self) -> type[s.StageSerializer]:
        return s.StageDetailSerializer if self.action == "retrieve" else s.StageSerializer


class OperatorViewSet(_ApplicationChildViewSet):
    """Operators (RDDs) of an application, one row per stage they run in."""

    model = Operator
    serializer_class = s.OperatorSerializer
    filterset_class = filters.OperatorFilter

    def get_queryset(self) -> QuerySet[Operator]:
        return super().get_queryset().select_related("stage")


class ApplicationDatasetViewSet(_ApplicationChildViewSet):
    """Datasets an application read or wrote."""

    model = DatasetIO
    serializer_class = s.DatasetIOSerializer

    def get_queryset(self) -> QuerySet[DatasetIO]:
        return super().get_queryset().select_related("dataset", "application").order_by("id")


class CapturePointViewSet(_ApplicationChildViewSet):
    """Record-level capture points of an application (tables in the lineage store), with the tables not written."""

    model = CapturePoint
    serializer_class = s.CapturePointSerializer
    filterset_class = filters.CapturePointFilter
    lookup_field = "capture_id"
    lookup_value_regex = r"[^/]+(?:/[^/]+)?"  # the agent's ids are <run id>/<point>

    @extend_schema(parameters=[s.SampleParamsSerializer], responses=s.SampleSerializer)
    @action(detail=False, methods=["get"], filterset_class=None, pagination_class=None)
    def sample(self, request: Request, app_id: str) -> Response:
        """The first records of a capture point where their values were kept (input lines, Parquet
        rows, parallelized values, an action's results), as text; else ``kept`` false and why."""
        points = self.get_queryset().select_related("application")  # another team's application: 404 first
        params = s.SampleParamsSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        point = get_object_or_404(points,
                                  capture_id=params.validated_data["capture_id"])
        return Response(s.SampleSerializer(point_sample(point, params.validated_data["limit"])).data)


class DatasetViewSet(viewsets.ReadOnlyModelViewSet):
    """Every dataset an application of your teams read or wrote."""

    serializer_class = s.DatasetSerializer
    filterset_class = filters.DatasetFilter

    def get_queryset(self) -> QuerySet[Dataset]:
        mine = DatasetIO.objects.filter(dataset=OuterRef("pk"), application__in=visible_applications(self.request.user))
        return Dataset.objects.filter(Exists(mine))

    @extend_schema(responses=s.DatasetIOSerializer(many=True))
    @action(detail=True, methods=["get"], filterset_class=None)
    def applications(self, request: Request, pk: str) -> Response:
        """The applications that read or wrote this dataset (cross-application lineage)."""
        dataset = self.get_object()
        ios = (
            DatasetIO.objects.filter(dataset=dataset, application__in=visible_applications(request.user))
            .select_related("application", "dataset")
            .order_by("-id")
        )
        page = self.paginate_queryset(ios)
        return self.get_paginated_response(s.DatasetIOSerializer(page, many=True).data)

    @extend_schema(parameters=[s.PipelineParamsSerializer], responses=s.PipelineGraphSerializer)
    @action(detail=True, methods=["get"], filterset_class=None, pagination_class=None)
    def graph(self, request: Request, pk: str) -> Response:
        """The dataset graph across applications centred on this dataset: what wrote it and what
        that read (``upstream`` edges deep), what read it and what that wrote (``downstream``)."""
        up, down = _pipeline_params(request)
        graph = pipeline_graph(visible_applications(request.user), dataset=self.get_object(),
                               upstream=up, downstream=down)
        return Response(as_answer(graph))

    @extend_schema(parameters=[cl.ColumnGraphParamsSerializer], responses=cl.ColumnGraphSerializer)
    @action(detail=True, methods=["get"], filterset_class=None, pagination_class=None)
    def columns(self, request: Request, pk: str) -> Response:
        """Column lineage of this dataset (all its columns, or ``column`` only): the input columns each
        comes from and how, upstream, and the columns written from it downstream, across applications."""
        return columns.dataset_columns_answer(request, visible_applications(request.user), self.get_object())

    @extend_schema(parameters=[cl.ColumnImpactParamsSerializer], responses=cl.ColumnImpactRowSerializer(many=True))
    @action(detail=True, methods=["get"], filterset_class=None, pagination_class=None, url_path="column-impact",
            renderer_classes=[JSONRenderer, CSVRenderer])
    def column_impact(self, request: Request, pk: str) -> Response:
        """Everything downstream of one column (``?format=csv`` downloads it as CSV), nearest first."""
        return columns.dataset_impact_answer(request, visible_applications(request.user), self.get_object())


def _pipeline_params(request: Request) -> tuple[int, int]:
    """(upstream, downstream) of the query; a 400 naming the parameter when one is not 0-10."""
    params = s.PipelineParamsSerializer(data=request.query_params)
    params.is_valid(raise_exception=True)
    return params.validated_data["upstream"], params.validated_data["downstream"]
