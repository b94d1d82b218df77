"""A captured window's running frame: ``frame_prefix``.

| layout | columns | meaning | deletion |
|---|---|---|---|
| frame_prefix | out_id (int64: a place), in_ids_0..n (list<int64>, or BitMap64) | its row's own ids | + (up to it) |

A window whose every value is computed from its partition's rows up to the row (a running sum, a
rank) is tapped a place a row (``java/lineage/sql/TapPrefix.java``): the place's id holds the
partition's hash in its top 39 bits and the place (from 1) in its low ``PLACE_BITS``; the tables
are ``frame_groups``' (one per window task, a row per place with that row's own ids). A windowed
row's id is the last place its frame took in, and its inputs are the inputs of every place of its
partition up to that one: a step backward reads the places up to each wanted one, a step forward
gives every place from the first one the ids reach to the partition's end, and deletion counts add
up over a place's prefix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from pyroaring import BitMap64

from capture_agent.record.storage.layouts.base import CapturePoint, StepContext
from capture_agent.record.storage.layouts.counts import RowCounts
from capture_agent.record.storage.layouts.groups import FrameGroups

PLACE_BITS = 24  # as TapPrefix.PLACE_BITS
PLACES = (1 << PLACE_BITS) - 1


def _ends(ids: BitMap64, last: bool) -> dict[int, int]:
    """Per partition (an id without its place) of ``ids``: its last place's id (``last``), else its first."""
    import numpy as np

    values = np.frombuffer(ids.to_array(), dtype=np.uint64)
    bases = values & np.uint64(~PLACES & (2**64 - 1))
    starts = np.flatnonzero(np.r_[True, bases[1:] != bases[:-1]])  # ids ascend: a partition's run
    at = np.r_[starts[1:] - 1, len(values) - 1] if last else starts
    return dict(zip(bases[starts].tolist(), values[at].tolist(), strict=True))


def up_to(ids: BitMap64) -> BitMap64:
    """The places of each partition of ``ids`` up to its last place there."""
    out = BitMap64()
    for base, last in _ends(ids, last=True).items():
        out.add_range(base + 1, last + 1)
    return out


def from_on(ids: BitMap64) -> BitMap64:
    """The places of each partition of ``ids`` from its first place there to the partition's end."""
    out = BitMap64()
    for base, first in _ends(ids, last=False).items():
        out.add_range(first, base + PLACES + 1)
    return out


@dataclass
class FramePrefix(FrameGroups):
    """One table per task of a window over a running frame: place <- its row's ids per source."""

    name: ClassVar[str] = "frame_prefix"

    def backward(self, ctx: StepContext, point: CapturePoint, ids: BitMap64) -> dict[str, BitMap64]:
        return super().backward(ctx, point, up_to(ids) if ids else ids)

    def reached(self, groups: BitMap64, out_ids: Any) -> BitMap64:
        """The places of the table from the first one reached on in each partition: a partition's
        places are all in one table (one window task computes each partition)."""
        return from_on(groups) & BitMap64(out_ids.to_numpy()) if groups else groups

    def counts(self, ctx: StepContext, point: CapturePoint, lost: list[BitMap64],
               changed: list[BitMap64]) -> list[RowCounts]:
        """A place's counts are those of its partition's places up to it: the places the deletion
        reaches (``forward``: from the first it meets on), over the rows up to the last of them."""
        hit = self.hit(ctx, point, lost, changed)
        if not hit:
            return []
        return [_running(self.counts_of(ctx, point, up_to(hit), lost, changed), hit, len(point.parents))]


def _running(tables: list[RowCounts], wanted: BitMap64, nslots: int) -> RowCounts:
    """The places of ``wanted`` with the counts of their partition's places up to them summed
    (``tables``: each place's own counts, over one table or more)."""
    own: dict[int, tuple[list[int], list[int], bool]] = {}
    for table in tables:
        for i, out_id in enumerate(table.out_ids):
            lost, total, changed = own.get(out_id, ([0] * nslots, [0] * nslots, False))
            own[out_id] = ([a + t[i] for a, t in zip(lost, table.lost, strict=True)],
                           [a + t[i] for a, t in zip(total, table.total, strict=True)],
                           changed or table.changed[i])
    out = RowCounts([], [[] for _ in range(nslots)], [[] for _ in range(nslots)], [])
    base, lost_sum, total_sum, any_changed = -1, [0] * nslots, [0] * nslots, False
    for out_id in sorted(own):
        if out_id & ~PLACES != base:
            base, lost_sum, total_sum, any_changed = out_id & ~PLACES, [0] * nslots, [0] * nslots, False
        lost, total, changed = own[out_id]
        lost_sum = [a + b for a, b in zip(lost_sum, lost, strict=True)]
        total_sum = [a + b for a, b in zip(total_sum, total, strict=True)]
        any_changed = any_changed or changed
        if out_id in wanted:
            out.out_ids.append(out_id)
            for s in range(nslots):
                out.lost[s].append(lost_sum[s])
                out.total[s].append(total_sum[s])
            out.changed.append(any_changed)
    return out

