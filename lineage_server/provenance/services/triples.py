"""Adding triples to a graph: an upload (JSON lines or Parquet, any size, streamed to a temporary
file, checked, written to the store as Parquet), or a captured run's record-level lineage."""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from typing import IO, TYPE_CHECKING, Any

from django.conf import settings
from django.db import transaction
from django.db.models import F

from capture_agent.provenance import read_triples, write_triples
from capture_agent.record.query.triples import RunTriples
from capture_agent.record.storage.fs import StoreFS
from capture_agent.record.storage.manifest import LineageStore
from lineage_server.catalog.models import Application
from lineage_server.provenance.models import ProvenanceGraph, TripleBatch
from lineage_server.provenance.services.builds import ask_index_build
from lineage_server.provenance.store import lineage_store, path_of

if TYPE_CHECKING:
    from django.contrib.auth.models import User

_CHUNK = 1 << 20


class UploadTooLarge(ValueError):
    """The upload is larger than ``LINEAGE_PROVENANCE_MAX_UPLOAD_MB``."""


def add_triples(graph: ProvenanceGraph, body: IO[bytes], fmt: str, *, by: User, build: bool = True) -> TripleBatch:
    """Reads triples of format ``fmt`` (``jsonl`` or ``parquet``) from ``body`` into a new batch;
    queues an index build unless ``build`` is false.

    Raises:
        TripleError: the triples are malformed (nothing is kept).
        UploadTooLarge: the body is over the limit.
    """
    limit = settings.LINEAGE["PROVENANCE_MAX_UPLOAD_BYTES"]
    with tempfile.NamedTemporaryFile(prefix="triples-", suffix=f".{fmt}") as tmp:
        copied = 0
        while chunk := body.read(_CHUNK):
            copied += len(chunk)
            if copied > limit:
                raise UploadTooLarge(f"the upload is over {limit >> 20} MB (LINEAGE_PROVENANCE_MAX_UPLOAD_MB)")
            tmp.write(chunk)
        tmp.flush()
        return _keep(graph, read_triples(tmp.name, fmt), fmt, by, build, dict)


def add_application_triples(graph: ProvenanceGraph, app: Application, lineage: LineageStore, *, by: User,
                            build: bool = True) -> TripleBatch:
    """The record-level lineage of ``app`` (its run folder, opened) exported as triples into a new batch."""
    run = RunTriples(lineage)
    # run.skipped is complete once its tables were read, which _keep does before making the row
    return _keep(graph, run.tables(), f"application:{app.app_id}", by, build,
                 lambda: {"skipped": run.skipped} if run.skipped else {})


def _keep(graph: ProvenanceGraph, tables: Iterator[Any], source: str, by: User, build: bool,
          details: Callable[[], dict[str, Any]]) -> TripleBatch:
    store = lineage_store()
    # The file first, outside any transaction: writing millions of rows must not hold the database's
    # write lock (SQLite has one for everybody).
    location = f"{graph.folder}/batches/{uuid.uuid4().hex}.parquet"
    path = path_of(store, location)
    rows = _write(store, path, tables)
    with transaction.atomic():
        batch = TripleBatch.objects.create(graph=graph, source=source[:300], created_by_label=by.get_username(),
                                           location=location, rows=rows, bytes=store.size(path), details=details())
        ProvenanceGraph.objects.filter(pk=graph.pk).update(triple_count=F("triple_count") + rows)
        if build:
            ask_index_build(graph, by=by)
    return batch


def _write(store: StoreFS, path: str, tables: Iterator[Any]) -> int:
    """Writes the tables as one Parquet file at ``path``; nothing is left there when they are refused."""
    store.make_dirs(path.rsplit("/", 1)[0])
    if not store.is_local:
        with store.fs.open_output_stream(path) as out:
            return write_triples(tables, out)
    tmp = f"{path}.tmp"
    try:
        with open(tmp, "wb") as out:
            rows = write_triples(tables, out)
        shutil.move(tmp, path)
        return rows
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
