"""The listener's column lineage of a written dataset as OpenLineage's ``columnLineage`` facet.

The JVM half (``java/lineage/agent/ColumnLineage.java``) describes a write's columns as
``[{"Name": column, "Inputs": [[path, column, type, subtype], ...]}]`` and the columns that decide
its rows as ``[[path, column, "INDIRECT", subtype], ...]``; here they become the facet's ``fields``
(each column's ``inputFields`` with their ``transformations``) and ``dataset``, with every input
dataset named by the OpenLineage namespace and name of its path (``openlineage_name``), the same
shape OpenLineage producers send (docs/ingest-events.md, ``column_lineage``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

Facet = dict[str, Any]


def openlineage_name(path: str) -> tuple[str, str]:
    """The OpenLineage (namespace, name) of a path as the agent spells it, the inverse of the
    server's ``OpenLineageDataset.path``: ``file:/data/x`` is (``file``, ``/data/x``),
    ``hdfs://nn:8020/data/x`` is (``hdfs://nn:8020``, ``/data/x``), ``s3a://bucket/key`` is
    (``s3a://bucket``, ``/key``); a table name without a scheme has the empty namespace."""
    scheme, colon, rest = path.partition(":")
    if not colon or "/" in scheme:
        return "", path
    if rest.startswith("//"):
        authority, slash, name = rest[2:].partition("/")
        return f"{scheme}://{authority}", slash + name
    return scheme, rest


def _input_fields(inputs: Iterable[Any], qualify: Callable[[str], str]) -> list[Facet]:
    by_column: dict[tuple[str, str], list[Facet]] = {}
    for path, column, kind, subtype in inputs:
        transformation = {"type": str(kind), "subtype": str(subtype)}
        transformations = by_column.setdefault((qualify(str(path)), str(column)), [])
        if transformation not in transformations:
            transformations.append(transformation)
    fields = []
    for (path, column), transformations in by_column.items():
        namespace, name = openlineage_name(path)
        fields.append({"namespace": namespace, "name": name, "field": column,
                       "transformations": transformations})
    return fields


def column_lineage_facet(columns: list[dict[str, Any]], dataset: list[Any],
                         qualify: Callable[[str], str] = lambda p: p) -> Facet:
    """The ``columnLineage`` facet of the listener's ``Columns`` and ``Dataset`` of one write."""
    fields = {str(column["Name"]): {"inputFields": _input_fields(column.get("Inputs") or [], qualify)}
              for column in columns}
    return {"fields": fields, "dataset": _input_fields(dataset, qualify)}
