"""Where the columns of a backward trace's rows come from: the column lineage of the output it
started at (``CapturePoint.column_lineage``, kept by the agent for DataFrame actions), each output
column with the source columns it was computed from (dataset, column, kind) and the source columns
that decided which rows there are (filters, joins, groups)."""

from __future__ import annotations

from typing import Any

from lineage_server.catalog.models import CapturePoint, Dataset
from lineage_server.catalog.models.dataset import dataset_key
from lineage_server.catalog.selectors.columns import input_path
from lineage_server.tracing.models import Direction, Trace, TraceKind


def traced_columns(trace: Trace) -> dict[str, Any] | None:
    """``{"columns": [{"column", "sources": [source...]}], "rows_decided_by": [source...]}`` for a
    backward trace started at an output whose column lineage is known, else None. A source is
    ``{"dataset", "dataset_id" (None when the catalog has no such dataset), "column", "type",
    "kind"}``, one per transformation."""
    if trace.kind != TraceKind.TRACE or trace.direction != Direction.BACKWARD or not trace.start_capture_id:
        return None
    lineage = (CapturePoint.objects.filter(application_id=trace.application_id, capture_id=trace.start_capture_id)
               .values_list("column_lineage", flat=True).first())
    if not lineage:
        return None
    fields: dict[str, Any] = lineage.get("fields") or {}
    items = [item for value in fields.values() for item in value.get("inputFields") or []]
    items += lineage.get("dataset") or []
    paths = {input_path(item) for item in items}
    known = {d.key: d.pk for d in Dataset.objects.filter(key__in=[dataset_key(p) for p in paths])}

    def sources(inputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for item in inputs:
            path = input_path(item)
            for t in item.get("transformations") or [{"type": "DIRECT", "subtype": "TRANSFORMATION"}]:
                out.append({"dataset": path, "dataset_id": known.get(dataset_key(path)),
                            "column": str(item.get("field", "")), "type": str(t.get("type") or "DIRECT"),
                            "kind": str(t.get("subtype") or "")})
        return out

    return {"columns": [{"column": name, "sources": sources(value.get("inputFields") or [])}
                        for name, value in fields.items()],
            "rows_decided_by": sources(lineage.get("dataset") or [])}
