"""The column graph across applications: which columns each written column comes from, and how.

It is read from the ``columnLineage`` facets kept on written ``DatasetIO`` rows (our agent's and
OpenLineage producers'). Centred on one column, on all the columns of a dataset, or on those of
the datasets an application read and wrote, it walks breadth first: upstream a column's writers'
input columns, downstream the columns that the applications reading its dataset wrote from it.
Depth counts column-to-column edges (one job's step). Only applications of the user's teams are
seen, and the walk stops at ``max_nodes`` column nodes (``truncated``). Two queries a step.

Nodes: datasets (``"dataset:<pk>"``, compound parents) and their columns (``"column:<pk>:<name>"``,
``parent`` the dataset, ``depth`` signed, negative upstream). Edges run the way data flows: from an
input column to a written column (``type`` DIRECT with ``kind`` IDENTITY, TRANSFORMATION or
AGGREGATION; INDIRECT with ``kind`` CONDITIONAL) or to a written dataset whose rows it decides
(INDIRECT FILTER, JOIN, GROUP_BY, SORT, WINDOW...: drawn, not walked on), with the applications
that wrote them (``app_ids``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from lineage_server.catalog.identities import DatasetKey, OpenLineageDataset
from lineage_server.catalog.models import Application, Dataset, DatasetIO, IODirection
from lineage_server.catalog.models.dataset import dataset_key
from lineage_server.catalog.selectors.pipeline import PipelineGraph

MAX_DEPTH = 10
MAX_NODES = 5000

Column = tuple[int, str]  # (dataset pk, column name)


def column_node_id(dataset_pk: int, column: str) -> str:
    return f"column:{dataset_pk}:{column}"


def input_path(item: dict[str, Any]) -> str:
    """The catalog path of an ``inputFields`` item (an empty namespace: a bare table name)."""
    namespace, name = str(item.get("namespace", "")), str(item.get("name", ""))
    return OpenLineageDataset(namespace, name).path() if namespace else name


def _edge_kind(transformations: list[dict[str, Any]] | None) -> tuple[str, str]:
    """(type, kind) of an input's strongest transformation; none named is a DIRECT one."""
    best = ("DIRECT", "TRANSFORMATION") if not transformations else None
    for t in transformations or []:
        candidate = (str(t.get("type") or "DIRECT"), str(t.get("subtype") or "TRANSFORMATION"))
        if best is None or (candidate[0] == "DIRECT" and best[0] != "DIRECT"):
            best = candidate
    assert best is not None
    return best


@dataclass
class ColumnGraph(PipelineGraph):
    """The pipeline graph's answer shape, its nodes datasets and their columns."""

    columns: int = 0
    max_nodes: int = MAX_NODES

    def add_box(self, dataset: Dataset) -> str:
        node_id = DatasetKey(dataset.pk).node_id()
        if node_id not in self.nodes:
            self.nodes[node_id] = {"id": node_id, "kind": "dataset", "label": dataset.path, "parent": None,
                                   "depth": None, "data": {"dataset_id": dataset.pk, "path": dataset.path,
                                                           "column": None}}
        return node_id

    def add_column(self, dataset: Dataset, column: str, depth: int) -> str | None:
        node_id = column_node_id(dataset.pk, column)
        if node_id in self.nodes:
            return node_id
        if self.columns >= self.max_nodes:
            self.truncated = True
            return None
        self.columns += 1
        self.nodes[node_id] = {"id": node_id, "kind": "column", "label": column, "parent": self.add_box(dataset),
                               "depth": depth, "data": {"dataset_id": dataset.pk, "path": dataset.path,
                                                        "column": column}}
        return node_id

    def add_edge(self, source: str, target: str, kind: tuple[str, str], app_id: str) -> None:
        edge_id = f"{source}->{target}:{kind[1]}"
        edge = self.edges.setdefault(edge_id, {"id": edge_id, "source": source, "target": target,
                                               "type": kind[0], "kind": kind[1], "app_ids": []})
        if app_id not in edge["app_ids"]:
            edge["app_ids"].append(app_id)


class _Resolver:
    """Input paths -> catalog datasets, one query for each batch of unseen paths."""

    def __init__(self) -> None:
        self.by_path: dict[str, Dataset | None] = {}

    def load(self, ios: Iterable[DatasetIO]) -> None:
        paths = {input_path(item) for io in ios for item in _inputs(io.column_lineage)} - set(self.by_path)
        found = {d.key: d for d in Dataset.objects.filter(key__in=[dataset_key(p) for p in paths])}
        for path in paths:
            self.by_path[path] = found.get(dataset_key(path))

    def __call__(self, item: dict[str, Any]) -> Dataset | None:
        return self.by_path.get(input_path(item))


def _inputs(lineage: dict[str, Any]) -> Iterable[dict[str, Any]]:
    for value in (lineage.get("fields") or {}).values():
        yield from value.get("inputFields") or []
    yield from lineage.get("dataset") or []


def dataset_columns(apps: QuerySet[Application], dataset: Dataset) -> list[str]:
    """The columns the lineage knows of a dataset: written ones, its schema's, and those read from it."""
    names: dict[str, None] = {}
    for lineage in (DatasetIO.objects.filter(application__in=apps, dataset=dataset, direction=IODirection.WRITTEN)
                    .exclude(column_lineage={}).values_list("column_lineage", flat=True)):
        names.update(dict.fromkeys(lineage.get("fields") or {}))
    names.update(dict.fromkeys(str(f.get("name")) for f in dataset.schema_fields or [] if f.get("name")))
    readers = DatasetIO.objects.filter(application__in=apps, dataset=dataset, direction=IODirection.READ)
    for io in _written_with_lineage(apps, readers.values("application_id")):
        for item in _inputs(io.column_lineage):
            if dataset_key(input_path(item)) == dataset.key:
                names.setdefault(str(item.get("field")), None)
    return list(names)


