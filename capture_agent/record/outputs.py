"""Output capture points: what an action returned, and which records it came from."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from capture_agent.record import _runtime as rt
from capture_agent.record.ids import SHIFT
from capture_agent.record.store import CapturePoint

if TYPE_CHECKING:
    from capture_agent.record.context import LineageContext

MAX_STORED_VALUES = 100_000


@dataclass
class OutputRun:
    """One action's output point and, when the action brought them to the driver, its values."""

    point: CapturePoint
    values: list[Any] | None = None
    ids: list[int] = field(default_factory=list)

    def value_map(self) -> dict[int, Any]:
        if self.values is None:
            return {}
        return dict(zip(self.ids, self.values, strict=True))


def dense_ids(part_rows: dict[int, int]) -> list[int]:
    """Ids of the records of dense tables (row i of partition p is record p << 32 | i), in order."""
    return [(p << SHIFT) | i for p in sorted(part_rows) for i in range(part_rows[p])]


def trim_partitions(lc: LineageContext, point: CapturePoint, keep: int) -> None:
    """After take(): keeps only the first ``keep`` output rows (in partition order)."""
    import pyarrow.parquet as pq

    part_rows = lc.store.partition_rows(point)
    left = keep
    for part in sorted(part_rows):
        rows = part_rows[part]
        path = point.table_file(part)
        if left >= rows:
            left -= rows
            continue
        table = pq.read_table(path).slice(0, left)
        os.unlink(path)
        if left > 0:
            rt.write_table(point.location, part, {name: table.column(name) for name in table.column_names})
        left = 0


def write_driver_table(point: CapturePoint, columns: dict[str, Any]) -> None:
    """An output computed on the driver (top, takeOrdered, countByValue) as partition 0."""
    rt.write_table(point.location, 0, columns)


def store_values(point: CapturePoint, ids: list[int], values: list[Any]) -> None:
    """Keeps an action's result records next to its table, for traces from other processes."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if len(values) > MAX_STORED_VALUES:
        return
    os.makedirs(point.location, exist_ok=True)
    table = pa.table({"out_id": pa.array(ids, type=pa.int64()),
                      "value": pa.array([rt._dumps(v) for v in values], type=pa.binary()),
                      "text": pa.array([rt._short_repr(v) for v in values], type=pa.string())})
    pq.write_table(table, os.path.join(point.location, "values.parquet"))
    point.extra["values"] = "values.parquet"
