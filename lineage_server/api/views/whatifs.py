"""Endpoints of what-ifs: ask what deleting records would do, follow it, page through its records
by fate, download them, and keep them in the team's history. Who may do what is as for traces."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.db.models import QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from lineage_server.accounts.selectors import person
from lineage_server.api import filters
from lineage_server.api.serializers import tracing as s
from lineage_server.api.views.tracing import TraceViewSet
from lineage_server.tracing.models import Trace, TraceKind
from lineage_server.tracing.selectors import FATES, ResultFile, trace_history, whatif_records, whatif_records_page
from lineage_server.tracing.services import ask_whatif

CSV_COLUMNS = ["capture_id", "record_id", "partition", "position", "fate", "value", "new_value"]


@extend_schema_view(
    list=extend_schema(description="The team's what-ifs, pinned first, newest first."),
    partial_update=extend_schema(description="Name, annotate or pin a what-if (its owner or a team admin)."),
    destroy=extend_schema(responses={204: None},
                          description="Delete a what-if and its result file (its owner or a team admin; audited)."),
    rerun=extend_schema(request=None, responses={202: s.WhatIfDetailSerializer},
                        description="Ask the what-if again, computed afresh (analyst role)."),
    graph=extend_schema(responses=OpenApiTypes.OBJECT,
                        description="The capture points the deletion reached, with their records per fate, and "
                        "the edges between them."),
)
class WhatIfViewSet(TraceViewSet):
    """What-ifs: the records that would be deleted, changed (old and new values), stay, or appear
    if some records had not been there; run by the worker and kept as the team's history."""

    filterset_class = filters.WhatIfFilter
    kind = TraceKind.WHATIF
    question_serializer = s.WhatIfQuestionSerializer
    detail_serializer = s.WhatIfDetailSerializer
    csv_columns = CSV_COLUMNS

    @extend_schema(
        request=s.WhatIfQuestionSerializer,
        responses={202: s.WhatIfDetailSerializer, 200: OpenApiResponse(s.WhatIfDetailSerializer,
                                                                       "The stored answer of the same what-if.")},
        description="Ask a what-if: which output records would be deleted, changed (old and new values), stay "
        "unchanged, or appear if the selected records had not been there. 202 with the queued what-if (follow "
        "its url), or 200 with the stored answer of the same what-if on unchanged lineage (unless recompute). "
        "New values come from replaying the job kept in the run's folder on the worker's Spark session; where "
        "that is not possible, summary.replay says why and the classes are lineage's. Analyst role.",
    )
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().create(request, *args, **kwargs)

    def _ask(self, app: Any, data: dict[str, Any]) -> Trace:
        return ask_whatif(
            app, by=person(self.request.user), selection=data["selection"],
            capture_point=data.get("capture_point") or None, target=data.get("target"), name=data["name"],
            note=data["note"], recompute=data["recompute"], seeds=self._seeds(),
        )

    @extend_schema(
        parameters=[
            OpenApiParameter("page", int, description="Page number, from 1."),
            OpenApiParameter("page_size", int, description="Records per page (up to 500)."),
            OpenApiParameter("capture_id", str, description="Only the records at this capture point."),
            OpenApiParameter("fate", str, enum=list(FATES), description="Only the records of this fate."),
        ],
        responses=s.WhatIfRecordSerializer(many=True),
    )
    @action(detail=True, methods=["get"], filterset_class=None, pagination_class=None)
    def records(self, request: Request, pk: str) -> Response:  # type: ignore[override]
        """The result's records page by page, each with its fate: at the target output every record with
        its value (and a changed one's new value); on the way, the ids the deletion reached."""
        whatif = self.get_object()
        result = self._result(whatif)
        fate = request.query_params.get("fate") or None
        if fate is not None and fate not in FATES:
            raise ValidationError({"fate": [f"{fate!r} is not a fate: use one of {', '.join(FATES)}"]})
        return self._page(request, whatif,
                          lambda start, size, local: whatif_records_page(result, start, size, local, fate),
                          **({"fate": fate} if fate else {}))

    def _all_rows(self, trace: Trace, result: ResultFile) -> Iterator[dict[str, Any]]:
        return whatif_records(result)


@extend_schema_view(list=extend_schema(
    description="The team history: traces and what-ifs of your teams' applications together (kind says which; "
    "url is where each one lives), pinned first, newest first."))
class HistoryViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    """Traces and what-ifs in one list."""

    serializer_class = s.TraceSerializer
    filterset_class = filters.HistoryFilter

    def get_queryset(self) -> QuerySet[Trace]:
        return trace_history(self.request.user).order_by("-pinned", "-created_at", "-id")
