"""Endpoints of diffs of two runs of one job: ask which outputs were added, removed, changed or
kept (and why one of them moved), follow it, page through and download its rows, and keep it in the
team's history. Who may do what is as for traces."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from lineage_server.accounts.models import Role
from lineage_server.accounts.selectors import person
from lineage_server.api import filters
from lineage_server.api.serializers import tracing as s
from lineage_server.api.views.tracing import TraceViewSet, page_params
from lineage_server.catalog.selectors import visible_applications
from lineage_server.tracing.models import Trace, TraceKind
from lineage_server.tracing.selectors import ResultFile, diff_rows, diff_rows_page
from lineage_server.tracing.services import TraceQuestionError, ask_diff
from lineage_server.tracing.services.diff_answer import CSV_COLUMNS


@extend_schema_view(
    list=extend_schema(description="The team's diffs, pinned first, newest first."),
    partial_update=extend_schema(description="Name, annotate or pin a diff (its owner or a team admin)."),
    destroy=extend_schema(responses={204: None}, description="Delete a diff and its result file (audited)."),
    rerun=extend_schema(request=None, responses={202: s.DiffDetailSerializer},
                        description="Ask the diff again, computed afresh (analyst role)."),
)
class DiffViewSet(TraceViewSet):
    """Diffs of two runs of one job, run by the worker and kept as the team's history."""

    filterset_class = filters.WhatIfFilter
    kind = TraceKind.DIFF
    question_serializer = s.DiffQuestionSerializer
    detail_serializer = s.DiffDetailSerializer
    csv_columns = CSV_COLUMNS

    def get_serializer_class(self) -> Any:
        if self.action == "list":
            return s.DiffSerializer
        return super().get_serializer_class()

    def _respond(self, trace: Trace) -> Response:
        response = super()._respond(trace)
        response.data = s.DiffDetailSerializer(trace, context=self.get_serializer_context()).data
        return response

    @extend_schema(request=s.DiffQuestionSerializer, responses={202: s.DiffDetailSerializer},
                   description="Ask a diff of two runs of one job at an output: every output key's fate (added, "
                   "removed, changed with old and new values, unchanged) and, given a key, the input records in its "
                   "lineage in one run only (matched by input point and content) with the additive check for sums "
                   "and counts. 202 with the queued diff (follow its url). Analyst role; a bad field is a 400 "
                   "naming it.")
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().create(request, *args, **kwargs)

    def _ask(self, app: Any, data: dict[str, Any]) -> Trace:
        other = None
        if data.get("compared_with"):
            other = visible_applications(self.request.user).filter(app_id=data["compared_with"]).first()
            if other is None:
                raise TraceQuestionError("compared_with", f"no application {data['compared_with']!r} in your teams")
        return ask_diff(app, by=person(self.request.user), compared_with=other,
                        capture_point=data.get("capture_point") or None, key=data.get("key"),
                        key_fields=data.get("key_fields"), name=data["name"], note=data["note"],
                        runs=visible_applications(self.request.user))

    @action(detail=True, methods=["post"], filterset_class=None)
    def rerun(self, request: Request, pk: str) -> Response:  # type: ignore[override]
        """Ask the diff again, computed afresh."""
        diff = self.get_object()
        self._require_role(diff, Role.ANALYST)
        try:
            new = ask_diff(diff.application, by=person(request.user), compared_with=diff.compared_with,
                           capture_point=diff.target, key=diff.selection.get("key"),
                           key_fields=diff.selection.get("key_fields"), name=diff.name, note=diff.note,
                           rerun_of=diff)
        except TraceQuestionError as exc:
            raise ValidationError({exc.field: [str(exc)]}) from None
        return self._respond(new)

    @extend_schema(parameters=[OpenApiParameter("page", int), OpenApiParameter("page_size", int)],
                   responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["get"], filterset_class=None, pagination_class=None)
    def records(self, request: Request, pk: str) -> Response:  # type: ignore[override]
        """The diff's rows page by page: each output key with its fate and values, then the explained
        output's input records added and removed."""
        diff = self.get_object()
        result = self._result(diff)
        page, size = page_params(request)
        rows = diff_rows_page(result, (page - 1) * size, size)
        return Response({"count": diff.result_count, "page": page, "results": rows})

    def _all_rows(self, trace: Trace, result: ResultFile) -> Iterator[dict[str, Any]]:
        return diff_rows(result)
