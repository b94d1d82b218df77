"""Pages of provenance graphs: shells the frontend draws from the JSON API."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from lineage_server.provenance.selectors import visible_graphs


@login_required
def graphs(request: HttpRequest) -> HttpResponse:
    """The team's provenance graphs; its JSON twin is ``GET /api/v1/provenance/graphs/``."""
    return render(request, "web/provenance_graphs.html", {"api_url": reverse("api:provenance-graph-list")})


@login_required
def graph(request: HttpRequest, pk: int) -> HttpResponse:
    """One provenance graph: its index and a lineage query drawn as a graph; its JSON twins are
    ``GET /api/v1/provenance/graphs/<id>/`` and ``.../lineage/?item=``."""
    found = visible_graphs(request.user).filter(pk=pk).first()
    if found is None:
        return render(request, "web/not_found.html", {"what": "provenance graph", "key": pk}, status=404)
    return render(request, "web/provenance_graph.html", {
        "graph": found,
        "api_url": reverse("api:provenance-graph-detail", kwargs={"pk": pk}),
        "lineage_url": reverse("api:provenance-graph-lineage", kwargs={"pk": pk}),
    })
