"""The dataset graph across applications: datasets and the applications that read and write them.

Centred on one dataset or one application, it walks ``DatasetIO`` rows breadth first: upstream
follows what wrote a dataset and what that application read, downstream what read a dataset and
what that application wrote. Depth counts edges (a dataset -> application -> dataset pipeline step
is two). Only applications of the user's teams are reached (a dataset is known through them), and
the walk stops at ``max_nodes`` nodes (``truncated``). One query per step of each direction.

Nodes: ``{"id": "dataset:<pk>" | "app:<app_id>", "kind": "dataset" | "application", "label", "depth",
"data"}`` (depth: signed, negative upstream); edges: ``{"id", "source", "target", "kind": "read" |
"write"}``, always in the direction data flows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db.models import Q, QuerySet

from lineage_server.catalog.identities import DatasetKey
from lineage_server.catalog.models import Application, Dataset, DatasetIO, IODirection

MAX_DEPTH = 10
MAX_NODES = 500


def app_node_id(app_id: str) -> str:
    return f"app:{app_id}"


@dataclass
class PipelineGraph:
    center: str
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    edges: dict[str, dict[str, Any]] = field(default_factory=dict)
    truncated: bool = False

    def add_dataset(self, dataset: Dataset, depth: int) -> str:
        node_id = DatasetKey(dataset.pk).node_id()
        if node_id not in self.nodes:
            self.nodes[node_id] = {
                "id": node_id, "kind": "dataset", "label": dataset.path, "depth": depth,
                "data": {"dataset_id": dataset.pk, "path": dataset.path, "format": dataset.format,
                         "size_bytes": dataset.size_bytes},
            }
        return node_id

    def add_application(self, app: Application, depth: int) -> str:
        node_id = app_node_id(app.app_id)
        if node_id not in self.nodes:
            self.nodes[node_id] = {
                "id": node_id, "kind": "application", "label": app.name or app.app_id, "depth": depth,
                "data": {"app_id": app.app_id, "name": app.name, "status": app.status, "user": app.user,
                         "started_at": app.started_at.isoformat() if app.started_at else None},
            }
        return node_id

    def add_io(self, io: DatasetIO) -> None:
        dataset, app = DatasetKey(io.dataset_id).node_id(), app_node_id(io.application.app_id)
        if dataset not in self.nodes or app not in self.nodes:
            return
        source, target, kind = (dataset, app, "read") if io.direction == IODirection.READ else (app, dataset, "write")
        edge_id = f"{source}->{target}"
        self.edges.setdefault(edge_id, {"id": edge_id, "source": source, "target": target, "kind": kind})

    def full(self, max_nodes: int) -> bool:
        if len(self.nodes) >= max_nodes:
            self.truncated = True
        return self.truncated


def pipeline_graph(apps: QuerySet[Application], *, dataset: Dataset | None = None,
                   application: Application | None = None, upstream: int = 2, downstream: int = 2,
                   max_nodes: int = MAX_NODES) -> PipelineGraph:
    """The graph around ``dataset`` or ``application`` (exactly one), through ``apps`` only."""
    assert (dataset is None) != (application is None)
    if dataset is not None:
        graph = PipelineGraph(DatasetKey(dataset.pk).node_id())
        graph.add_dataset(dataset, 0)
        start: tuple[set[int], set[int]] = ({dataset.pk}, set())
    else:
        assert application is not None
        graph = PipelineGraph(app_node_id(application.app_id))
        graph.add_application(application, 0)
        start = (set(), {application.pk})
    for sign, steps in ((-1, upstream), (1, downstream)):
        _walk(graph, apps, start, sign, steps, max_nodes)
    return graph


def _walk(graph: PipelineGraph, apps: QuerySet[Application], start: tuple[set[int], set[int]],
          sign: int, steps: int, max_nodes: int) -> None:
    """Breadth first from the start's datasets and applications, one edge a step, in one direction:
    upstream (sign -1) a dataset's writers and an application's reads, downstream the reverse."""
    datasets, applications = start
    seen_datasets, seen_apps = set(datasets), set(applications)
    # the direction of a dataset's IO that leads on from the dataset to its application
    from_dataset = IODirection.WRITTEN if sign < 0 else IODirection.READ
    for step in range(1, steps + 1):
        if not datasets and not applications:
            return
        ios = list(
            DatasetIO.objects.filter(application__in=apps)
            .filter(_step_filter(datasets, applications, from_dataset))
            .select_related("application", "dataset")
            .order_by("id")
        )
        next_datasets: set[int] = set()
        next_apps: set[int] = set()
        for io in ios:
            if io.dataset_id in datasets and io.direction == from_dataset:
                if io.application_id not in seen_apps:
                    if graph.full(max_nodes):
                        break
                    graph.add_application(io.application, sign * step)
                    seen_apps.add(io.application_id)
                    next_apps.add(io.application_id)
            elif io.application_id in applications and io.direction != from_dataset:
                if io.dataset_id not in seen_datasets:
                    if graph.full(max_nodes):
                        break
                    graph.add_dataset(io.dataset, sign * step)
                    seen_datasets.add(io.dataset_id)
                    next_datasets.add(io.dataset_id)
            else:
                continue
            graph.add_io(io)
        datasets, applications = next_datasets, next_apps


def _step_filter(datasets: set[int], applications: set[int], from_dataset: str) -> Q:
    return (Q(dataset_id__in=datasets, direction=from_dataset)
            | (Q(application_id__in=applications) & ~Q(direction=from_dataset)))


def as_answer(graph: PipelineGraph) -> dict[str, Any]:
    return {"center": graph.center, "truncated": graph.truncated, "nodes": list(graph.nodes.values()),
            "edges": list(graph.edges.values())}
