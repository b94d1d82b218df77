"""The HTML pages: thin shells that load the frontend bundle, which draws them from the JSON API."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from lineage_server.catalog.models import Dataset, DatasetIO
from lineage_server.catalog.selectors import visible_applications
from lineage_server.tracing.selectors import trace_history


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """Recent applications, pinned and recent traces and what-ifs, and one search box; drawn from
    ``GET /api/v1/applications/``, ``/api/v1/history/`` and ``/api/v1/datasets/``."""
    return render(request, "web/home.html", {
        "applications_url": reverse("api:application-list"),
        "history_url": reverse("api:history-list"),
        "datasets_url": reverse("api:dataset-list"),
    })


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
    graph_url = reverse("api:application-graph", kwargs={"app_id": app.app_id})
    return render(
        request,
        "web/application.html",
        {
            "app": app,
            "api_url": reverse("api:application-detail", kwargs={"app_id": app.app_id}),
            "graph_url": graph_url,
            "preload_url": graph_url,
            "capture_points_url": reverse("api:capture-point-list", kwargs={"app_id": app.app_id}),
        },
    )


PIPELINE_DEPTH = 2  # as frontend/src/pipeline_graph.js's depthsFromUrl, when the query string names none


def _page_depth(request: HttpRequest, name: str) -> int:
    """A depth of the pipeline page's query string as its script reads it (depthsFromUrl): 0 to 10, else 2."""
    raw = request.GET.get(name, "").strip()
    try:
        value = float(raw)  # as JavaScript's Number(): "3", "3.0", " 3 " (but not "1_0")
    except ValueError:
        return PIPELINE_DEPTH
    return int(value) if value.is_integer() and 0 <= value <= 10 and "_" not in raw else PIPELINE_DEPTH


def _pipeline_page(request: HttpRequest, title: str, graph_url: str, columns_url: str, center: str) -> HttpResponse:
    # The URL the page's script fetches first (pipeline.js: the mode and depths of the query string),
    # preloaded; where the two read an odd query string apart, the script fetches its own.
    depths = urlencode({"upstream": _page_depth(request, "upstream"), "downstream": _page_depth(request, "downstream")})
    first = columns_url if request.GET.get("mode") == "columns" else graph_url
    return render(request, "web/pipeline.html", {
        "title": title, "graph_url": graph_url, "center": center, "preload_url": f"{first}?{depths}",
    })


@login_required
def dataset(request: HttpRequest, pk: int) -> HttpResponse:
    """The dataset graph across applications centred on one dataset; its JSON twin is
    ``GET /api/v1/datasets/<id>/graph/``."""
    mine = DatasetIO.objects.filter(dataset_id=pk, application__in=visible_applications(request.user))
    found = Dataset.objects.filter(pk=pk).first() if mine.exists() else None
    if found is None:
        return render(request, "web/not_found.html", {"what": "dataset", "key": pk}, status=404)
    return _pipeline_page(request, found.path, reverse("api:dataset-graph", kwargs={"pk": pk}),
                          reverse("api:dataset-columns", kwargs={"pk": pk}), f"dataset:{pk}")


@login_required
def pipeline(request: HttpRequest, app_id: str) -> HttpResponse:
    """The dataset graph across applications centred on one application; its JSON twin is
    ``GET /api/v1/applications/<app_id>/pipeline/``."""
    app = visible_applications(request.user).filter(app_id=app_id).only("app_id", "name").first()
    if app is None:
        return render(request, "web/not_found.html", {"what": "application", "key": app_id}, status=404)
    return _pipeline_page(request, app.name or app.app_id,
                          reverse("api:application-pipeline", kwargs={"app_id": app.app_id}),
                          reverse("api:application-columns", kwargs={"app_id": app.app_id}), f"app:{app.app_id}")


def _question_page(request: HttpRequest, pk: int, kind: str) -> HttpResponse:
    question = trace_history(request.user).filter(pk=pk, kind=kind).select_related("application").first()
    if question is None:
        return render(request, "web/not_found.html", {"what": "what-if" if kind == "whatif" else "trace", "key": pk},
                      status=404)
    return render(request, "web/question.html", {
        "question": question,
        "api_url": reverse(f"api:{kind}-detail", kwargs={"pk": pk}),
        "graph_url": reverse("api:application-graph", kwargs={"app_id": question.application.app_id}),
    })


@login_required
def trace(request: HttpRequest, pk: int) -> HttpResponse:
    """One trace: its progress, then its subgraph and records; its JSON twin is ``GET /api/v1/traces/<id>/``."""
    return _question_page(request, pk, "trace")


@login_required
def whatif(request: HttpRequest, pk: int) -> HttpResponse:
    """One what-if: its progress, then fates and old and new values; its JSON twin is ``GET /api/v1/whatifs/<id>/``."""
    return _question_page(request, pk, "whatif")


@login_required
def diff(request: HttpRequest, pk: int) -> HttpResponse:
    """One diff of two runs: outputs side by side with their fates, one output explained; its JSON twin is
    ``GET /api/v1/diffs/<id>/``."""
    found = trace_history(request.user).filter(pk=pk, kind="diff").first()
    if found is None:
        return render(request, "web/not_found.html", {"what": "diff", "key": pk}, status=404)
    return render(request, "web/diff.html", {"diff": found, "api_url": reverse("api:diff-detail", kwargs={"pk": pk})})


@login_required
def history(request: HttpRequest) -> HttpResponse:
    """The team's traces and what-ifs; its JSON twin is ``GET /api/v1/history/``."""
    return render(request, "web/history.html", {"api_url": reverse("api:history-list")})
