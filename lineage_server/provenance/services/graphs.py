"""Creating, changing and deleting provenance graphs."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from django.db import IntegrityError, transaction

from lineage_server.accounts.models import Team
from lineage_server.accounts.services import record_audit
from lineage_server.provenance.models import ProvenanceGraph
from lineage_server.provenance.store import lineage_store, path_of

if TYPE_CHECKING:
    from django.contrib.auth.models import User

log = logging.getLogger("lineage_server.provenance")


class GraphError(ValueError):
    """A graph cannot be made or changed as asked; ``field`` names what is wrong."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def check_splits(splits: Any) -> list[list[str]]:
    """Top-level splits as given: a list of lists of dataset names, no dataset twice."""
    if not isinstance(splits, list) or not all(
        isinstance(s, list) and s and all(isinstance(d, str) and d for d in s) for s in splits
    ):
        raise GraphError("splits", "a list of splits, each a non-empty list of dataset names")
    named = [d for s in splits for d in s]
    if len(named) != len(set(named)):
        raise GraphError("splits", "a dataset is in two splits")
    return splits


@transaction.atomic
def create_graph(team: Team, *, by: User, name: str, description: str = "", set_threshold: int | None = None,
                 splits: Any = None) -> ProvenanceGraph:
    """A new, empty provenance graph of ``team``.

    Raises:
        GraphError: the team has a graph of that name, or the splits are malformed.
    """
    graph = ProvenanceGraph(team=team, name=name, description=description, created_by=by,
                            splits=check_splits(splits or []))
    if set_threshold is not None:
        graph.set_threshold = set_threshold
    try:
        with transaction.atomic():
            graph.save()
    except IntegrityError:
        raise GraphError("name", f"team {team.slug} has a provenance graph named {name!r} already") from None
    record_audit("provenance_graph.create", actor=by, team=team, target=f"provenance graph {name}", graph=graph.pk)
    return graph


@transaction.atomic
def update_graph(graph: ProvenanceGraph, *, by: User, **changes: Any) -> ProvenanceGraph:
    """Changes the name, description, threshold or splits (a new threshold or new splits make the
    next index build start from scratch)."""
    if "splits" in changes:
        changes["splits"] = check_splits(changes["splits"])
    for name, value in changes.items():
        setattr(graph, name, value)
    try:
        with transaction.atomic():
            graph.save()
    except IntegrityError:
        raise GraphError("name", f"team has a provenance graph named {graph.name!r} already") from None
    return graph


def delete_graph(graph: ProvenanceGraph, *, by: User) -> None:
    """Deletes the graph, its batches and index generations (rows and files)."""
    store = lineage_store()
    folder = path_of(store, graph.folder)
    team, name, pk = graph.team, graph.name, graph.pk
    with transaction.atomic():
        graph.delete()
        record_audit("provenance_graph.delete", actor=by, team=team, target=f"provenance graph {name}", graph=pk)
    try:
        store.delete_dir(folder)
    except OSError as exc:
        log.warning("provenance graph %s: could not delete %s: %s", pk, folder, exc)
