"""Endpoints of provenance graphs: make one, post triples to it (JSON lines or Parquet, any size, in
the request body) or a captured run's lineage, follow its index builds, and ask the lineage of an item.

Viewers read and query their teams' graphs; analysts make graphs, post triples and ask builds;
team admins delete graphs. Another team's graphs are not there at all (404).
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import (
    APIException,
    NotFound,
    PermissionDenied,
    UnsupportedMediaType,
    ValidationError,
)
from rest_framework.request import Request
from rest_framework.response import Response

from lineage_server.accounts.models import Role
from lineage_server.accounts.selectors import person, role_refusal, teams_for
from lineage_server.api.serializers import provenance as s
from lineage_server.catalog.models import CapturePoint
from lineage_server.catalog.selectors import visible_applications
from lineage_server.catalog.selectors.samples import open_run
from lineage_server.provenance.models import IndexBuild, ProvenanceGraph, TripleBatch
from lineage_server.provenance.selectors import current_index, graph_lineage, latest_build, visible_graphs
from lineage_server.provenance.services import (
    GraphError,
    TripleError,
    UploadTooLarge,
    add_application_triples,
    add_triples,
    ask_index_build,
    create_graph,
    delete_graph,
    update_graph,
)

# Content types of triple uploads -> the format they carry.
UPLOAD_TYPES = {
    "application/x-ndjson": "jsonl", "application/jsonl": "jsonl", "application/jsonlines": "jsonl",
    "application/json-lines": "jsonl", "application/vnd.apache.parquet": "parquet", "application/x-parquet": "parquet",
}
TRIPLES_HELP = (
    "Post triples in the request body: JSON lines (Content-Type application/x-ndjson), one object a line, "
    '{"src": "...", "dst": "...", "op": "...", "src_dataset": "...", "dst_dataset": "..."} (src and dst required; '
    "integers are taken as their text; the datasets name the tables items belong to, the workflow's dataset graph), "
    "or a Parquet file with those columns (Content-Type application/vnd.apache.parquet). Any size up to "
    "LINEAGE_PROVENANCE_MAX_UPLOAD_MB. 201 with the batch and the index build queued for it (?build=false: none). "
    "Malformed triples: 400 naming the line or row and the field, nothing kept. Analyst role."
)


class TooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE


class NoIndex(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The graph has no index yet: post triples, or POST its builds/ endpoint, and wait for the build."


@extend_schema_view(
    list=extend_schema(description="Your teams' provenance graphs."),
    retrieve=extend_schema(responses=s.ProvenanceGraphDetailSerializer,
                           description="A provenance graph with the index queries read and its newest build."),
    partial_update=extend_schema(description="Rename or describe a graph, or change its threshold or splits (the "
                                 "next build then starts from scratch). Analyst role."),
    destroy=extend_schema(description="Delete a graph with its triples and indexes (team admins; audited)."),
)
class ProvenanceGraphViewSet(mixins.CreateModelMixin, mixins.UpdateModelMixin, mixins.DestroyModelMixin,
                             viewsets.ReadOnlyModelViewSet):
    """Provenance graphs (IBM CSProv): triples from any workflow system, indexed by a Spark job into
    connected sets, and lineage queries that read only the sets in an item's set lineage."""

    http_method_names = ["get", "post", "patch", "delete", "head", "options"]

    def get_queryset(self) -> QuerySet[ProvenanceGraph]:
        return visible_graphs(self.request.user)

    def get_serializer_class(self) -> type[serializers.BaseSerializer[Any]]:
        if self.action == "create":
            return s.ProvenanceGraphCreateSerializer
        if self.action == "partial_update":
            return s.ProvenanceGraphUpdateSerializer
        return s.ProvenanceGraphDetailSerializer if self.action == "retrieve" else s.ProvenanceGraphSerializer

    def _require(self, graph_or_team: Any, role: str) -> None:
        team = getattr(graph_or_team, "team", graph_or_team)
        refusal = role_refusal(self.request.user, team, role)
        if refusal is not None:
            raise PermissionDenied(refusal)

    def _detail(self, graph: ProvenanceGraph, code: int = status.HTTP_200_OK) -> Response:
        context = {**self.get_serializer_context(), "index": current_index(graph), "latest_build": latest_build(graph)}
        return Response(s.ProvenanceGraphDetailSerializer(graph, context=context).data, status=code)

    # ------------------------------------------------------------------ graphs
    @extend_schema(request=s.ProvenanceGraphCreateSerializer, responses={201: s.ProvenanceGraphDetailSerializer},
                   description="Make an empty provenance graph of one of your teams (analyst role).")
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        asked = self.get_serializer(data=request.data)
        asked.is_valid(raise_exception=True)
        data = asked.validated_data
        team = teams_for(request.user).filter(slug=data["team"]).first()
        if team is None:
            raise ValidationError({"team": [f"no team {data['team']!r} among yours"]})
        self._require(team, Role.ANALYST)
        try:
            graph = create_graph(team, by=person(request.user), name=data["name"],
                                 description=data["description"], set_threshold=data["set_threshold"],
                                 splits=data.get("splits", []))
        except GraphError as exc:
            raise ValidationError({exc.field: [str(exc)]}) from None
        return self._detail(graph, status.HTTP_201_CREATED)

    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return self._detail(self.get_object())

    @extend_schema(request=s.ProvenanceGraphUpdateSerializer, responses=s.ProvenanceGraphDetailSerializer)
    def partial_update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        graph = self.get_object()
        self._require(graph, Role.ANALYST)
        asked = self.get_serializer(graph, data=request.data, partial=True)
        asked.is_valid(raise_exception=True)
        try:
            update_graph(graph, by=person(request.user), **asked.validated_data)
        except GraphError as exc:
            raise ValidationError({exc.field: [str(exc)]}) from None
        return self._detail(graph)

    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        graph = self.get_object()
        self._require(graph, Role.ADMIN)
        delete_graph(graph, by=person(request.user))
        return Response(status=status.HTTP_204_NO_CONTENT)

    # ------------------------------------------------------------------ triples
    @extend_schema(
        methods=["POST"],
        request={"application/x-ndjson": OpenApiTypes.BINARY, "application/vnd.apache.parquet": OpenApiTypes.BINARY},
        parameters=[OpenApiParameter("build", bool, description="Queue an index build afterwards (default true).")],
        responses={201: s.TripleBatchSerializer},
        description=TRIPLES_HELP,
        examples=[OpenApiExample("JSON lines", media_type="application/x-ndjson", request_only=True,
                                 value='{"src": "3", "dst": "15", "op": "R1", "src_dataset": "Person1", '
                                       '"dst_dataset": "Person2"}\n')],
    )
    @extend_schema(methods=["GET"], responses=s.TripleBatchSerializer(many=True),
                   description="The batches of triples posted to the graph, oldest first.")
    @action(detail=True, methods=["get", "post"], url_path="triples", url_name="triples")
    def triples(self, request: Request, pk: str) -> Response:
        graph = self.get_object()
        if request.method == "GET":
            return self._paged(TripleBatch.objects.filter(graph=graph).order_by("id"), s.TripleBatchSerializer)
        self._require(graph, Role.ANALYST)
        kind = (request.content_type or "").split(";")[0].strip().lower()
        fmt = UPLOAD_TYPES.get(kind)
        if fmt is None:
            raise UnsupportedMediaType(kind or "(none)", detail=f"send triples as one of {', '.join(UPLOAD_TYPES)}, "
                                       f"not {kind or 'no Content-Type'}")
        body = request.stream
        if body is None:
            raise ValidationError({"body": ["the request has no triples (an empty body)"]})
        try:
            batch = add_triples(graph, body, fmt, by=person(request.user), build=_flag(request, "build"))
        except TripleError as exc:
            raise ValidationError({"triples": [str(exc)]}) from None
        except UploadTooLarge as exc:
            raise TooLarge(str(exc)) from None
        return Response(s.TripleBatchSerializer(batch).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=s.ApplicationExportSerializer, responses={201: s.TripleBatchSerializer},
                   description="Add the record-level lineage captured for one of the team's applications to the "
                   "graph, as triples: each record is the item '<capture id>#<record id>', each capture point its "
                   "dataset. Analyst role.")
    @action(detail=True, methods=["post"], url_path="applications", url_name="applications")
    def applications(self, request: Request, pk: str) -> Response:
        graph = self.get_object()
        self._require(graph, Role.ANALYST)
        asked = s.ApplicationExportSerializer(data=request.data)
        asked.is_valid(raise_exception=True)
        app_id = asked.validated_data["application"]
        app = visible_applications(request.user).filter(app_id=app_id, team=graph.team).first()
        if app is None:
            raise ValidationError({"application": [f"no application {app_id!r} in team {graph.team.slug}"]})
        point = CapturePoint.objects.filter(application=app).order_by("id").first()
        lineage = None if point is None else open_run(point.location, app.app_id)
        if lineage is None:
            raise ValidationError({"application": [f"{app_id} has no record-level lineage in this server's store"]})
        batch = add_application_triples(graph, app, lineage, by=person(request.user),
                                        build=asked.validated_data["build"])
        return Response(s.TripleBatchSerializer(batch).data, status=status.HTTP_201_CREATED)

    # ------------------------------------------------------------------ index builds
    @extend_schema(methods=["POST"], request=s.BuildRequestSerializer, responses={202: s.IndexBuildSerializer},
                   description="Queue an index build (the Spark job on LINEAGE_SPARK_MASTER): incremental over the "
                   "batches the newest index lacks, or from scratch with full. A build already queued is returned. "
                   "Analyst role.")
    @extend_schema(methods=["GET"], responses=s.IndexBuildSerializer(many=True),
                   description="The graph's index builds, newest first.")
    @action(detail=True, methods=["get", "post"], url_path="builds", url_name="builds")
    def builds(self, request: Request, pk: str) -> Response:
        graph = self.get_object()
        if request.method == "GET":
            return self._paged(IndexBuild.objects.filter(graph=graph).order_by("-id"), s.IndexBuildSerializer)
        self._require(graph, Role.ANALYST)
        asked = s.BuildRequestSerializer(data=request.data)
        asked.is_valid(raise_exception=True)
        build = ask_index_build(graph, by=person(request.user), full=asked.validated_data["full"])
        return Response(s.IndexBuildSerializer(build).data, status=status.HTTP_202_ACCEPTED)

    # ------------------------------------------------------------------ queries
    @extend_schema(
        parameters=[s.LineageQuerySerializer],
        responses={200: s.LineageAnswerSerializer,
                   404: OpenApiResponse(description="No triple of the graph names the item."),
                   409: OpenApiResponse(description="The graph has no index yet.")},
        description="The ancestors (or descendants) of an item with the triples between them, read from the "
        "newest index: only the triples of the item's connected set and of the sets in its set lineage "
        "(CSProv's Algorithm 2); sets_read and triples_read say what was read.",
    )
    @action(detail=True, methods=["get"], url_path="lineage", url_name="lineage")
    def lineage(self, request: Request, pk: str) -> Response:
        graph = self.get_object()
        asked = s.LineageQuerySerializer(data=request.query_params)
        asked.is_valid(raise_exception=True)
        item, direction, limit = (asked.validated_data[k] for k in ("item", "direction", "limit"))
        build = current_index(graph)
        if build is None:
            raise NoIndex()
        answer = graph_lineage(build, item, direction)
        if not answer.found:
            raise NotFound(f"no triple of graph {graph.name!r} names item {item!r} (as of index build {build.pk})")
        return Response(s.LineageAnswerSerializer({
            "item": item, "direction": direction, "component": answer.component,
            "connected_set": answer.connected_set, "items": answer.items[:limit], "item_count": len(answer.items),
            "edges": [{"src": a, "dst": b, "op": op} for a, b, op in answer.edges[:limit]],
            "edge_count": len(answer.edges), "truncated": len(answer.items) > limit or len(answer.edges) > limit,
            "sets_read": answer.sets_read, "triples_read": answer.triples_read, "index": build.pk,
            "timings": answer.timings,
        }).data)

    def _paged(self, rows: QuerySet[Any], serializer: type[serializers.BaseSerializer[Any]]) -> Response:
        page = self.paginate_queryset(rows)
        return self.get_paginated_response(serializer(page, many=True).data)


def _flag(request: Request, name: str) -> bool:
    value = request.query_params.get(name, "true").strip().lower()
    if value not in ("true", "false", "1", "0"):
        raise ValidationError({name: [f"{value!r} is not true or false"]})
    return value in ("true", "1")
