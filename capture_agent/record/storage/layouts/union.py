"""The union layout: no table, the parents' partitions side by side.

Partition ``first + k`` of a union is partition ``k`` of the parent whose range starts at
``first``; a record keeps its position. Values come from the parents.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pyroaring import BitMap64

from capture_agent.record.storage.fs import StoreFS
from capture_agent.record.storage.ids import SHIFT, lift, split_by_partition
from capture_agent.record.storage.layouts.base import CapturePoint, Layout, Predicate, StepContext, ValueContext


@dataclass
class Union(Layout):
    """union of RDDs that are not co-partitioned (a virtual capture point)."""

    name: ClassVar[str] = "union"
    virtual: ClassVar[bool] = True

    ranges: list[list[int]] = field(default_factory=list)  # [parent index, first partition, count]

    def _parent_of(self, point: CapturePoint, part: int) -> tuple[str, int]:
        for parent_index, first, count in self.ranges:
            if first <= part < first + count:
                return point.parents[parent_index], part - first
        raise KeyError(f"partition {part} is outside union {point.capture_id}")

    def backward(self, ctx: StepContext, point: CapturePoint, ids: BitMap64) -> dict[str, BitMap64]:
        result: dict[str, BitMap64] = {}
        for part, positions in split_by_partition(ids):
            parent, local_part = self._parent_of(point, part)
            result.setdefault(parent, BitMap64()).__ior__(lift(local_part, positions))
        return result

    def forward(self, ctx: StepContext, child: CapturePoint, parent_id: str, ids: BitMap64) -> BitMap64:
        slots = [i for i, p in enumerate(child.parents) if p == parent_id]
        out = BitMap64()
        for parent_index, first, count in self.ranges:
            if parent_index in slots:
                for part, positions in split_by_partition(ids):
                    if part < count:
                        out |= lift(first + part, positions)
        return out

    def associations(self, store: StoreFS, point: CapturePoint,
                     lookup: Callable[[str], CapturePoint]) -> Iterator[tuple[Any, list[Any]]]:
        """Record (first + k, i) of the union is record (k, i) of its parent: one slot per parent."""
        import pyarrow as pa

        nparents = len(point.parents)
        for parent_index, first, count in self.ranges:
            parent_rows = lookup(point.parents[parent_index]).partition_rows(store)
            for part in range(first, first + count):
                rows = parent_rows.get(part - first, 0)
                out = pa.array([(part << SHIFT) + i for i in range(rows)], pa.int64())
                inputs = pa.array([[((part - first) << SHIFT) + i] for i in range(rows)], pa.list_(pa.int64()))
                empty = pa.array([[] for _ in range(rows)], pa.list_(pa.int64()))
                yield out, [inputs if slot == parent_index else empty for slot in range(nparents)]

    def all_ids(self, store: StoreFS, point: CapturePoint) -> BitMap64:
        raise ValueError(f"cannot enumerate the records of {point.capture_id} from its table")

    def in_parents(self, point: CapturePoint, ids: BitMap64) -> list[tuple[str, BitMap64, int]]:
        """(parent, its ids, first partition) for the ids of a union."""
        out = []
        for parent_index, first, count in self.ranges:
            picked = BitMap64()
            for part, positions in split_by_partition(ids):
                if first <= part < first + count:
                    picked |= lift(part - first, positions)
            if picked:
                out.append((point.parents[parent_index], picked, first))
        return out

    def values(self, ctx: ValueContext, point: CapturePoint, ids: BitMap64,
               predicate: Predicate) -> list[tuple[int, Any]] | None:
        """A union's records are its parents' records, renumbered."""
        out: list[tuple[int, Any]] = []
        for parent, picked, first in self.in_parents(point, ids):
            out.extend((shift(record_id, first), value)
                       for record_id, value in ctx.values(ctx.point(parent), picked, predicate))
        out.sort(key=lambda t: t[0])
        return out


def shift(record_id: int, first: int) -> int:
    """A parent's record id as the union's."""
    return record_id + (first << SHIFT)
