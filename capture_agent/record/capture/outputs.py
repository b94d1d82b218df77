"""Output capture points: what an action returned, and which records it came from."""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Any

from capture_agent.record.query.recipes import Redo
from capture_agent.record.storage.fs import StoreFS
from capture_agent.record.storage.ids import SHIFT
from capture_agent.record.storage.manifest import CapturePoint
from capture_agent.record.storage.tables import TableTarget, read_rows, write_parquet
from capture_agent.record.worker.inputs import dumps, short_repr

MAX_STORED_VALUES = 100_000
VALUES_FILE = "values.parquet"


@dataclass
class OutputRun:
    """One action's output point and, when the action brought them to the driver, its values;
    ``node`` and ``redo`` say how to compute it again as plain PySpark (``capture.rerun``):
    ``redo`` applies the action to the plain RDD of ``node`` and returns its result records;
    a DataFrame's output has ``frame_redo`` instead."""

    point: CapturePoint
    values: list[Any] | None = None
    ids: list[int] = field(default_factory=list)
    node: Any = None
    redo: Redo | None = None
    frame_redo: Any = None  # a DataFrame output: deleted ({source: ids}) -> its rows again (frame_io.replayed)

    def value_map(self) -> dict[int, Any] | None:
        if self.values is None:
            return None
        return dict(zip(self.ids, self.values, strict=True))


def dense_ids(part_rows: dict[int, int]) -> list[int]:
    """Ids of the records of dense tables (row i of partition p is record p << 32 | i), in order."""
    return [(p << SHIFT) | i for p in sorted(part_rows) for i in range(part_rows[p])]


def trim_partitions(store: StoreFS, target: TableTarget, point: CapturePoint, keep: int) -> None:
    """After take(): keeps only the first ``keep`` output rows (in partition order)."""
    part_rows = point.partition_rows(store)
    left = keep
    for part in sorted(part_rows):
        rows = part_rows[part]
        path = point.table_path(part)
        if left >= rows:
            left -= rows
            continue
        table = read_rows(store, path, ["out_id", "in_id"]).slice(0, left)
        store.delete_file(path)
        if left > 0:
            target.write(part, {name: table.column(name) for name in table.column_names})
        left = 0


def store_values(store: StoreFS, point: CapturePoint, ids: list[int], values: list[Any]) -> None:
    """Keeps an action's result records next to its table, for traces from other processes."""
    import pyarrow as pa

    if len(values) > MAX_STORED_VALUES:
        return
    buffer = io.BytesIO()
    write_parquet(buffer, {"out_id": pa.array(ids, type=pa.int64()),
                           "value": pa.array([dumps(v) for v in values], type=pa.binary()),
                           "text": pa.array([short_repr(v) for v in values], type=pa.string())})
    store.make_dirs(point.location)
    store.write_bytes(f"{point.location}/{VALUES_FILE}", buffer.getvalue())
    point.values_file = VALUES_FILE
