"""The endpoint capture agents post their events to."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, permissions, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from lineage_server.accounts.authentication import AgentTokenAuthentication
from lineage_server.accounts.models import AgentToken
from lineage_server.api.serializers.ingest import IngestBatchSerializer, IngestResultSerializer
from lineage_server.catalog.services import ForeignApplicationError, ingest_events


class IngestEventsView(APIView):
    """Apply a batch of agent events (docs/ingest-events.md). Idempotent by event_id."""

    authentication_classes = [AgentTokenAuthentication]
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        request=IngestBatchSerializer,
        responses={
            200: IngestResultSerializer,
            400: OpenApiResponse(description="A field is missing or has the wrong type; the body names it."),
            401: OpenApiResponse(description="Missing, unknown or revoked agent token."),
            403: OpenApiResponse(description="The batch names an application of another team; nothing applied."),
            413: OpenApiResponse(description="Body larger than LINEAGE_INGEST_MAX_BYTES."),
        },
        tags=["ingest"],
    )
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
        batch = IngestBatchSerializer(data=request.data)
        batch.is_valid(raise_exception=True)
        try:
            result = ingest_events(batch.validated_data["events"], token)
        except ForeignApplicationError as error:
            return Response({"detail": str(error), "app_ids": error.app_ids}, status=status.HTTP_403_FORBIDDEN)
        return Response(IngestResultSerializer(result).data)
