"""Reads of provenance graphs: every one starts from the caller's teams; lineage queries read the
newest index generation (``capture_agent.provenance.query``: only the sets in the item's set lineage)."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from capture_agent.provenance import LineageAnswer, ProvenanceIndex
from lineage_server.accounts.selectors import teams_for
from lineage_server.provenance.models import BuildStatus, IndexBuild, ProvenanceGraph
from lineage_server.provenance.store import lineage_store, path_of


def visible_graphs(user: Any) -> QuerySet[ProvenanceGraph]:
    """The provenance graphs of ``user``'s teams (another team's are not there at all)."""
    return ProvenanceGraph.objects.filter(team__in=teams_for(user)).select_related("team")


def current_index(graph: ProvenanceGraph) -> IndexBuild | None:
    """The newest succeeded index generation of ``graph`` (the one queries read), or None."""
    return (IndexBuild.objects.filter(graph=graph, status=BuildStatus.SUCCEEDED)
            .order_by("-upto_batch_id", "-id").first())


def latest_build(graph: ProvenanceGraph) -> IndexBuild | None:
    return IndexBuild.objects.filter(graph=graph).order_by("-id").first()


def graph_lineage(build: IndexBuild, item: str, direction: str) -> LineageAnswer:
    """The ancestors or descendants of ``item`` in the generation ``build`` made."""
    store = lineage_store()
    return ProvenanceIndex.open(store, path_of(store, build.location)).lineage(item, direction)
