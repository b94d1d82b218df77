"""An OpenLineage run event merged into the catalog: its run is an application, its datasets read and written.

The run (``openlineage-<runId>``) is an application of the posting token's team, named after its
job; the job (namespace, name) keeps its facets for all its runs. Each input and output dataset is
a catalog dataset (``OpenLineageDataset.path``, so a dataset our agent saw is the same row) with
its ``schema`` facet's columns, read or written once per run however many of the run's events list
it, the written one with its ``columnLineage`` facet. START, RUNNING, COMPLETE, FAIL and ABORT
move the run's status forward only, as the agent's events do, so events may arrive in any order.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from lineage_server.catalog.identities import OpenLineageDataset
from lineage_server.catalog.models import Application, IODirection, RunStatus
from lineage_server.catalog.models.dataset import dataset_key
from lineage_server.catalog.services._batch import CatalogBatch

Body = dict[str, Any]

OPENLINEAGE_EVENT_TYPE = "openlineage_run"  # the ingest event type an OpenLineage run event becomes
_STATUS = {"START": RunStatus.RUNNING, "RUNNING": RunStatus.RUNNING, "COMPLETE": RunStatus.SUCCEEDED,
           "FAIL": RunStatus.FAILED, "ABORT": RunStatus.FAILED}
_ENDS = {"COMPLETE", "FAIL", "ABORT"}


def openlineage_run(batch: CatalogBatch, app: Application, body: Body, at: dt.datetime) -> None:
    """Merge one validated OpenLineage run event (``api.serializers.openlineage``) into ``app``, its run."""
    kind = body.get("eventType", "OTHER")
    job, run = body["job"], body["run"]
    app.name = job["name"][:512]
    if kind == "START" or app.started_at is None or at < app.started_at:
        app.started_at = at
    if kind in _ENDS:
        app.ended_at = at
    if kind in _STATUS and RunStatus.rank(_STATUS[kind]) >= RunStatus.rank(app.status):
        app.status = _STATUS[kind]
    parent = (run.get("facets") or {}).get("parent") or {}
    batch.put_openlineage_run(
        app,
        (job["namespace"], job["name"]),
        _facets(job.get("facets")),
        {"run_id": run["runId"], "parent_run_id": (parent.get("run") or {}).get("runId"),
         "producer": body["producer"], "facets": _facets(run.get("facets"))},
    )
    for direction, side, io_facets, statistics in ((IODirection.READ, "inputs", "inputFacets", "inputStatistics"),
                                                   (IODirection.WRITTEN, "outputs", "outputFacets",
                                                    "outputStatistics")):
        for dataset in body.get(side) or []:
            _see_dataset(batch, app, dataset, direction, at, ((dataset.get(io_facets) or {}).get(statistics) or {}))


def _see_dataset(batch: CatalogBatch, app: Application, dataset: Body, direction: str, at: dt.datetime,
                 statistics: Body) -> None:
    facets = dataset.get("facets") or {}
    path = OpenLineageDataset(dataset["namespace"], dataset["name"]).path()
    key = dataset_key(path)
    storage = facets.get("storage") or {}
    batch.see_dataset(key, {"path": path, "namespace": dataset["namespace"], "name": dataset["name"],
                            "format": str(storage.get("fileFormat") or "")[:64],
                            "schema_fields": _bare((facets.get("schema") or {}).get("fields") or [])})
    lineage = facets.get("columnLineage") if direction == IODirection.WRITTEN else None
    size = statistics.get("size")
    batch.merge_dataset_io(app, key, direction, {"at": at, "size_bytes": size if 0 <= (size or 0) < 2**62 else None,
                                                 "column_lineage": _bare(lineage) if lineage else None})


def _facets(facets: Body | None) -> Body:
    """Facets as kept: without the base fields every facet repeats; a `_deleted` one as None (removed)."""
    return {name: None if facet.get("_deleted") else _bare(facet) for name, facet in (facets or {}).items()}


def _bare(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _bare(v) for k, v in value.items() if k not in ("_producer", "_schemaURL")}
    if isinstance(value, list):
        return [_bare(v) for v in value]
    return value
