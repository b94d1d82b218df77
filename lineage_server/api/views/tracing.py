"""Endpoints of traces: ask, follow, page through and download answers, and keep the team's history.

Viewers read their teams' traces; analysts ask and re-run; a trace's owner or a team admin names,
annotates, pins, cancels and deletes it. Another team's traces are not there at all (404).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator
from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import APIException, PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from lineage_server.accounts.models import Role
from lineage_server.accounts.selectors import person, role_refusal
from lineage_server.api import filters
from lineage_server.api.serializers import tracing as s
from lineage_server.catalog.selectors import visible_applications
from lineage_server.tracing.models import Trace, TraceKind, TraceStatus
from lineage_server.tracing.selectors import (
    ResultFile,
    ResultGone,
    ResultNotReady,
    result_file,
    trace_history,
    trace_records,
    trace_records_page,
    visible_traces,
)
from lineage_server.tracing.services import (
    TraceQuestionError,
    TraceStateError,
    ask_trace,
    cancel_trace,
    delete_trace,
    rerun_trace,
    update_trace,
)

CSV_COLUMNS = ["capture_id", "record_id", "partition", "position", "file", "offset", "value"]
GONE = ("The result is no longer in the lineage store, or values it reads from the run's input files cannot be "
        "read now (an input changed since capture); detail says which.")


class Conflict(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The trace is not in a state that allows this."


class Gone(APIException):
    status_code = status.HTTP_410_GONE
    default_detail = "The trace's result is no longer in the lineage store."


@extend_schema_view(
    list=extend_schema(description="The team history: traces of your teams' applications, pinned first, newest first."),
    partial_update=extend_schema(description="Name, annotate or pin a trace (its owner or a team admin)."),
)
class TraceViewSet(mixins.CreateModelMixin, mixins.UpdateModelMixin, mixins.DestroyModelMixin,
                   viewsets.ReadOnlyModelViewSet):
    """Traces of record-level lineage, run by the worker and kept as the team's history."""

    filterset_class = filters.TraceFilter
    http_method_names = ["get", "post", "patch", "delete", "head", "options"]
    kind = TraceKind.TRACE
    question_serializer: type[serializers.BaseSerializer[Any]] = s.TraceQuestionSerializer
    detail_serializer: type[serializers.BaseSerializer[Any]] = s.TraceDetailSerializer
    csv_columns: list[str] = CSV_COLUMNS  # a download's columns as CSV

    def get_queryset(self) -> QuerySet[Trace]:
        return trace_history(self.request.user).filter(kind=self.kind).order_by("-pinned", "-created_at", "-id")

    def get_serializer_class(self) -> type[serializers.BaseSerializer[Any]]:
        if self.action == "create":
            return self.question_serializer
        if self.action == "partial_update":
            return s.TraceUpdateSerializer
        return self.detail_serializer if self.action == "retrieve" else s.TraceSerializer

    # ------------------------------------------------------------------ who may
    def _require_role(self, trace_or_team: Any, role: str) -> None:
        team = getattr(getattr(trace_or_team, "application", None), "team", trace_or_team)
        refusal = role_refusal(self.request.user, team, role)
        if refusal is not None:
            raise PermissionDenied(refusal)

    def _require_owner_or_admin(self, trace: Trace) -> None:
        if trace.created_by_id == self.request.user.pk:
            return
        refusal = role_refusal(self.request.user, trace.application.team, Role.ADMIN)
        if refusal is not None:
            raise PermissionDenied("Only the trace's owner or an admin of its team can do this.")

    def _seeds(self) -> QuerySet[Trace]:
        return visible_traces(self.request.user)

    def _respond(self, trace: Trace) -> Response:
        data = s.TraceDetailSerializer(trace, context=self.get_serializer_context()).data
        code = status.HTTP_202_ACCEPTED if trace.is_open else status.HTTP_200_OK
        return Response(data, status=code, headers={"Location": data["url"]})

    # ------------------------------------------------------------------ asking
    @extend_schema(
        request=s.TraceQuestionSerializer,
        responses={202: s.TraceDetailSerializer, 200: OpenApiResponse(s.TraceDetailSerializer,
                                                                      "The stored answer of the same question.")},
        description="Ask a trace. 202 with the queued trace (follow its url until it has finished), or 200 "
        "with a new trace holding the stored answer when the same question was answered on unchanged lineage "
        "(unless recompute). Needs the analyst role in the application's team.",
    )
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        question = self.get_serializer(data=request.data)
        question.is_valid(raise_exception=True)
        data = question.validated_data
        app = visible_applications(request.user).select_related("team").filter(app_id=data["application"]).first()
        if app is None:
            raise ValidationError({"application": [f"no application {data['application']!r} in your teams"]})
        self._require_role(app.team, Role.ANALYST)
        try:
            trace = self._ask(app, data)
        except TraceQuestionError as exc:
            raise ValidationError({exc.field: [str(exc)]}) from None
        return self._respond(trace)

    def _ask(self, app: Any, data: dict[str, Any]) -> Trace:
        return ask_trace(
            app, by=person(self.request.user), direction=data["direction"], selection=data["selection"],
            capture_point=data.get("capture_point") or None, target=data.get("target"), name=data["name"],
            note=data["note"], recompute=data["recompute"], seeds=self._seeds(),
        )

    @extend_schema(request=None, responses={202: s.TraceDetailSerializer})
    @action(detail=True, methods=["post"], filterset_class=None)
    def rerun(self, request: Request, pk: str) -> Response:
        """Ask the trace's question again, computed afresh; the new trace links to this one (analyst role)."""
        trace = self.get_object()
        self._require_role(trace, Role.ANALYST)
        try:
            new = rerun_trace(trace, by=person(request.user), seeds=self._seeds())
        except TraceQuestionError as exc:
            raise ValidationError({exc.field: [str(exc)]}) from None
        return self._respond(new)

    # ------------------------------------------------------------------ keeping
    def partial_update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        trace = self.get_object()
        self._require_owner_or_admin(trace)
        changes = s.TraceUpdateSerializer(trace, data=request.data, partial=True)
        changes.is_valid(raise_exception=True)
        update_trace(trace, by=person(request.user), **changes.validated_data)
        return Response(s.TraceSerializer(trace, context=self.get_serializer_context()).data)

    @extend_schema(responses={204: None},
                   description="Delete a trace and its result file (its owner or a team admin; audited).")
    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        trace = self.get_object()
        self._require_owner_or_admin(trace)
        delete_trace(trace, by=person(request.user))
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(request=None, responses={200: s.TraceSerializer, 409: OpenApiResponse(description="Finished.")})
    @action(detail=True, methods=["post"], filterset_class=None)
    def cancel(self, request: Request, pk: str) -> Response:
        """Cancel a queued or running trace (its owner or a team admin)."""
        trace = self.get_object()
        self._require_owner_or_admin(trace)
        try:
            trace = cancel_trace(trace, by=person(request.user))
        except TraceStateError as exc:
            raise Conflict(str(exc)) from None
        return Response(s.TraceSerializer(trace, context=self.get_serializer_context()).data)

    # ------------------------------------------------------------------ answers
    def _result(self, trace: Trace) -> ResultFile:
        try:
            return result_file(trace)
        except ResultNotReady as exc:
            raise Conflict(str(exc)) from None
        except ResultGone as exc:
            raise Gone(str(exc)) from None

    @extend_schema(
        parameters=[
            OpenApiParameter("page", int, description="Page number, from 1."),
            OpenApiParameter("page_size", int, description="Records per page (up to 500)."),
            OpenApiParameter("capture_id", str, description="Only the records at this capture point."),
        ],
        responses={200: s.TraceRecordSerializer(many=True), 410: OpenApiResponse(description=GONE)},
    )
    @action(detail=True, methods=["get"], filterset_class=None, pagination_class=None)
    def records(self, request: Request, pk: str) -> Response:
        """The result's records page by page: ids, and for inputs and outputs the records with file and offset
        (values at inputs read from the run's input files when their page is asked; the first page's are kept)."""
        trace = self.get_object()
        result = self._result(trace)
        try:
            return self._page(request, trace,
                              lambda start, size, local: trace_records_page(trace, result, start, size, local))
        except ResultGone as exc:
            raise Gone(str(exc)) from None

    def _page(self, request: Request, trace: Trace, read: Callable[[int, int, str | None], Any],
              **filters: str) -> Response:
        """One page of a result's records: ``read(start, size, local capture id)`` gives (total, rows);
        ``filters`` are the other query parameters the page links keep."""
        page, size = page_params(request)
        capture_id = request.query_params.get("capture_id") or None
        run_id = trace.summary.get("run_id")
        local = capture_id.removeprefix(f"{run_id}/") if capture_id and run_id else capture_id
        total, rows = read((page - 1) * size, size, local)
        base = request.build_absolute_uri(request.path)
        kept = {"page_size": str(size), **({"capture_id": capture_id} if capture_id else {}), **filters}
        query = "".join(f"&{k}={v}" for k, v in kept.items())
        return Response({
            "count": total,
            "next": f"{base}?page={page + 1}{query}" if page * size < total else None,
            "previous": f"{base}?page={page - 1}{query}" if page > 1 else None,
            "results": [server_record(r, run_id) for r in rows],
        })

    @extend_schema(
        parameters=[OpenApiParameter("fmt", str, OpenApiParameter.PATH, enum=["csv", "jsonl"])],
        responses={(200, "text/csv"): OpenApiTypes.STR, (200, "application/x-ndjson"): OpenApiTypes.STR,
                   410: OpenApiResponse(description=GONE)},
    )
    @action(detail=True, methods=["get"], filterset_class=None, pagination_class=None,
            url_path=r"download/(?P<fmt>csv|jsonl)", url_name="download")
    def download(self, request: Request, pk: str, fmt: str) -> StreamingHttpResponse:
        """The whole result as CSV or JSON lines, streamed (any size): a trace's records, a what-if's
        records each with its fate, a diff's output rows then its input rows."""
        trace = self.get_object()
        try:
            rows = self._all_rows(trace, self._result(trace))
        except ResultGone as exc:
            raise Gone(str(exc)) from None
        return self._stream(trace, rows, fmt, self.csv_columns)

    def _all_rows(self, trace: Trace, result: ResultFile) -> Iterator[dict[str, Any]]:
        """Every row of this kind's result file, in order (a download's)."""
        return trace_records(trace, result)

    def _stream(self, trace: Trace, rows: Iterator[dict[str, Any]], fmt: str,
                columns: list[str]) -> StreamingHttpResponse:
        """A result's rows streamed as CSV (``columns``) or JSON lines, with the server's capture ids."""
        run_id = trace.summary.get("run_id")
        records = (server_record(r, run_id) for r in rows)
        body = csv_lines(records, columns) if fmt == "csv" else (json.dumps(r) + "\n" for r in records)
        content_type = "text/csv" if fmt == "csv" else "application/x-ndjson"
        response = StreamingHttpResponse(body, content_type=f"{content_type}; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{trace.kind}-{trace.pk}.{fmt}"'
        return response

    @extend_schema(responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["get"], filterset_class=None, pagination_class=None)
    def graph(self, request: Request, pk: str) -> Response:
        """The trace's provenance subgraph: the capture points it crossed (tied to the application's stages
        and operators) with the records at each, and for small traces the records and the edges between them."""
        trace = self.get_object()
        if trace.status != TraceStatus.SUCCEEDED:
            raise Conflict(f"{trace.kind} {trace.pk} is {trace.status}: its graph exists once it has succeeded")
        return Response({trace.kind: trace.pk, "application": trace.application.app_id, **trace.graph})


def page_params(request: Request) -> tuple[int, int]:
    try:
        page = int(request.query_params.get("page", 1))
        size = int(request.query_params.get("page_size", settings.LINEAGE["PAGE_SIZE"]))
    except ValueError:
        raise ValidationError({"page": ["page and page_size are whole numbers"]}) from None
    if page < 1 or not 1 <= size <= 500:
        raise ValidationError({"page": ["page starts at 1; page_size is 1 to 500"]})
    return page, size


def server_record(record: dict[str, Any], run_id: str | None) -> dict[str, Any]:
    """A result row with the server's capture id (``<run>/<capture id>``; one named so already, or none, as it is)."""
    cid = record["capture_id"]
    return {**record, "capture_id": f"{run_id}/{cid}" if run_id and cid is not None and "/" not in cid else cid}


def csv_lines(records: Iterator[dict[str, Any]], columns: list[str]) -> Iterator[str]:
    """Records as CSV text, in chunks of about 64 KB (values that are not text as JSON)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(columns)
    for record in records:
        writer.writerow([_cell(record[c]) for c in columns])
        if buffer.tell() > 64 * 1024:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()


def _cell(value: Any) -> Any:
    if value is None or isinstance(value, str) or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        return value
    return json.dumps(value)
