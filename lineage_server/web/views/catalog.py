"""The HTML pages: thin shells that load the frontend bundle, which draws them from the JSON API."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from lineage_server.catalog.selectors import visible_applications


@login_required
def applications(request: HttpRequest) -> HttpResponse:
    """The list of captured applications; its JSON twin is ``GET /api/v1/applications/``."""
    return render(request, "web/applications.html", {"api_url": reverse("api:application-list")})


@login_required
def application(request: HttpRequest, app_id: str) -> HttpResponse:
    """One application's lineage graph; its JSON twin is ``GET /api/v1/applications/<app_id>/graph/``."""
    app = visible_applications(request.user).filter(app_id=app_id).only("app_id", "name").first()
    if app is None:
        return render(request, "web/not_found.html", {"what": "application", "key": app_id}, status=404)
    return render(
        request,
        "web/application.html",
        {
            "app": app,
            "api_url": reverse("api:application-detail", kwargs={"app_id": app.app_id}),
            "graph_url": reverse("api:application-graph", kwargs={"app_id": app.app_id}),
            "capture_points_url": reverse("api:capture-point-list", kwargs={"app_id": app.app_id}),
        },
    )
