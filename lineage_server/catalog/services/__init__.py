"""Writes on the catalog, each a verb function inside a transaction."""

from lineage_server.catalog.services.finalize import finalize_application
from lineage_server.catalog.services.ingest import IngestResult, ingest_events

__all__ = ["IngestResult", "finalize_application", "ingest_events"]
