"""Storage of record-level lineage: ids, the store's file system, tables, layouts, the run manifest.

Task-safe (imports only the standard library, pyarrow, pyroaring and ``record.errors``): the
layouts' writers and trace steps run inside Spark tasks, so this package travels to executors by
value together with ``record.worker``.
"""

from __future__ import annotations

from capture_agent.record.storage.deletion import DeletionRule, Fate
from capture_agent.record.storage.fs import StoreFS
from capture_agent.record.storage.layouts import LAYOUTS, Layout, Position
from capture_agent.record.storage.manifest import CapturePoint, LineageStore
from capture_agent.record.storage.tables import TableTarget

__all__ = ["LAYOUTS", "CapturePoint", "DeletionRule", "Fate", "Layout", "LineageStore", "Position", "StoreFS",
           "TableTarget"]
