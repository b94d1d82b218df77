"""Liveness for load balancers and container health checks: public, plain http allowed, no data."""

from __future__ import annotations

from django.db import DatabaseError, connection
from django.http import HttpRequest, JsonResponse


def healthz(request: HttpRequest) -> JsonResponse:
    """200 when the server answers and its database does, 503 otherwise."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError as error:
        return JsonResponse({"status": "database unavailable", "detail": str(error)[:200]}, status=503)
    return JsonResponse({"status": "ok"})
