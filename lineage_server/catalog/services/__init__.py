"""Writes on the catalog, each a verb function inside a transaction."""

from lineage_server.catalog.services._openlineage import OPENLINEAGE_EVENT_TYPE
from lineage_server.catalog.services._rounds import apply_accepted
from lineage_server.catalog.services.finalize import FINALIZE_TASK, finalize_application, requeue_pending_finalizes
from lineage_server.catalog.services.ingest import EncodedBody, ForeignApplicationError, IngestResult, ingest_events
from lineage_server.catalog.services.retention import ApplicationDeletion, delete_application, plan_deletion, shown_path

__all__ = [
    "FINALIZE_TASK",
    "OPENLINEAGE_EVENT_TYPE",
    "ApplicationDeletion",
    "EncodedBody",
    "apply_accepted",
    "IngestResult",
    "delete_application",
    "finalize_application",
    "ingest_events",
    "ForeignApplicationError",
    "plan_deletion",
    "shown_path",
    "requeue_pending_finalizes",
]
