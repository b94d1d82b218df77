"""The endpoints capture agents post their events to: ours, and OpenLineage's run events."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import exceptions, permissions, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from lineage_server.accounts.authentication import AgentTokenAuthentication
from lineage_server.accounts.models import AgentToken
from lineage_server.api.parsers import GzipJSONParser
from lineage_server.api.serializers.ingest import IngestBatchSerializer, IngestResultSerializer
from lineage_server.api.serializers.openlineage import OpenLineageBatchSerializer, OpenLineageEventSerializer
from lineage_server.catalog.services import ForeignApplicationError, ingest_events

# The request body of the OpenLineage endpoints, as OpenAPI shows it: the outline of the spec's RunEvent
# (the server checks the whole spec, facets included: api/openlineage_spec/).
_RUN_EVENT = {
    "type": "object",
    "description": "An OpenLineage RunEvent: https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    "required": ["eventTime", "producer", "schemaURL", "run", "job"],
    "properties": {
        "eventType": {"type": "string", "enum": ["START", "RUNNING", "COMPLETE", "ABORT", "FAIL", "OTHER"]},
        "eventTime": {"type": "string", "format": "date-time"},
        "producer": {"type": "string"},
        "schemaURL": {"type": "string"},
        "run": {"type": "object", "required": ["runId"], "properties": {
            "runId": {"type": "string", "format": "uuid"}, "facets": {"type": "object"}}},
        "job": {"type": "object", "required": ["namespace", "name"], "properties": {
            "namespace": {"type": "string"}, "name": {"type": "string"}, "facets": {"type": "object"}}},
        "inputs": {"type": "array", "items": {"type": "object", "required": ["namespace", "name"]}},
        "outputs": {"type": "array", "items": {"type": "object", "required": ["namespace", "name"]}},
    },
}

_ANSWERS = {
    200: IngestResultSerializer,
    202: OpenApiResponse(IngestResultSerializer, description="Accepted (counted as for 200) while another request's "
                         "batches were being applied; applied by the next round, within moments."),
    400: OpenApiResponse(description="A field is missing or has the wrong type; the body names it. Nothing applied."),
    401: OpenApiResponse(description="Missing, unknown or revoked agent token."),
    403: OpenApiResponse(description="The batch names an application of another team; nothing applied."),
    413: OpenApiResponse(description="Body larger than LINEAGE_INGEST_MAX_BYTES."),
    415: OpenApiResponse(description="A Content-Encoding other than gzip."),
}


class _IngestView(APIView):
    """POST events with a team's agent token; they are validated by ``validated_events`` and applied as one batch."""

    authentication_classes = [AgentTokenAuthentication]
    permission_classes = [permissions.IsAuthenticated]
    parser_classes = [GzipJSONParser]

    def validated_events(self, request: Request) -> list[dict[str, Any]]:
        """The request's events as ingest events; raises ValidationError (a 400 naming the field)."""
        raise NotImplementedError

    def post(self, request: Request) -> Response:
        limit = settings.LINEAGE["INGEST_MAX_BYTES"]
        length = request.META.get("CONTENT_LENGTH") or "0"
        if length.isdigit() and int(length) > limit:
            return Response(
                {"detail": f"Request body is {length} bytes; the limit is {limit}. Send smaller batches."},
                status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
            )
        token = request.auth
        if not isinstance(token, AgentToken):  # AgentTokenAuthentication authenticates every caller here
            raise exceptions.NotAuthenticated()
        events = self.validated_events(request)
        try:
            result = ingest_events(events, token)
        except ForeignApplicationError as error:
            return Response({"detail": str(error), "app_ids": error.app_ids}, status=status.HTTP_403_FORBIDDEN)
        # 202: accepted, left to the round under way's successor (a worker's applier) to apply.
        return Response(IngestResultSerializer(result).data,
                        status=status.HTTP_200_OK if result.applied else status.HTTP_202_ACCEPTED)


@extend_schema_view(post=extend_schema(request=IngestBatchSerializer, responses=_ANSWERS, tags=["ingest"]))
class IngestEventsView(_IngestView):
    """Apply a batch of agent events (docs/ingest-events.md). Idempotent by event_id."""

    def validated_events(self, request: Request) -> list[dict[str, Any]]:
        batch = IngestBatchSerializer(data=request.data)
        batch.is_valid(raise_exception=True)
        return list(batch.validated_data["events"])


@extend_schema_view(post=extend_schema(
    request={"application/json": _RUN_EVENT}, responses=_ANSWERS, tags=["ingest"],
    description="An OpenLineage run event (https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent), "
                "as the OpenLineage clients' HTTP transport posts it, with a team's agent token as the API key. "
                "Its run becomes an application, its job and input/output datasets join the dataset graph. "
                "Sending an event again changes nothing (counted as a duplicate).",
))
class OpenLineageEventView(_IngestView):
    """Apply one OpenLineage run event (docs/openlineage.md)."""

    def validated_events(self, request: Request) -> list[dict[str, Any]]:
        event = OpenLineageEventSerializer(data=request.data)
        event.is_valid(raise_exception=True)
        return [event.validated_data]


@extend_schema_view(post=extend_schema(
    request={"application/json": {"type": "array", "items": _RUN_EVENT}}, responses=_ANSWERS, tags=["ingest"],
    description="A JSON array of OpenLineage run events (the spec's /lineage/batch), applied as one batch: "
                "all or none. At most LINEAGE_INGEST_MAX_EVENTS events.",
))
class OpenLineageBatchView(_IngestView):
    """Apply a batch of OpenLineage run events (docs/openlineage.md)."""

    def validated_events(self, request: Request) -> list[dict[str, Any]]:
        batch = OpenLineageBatchSerializer(data=request.data)
        batch.is_valid(raise_exception=True)
        return list(batch.validated_data)