def _written_with_lineage(apps: QuerySet[Application], app_ids: Any) -> QuerySet[DatasetIO]:
    return (DatasetIO.objects.filter(application__in=apps, direction=IODirection.WRITTEN, application_id__in=app_ids)
            .exclude(column_lineage={}).select_related("application", "dataset").order_by("id"))


def column_graph(apps: QuerySet[Application], starts: dict[int, set[str] | None], center: str, *,
                 upstream: int = 2, downstream: int = 2, max_nodes: int = MAX_NODES) -> ColumnGraph:
    """The column graph from ``starts`` (dataset pk -> its columns to start from, None for all of
    them), through ``apps`` only."""
    graph = ColumnGraph(center, max_nodes=max_nodes)
    datasets = Dataset.objects.in_bulk(list(starts))
    for pk, dataset in datasets.items():
        graph.add_box(dataset)
        for name in starts[pk] or []:
            graph.add_column(dataset, name, 0)
    resolver = _Resolver()
    for sign, steps in ((-1, upstream), (1, downstream)):
        frontier: dict[int, set[str] | None] = {pk: names for pk, names in starts.items() if pk in datasets}
        for step in range(1, steps + 1):
            if not frontier or graph.truncated:
                break
            found = (_step_up if sign < 0 else _step_down)(graph, apps, frontier, step * sign, resolver)
            frontier = {pk: names for pk, names in found.items()}
    return graph


def _matches(frontier: dict[int, set[str] | None], dataset: Dataset | None, column: str) -> bool:
    if dataset is None or dataset.pk not in frontier:
        return False
    names = frontier[dataset.pk]
    return names is None or column in names


def _step_up(graph: ColumnGraph, apps: QuerySet[Application], frontier: dict[int, set[str] | None], depth: int,
             resolver: _Resolver) -> dict[int, set[str] | None]:
    """The writers of the frontier's columns: their input columns, one step upstream."""
    ios = list(DatasetIO.objects.filter(application__in=apps, direction=IODirection.WRITTEN, dataset_id__in=frontier)
               .exclude(column_lineage={}).select_related("application", "dataset").order_by("id"))
    resolver.load(ios)
    found: dict[int, set[str]] = defaultdict(set)
    for io in ios:
        matched = False
        for name, value in (io.column_lineage.get("fields") or {}).items():
            if not _matches(frontier, io.dataset, name):
                continue
            matched = True
            target = graph.add_column(io.dataset, name, depth + 1)
            for item in value.get("inputFields") or []:
                origin, column = resolver(item), str(item.get("field"))
                source = graph.add_column(origin, column, depth) if origin is not None else None
                if target and source and origin is not None:
                    graph.add_edge(source, target, _edge_kind(item.get("transformations")), io.application.app_id)
                    found[origin.pk].add(column)
        if matched:  # the columns that decide which rows it has are upstream of its columns too (not walked on)
            _dataset_edges(graph, io, resolver, lambda d, c: graph.add_column(d, c, depth) is not None)
    return dict(found)


def _step_down(graph: ColumnGraph, apps: QuerySet[Application], frontier: dict[int, set[str] | None], depth: int,
               resolver: _Resolver) -> dict[int, set[str] | None]:
    """The columns written from the frontier's columns by the applications that read them."""
    readers = DatasetIO.objects.filter(application__in=apps, direction=IODirection.READ,
                                       dataset_id__in=frontier).values("application_id")
    ios = list(_written_with_lineage(apps, readers))
    resolver.load(ios)
    found: dict[int, set[str]] = defaultdict(set)
    for io in ios:
        for name, value in (io.column_lineage.get("fields") or {}).items():
            for item in value.get("inputFields") or []:
                origin, column = resolver(item), str(item.get("field"))
                if origin is None or not _matches(frontier, origin, column):
                    continue
                source = graph.add_column(origin, column, depth - 1)
                target = graph.add_column(io.dataset, name, depth)
                if source and target:
                    graph.add_edge(source, target, _edge_kind(item.get("transformations")), io.application.app_id)
                    found[io.dataset_id].add(name)
        _dataset_edges(graph, io, resolver, lambda d, c: _matches(frontier, d, c))
    return dict(found)


def _dataset_edges(graph: ColumnGraph, io: DatasetIO, resolver: _Resolver,
                   wanted: Callable[[Dataset, str], bool]) -> None:
    """The written dataset's INDIRECT inputs (filter, join, group by...) whose columns are ``wanted``."""
    for item in io.column_lineage.get("dataset") or []:
        source_set = resolver(item)
        column = str(item.get("field"))
        if source_set is None or not wanted(source_set, column):
            continue
        source = column_node_id(source_set.pk, column)
        if source in graph.nodes:
            graph.add_edge(source, graph.add_box(io.dataset), _edge_kind(item.get("transformations")),
                           io.application.app_id)


def impact_rows(graph: ColumnGraph) -> list[dict[str, Any]]:
    """The downstream columns of a column graph, nearest first: what changing its centre touches."""
    rows = [{"depth": node["depth"], "dataset": node["data"]["path"], "column": node["data"]["column"],
             "via": ";".join(sorted({e["kind"] for e in graph.edges.values() if e["target"] == node["id"]})),
             "applications": ";".join(sorted({a for e in graph.edges.values() if e["target"] == node["id"]
                                              for a in e["app_ids"]}))}
            for node in graph.nodes.values() if node["kind"] == "column" and (node["depth"] or 0) > 0]
    return sorted(rows, key=lambda r: (r["depth"], r["dataset"], r["column"]))
