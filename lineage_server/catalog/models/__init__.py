"""Catalog models, one module per entity."""

from lineage_server.catalog.models.application import Application, RunStatus
from lineage_server.catalog.models.capture_point import CaptureKind, CapturePoint
from lineage_server.catalog.models.dataset import Dataset, DatasetIO, IODirection
from lineage_server.catalog.models.ingest_batch import IngestBatch
from lineage_server.catalog.models.ingested_event import IngestedEvent
from lineage_server.catalog.models.job import Job
from lineage_server.catalog.models.openlineage import OpenLineageJob, OpenLineageRun
from lineage_server.catalog.models.operator import Operator, PythonPipeline
from lineage_server.catalog.models.stage import Stage

__all__ = [
    "Application",
    "CaptureKind",
    "CapturePoint",
    "Dataset",
    "DatasetIO",
    "IODirection",
    "IngestBatch",
    "IngestedEvent",
    "Job",
    "OpenLineageJob",
    "OpenLineageRun",
    "Operator",
    "PythonPipeline",
    "RunStatus",
    "Stage",
]
