"""What-if deletion: what becomes of a run's records if some of its records had not been there.

Lipstick's deletion propagation (section 4.2 of the Lipstick paper, Definition 4.2) over the
record-level lineage, capture point by capture point in the order they were computed. A point's
records meet the deletion through the ids of their inputs at each parent slot; each point's
deletion rule (``storage.deletion``, derived from its layout and kind) decides from how many of a
record's inputs per slot are deleted, and how many it has, whether it is deleted, changed or
unchanged. A record with an input that survives with another value is changed (unless the rule
deletes it). Counting runs per partition table, as trace steps do (``Layout.counts``: here, or as
a Spark job for big steps).

This is what lineage alone decides: ``deleted`` records disappear whatever the functions do.
``changed`` records are the ones whose inputs changed; their new values, and records that change
or appear only because a changed value moves to another key of a later group or join (which no
lineage of the original run reaches), need the job's functions replayed on the surviving inputs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pyroaring import BitMap64

from capture_agent.record.errors import NotCaptured
from capture_agent.record.query.engine import Frontier, TraceEngine
from capture_agent.record.query.session import TraceSession
from capture_agent.record.storage.deletion import Fate
from capture_agent.record.storage.layouts.counts import RowCounts
from capture_agent.record.storage.manifest import CapturePoint


@dataclass
class PointFates:
    """The records of one capture point that a deletion reaches, by fate."""

    capture_id: str
    deleted: BitMap64 = field(default_factory=BitMap64)
    changed: BitMap64 = field(default_factory=BitMap64)

    def __bool__(self) -> bool:
        return bool(self.deleted) or bool(self.changed)


def _merged(tables: list[RowCounts], nslots: int) -> dict[int, tuple[list[int], list[int], bool]]:
    """Counts per out id over the tables read (a one-result layout's rows add up)."""
    out: dict[int, tuple[list[int], list[int], bool]] = {}
    for t in tables:
        for row, out_id in enumerate(t.out_ids):
            lost = [t.lost[s][row] for s in range(nslots)]
            total = [t.total[s][row] for s in range(nslots)]
            seen = out.get(out_id)
            if seen is None:
                out[out_id] = (lost, total, t.changed[row])
            else:
                out[out_id] = ([a + b for a, b in zip(seen[0], lost, strict=True)],
                               [a + b for a, b in zip(seen[1], total, strict=True)], seen[2] or t.changed[row])
    return out


class Propagation:
    """Propagates a deletion through one run's capture points."""

    def __init__(self, engine: TraceEngine) -> None:
        self.engine = engine

    def run(self, deleted: Frontier, scope: set[str] | None = None) -> dict[str, PointFates]:
        """The fates of every record a deletion reaches: ``deleted`` ({capture id: ids}) at the
        points it names, and through every point computed from them (within ``scope``)."""
        store = self.engine.store
        fates = {cid: PointFates(cid, deleted=ids.copy()) for cid, ids in deleted.items() if ids}
        reached: set[str] = set()
        for cid in fates:
            reached |= store.descendants(cid)
        if scope is not None:
            reached &= scope
        self.engine.check_complete(reached)
        for point in sorted((store.point(c) for c in reached - set(fates)), key=lambda p: p.seq):
            found = self.step(point, fates)
            if found:
                fates[point.capture_id] = found
        return fates

    def step(self, point: CapturePoint, fates: dict[str, PointFates]) -> PointFates:
        """The fates at ``point`` given its parents' fates."""
        empty = PointFates("")
        parents = [fates.get(p, empty) for p in point.parents]
        out = PointFates(point.capture_id)
        if not any(parents):
            return out
        layout = point.layout
        if layout.virtual:  # a union: its records are its parents' records
            for parent_id, parent in zip(point.parents, parents, strict=True):
                if parent:
                    out.deleted |= layout.forward(self.engine, point, parent_id, parent.deleted)
                    out.changed |= layout.forward(self.engine, point, parent_id, parent.changed)
            out.changed -= out.deleted
            return out
        nslots = layout.slots(len(point.parents))
        tables = layout.counts(self.engine, point, [p.deleted for p in parents], [p.changed for p in parents])
        rule = point.deletion
        for out_id, (lost, total, moved) in _merged(tables, nslots).items():
            fate = rule.fate(lost, total)
            if fate is Fate.DELETED:
                out.deleted.add(out_id)
            elif fate is Fate.CHANGED or moved:
                out.changed.add(out_id)
        return out


class Impact:
    """What deleting some records does to a target point (an action's output, by default the
    last one computed from them): which of its records die, which are reached with surviving
    inputs, which the deletion does not reach, and the fates at every point on the way."""

    def __init__(self, session: TraceSession, fates: dict[str, PointFates], target: str) -> None:
        self.session = session
        self.fates = fates
        self.target = target

    def _at(self, capture_id: str | None = None) -> tuple[CapturePoint, PointFates]:
        cid = capture_id or self.target
        return self.session.store.point(cid), self.fates.get(cid, PointFates(cid))

    def deleted_ids(self, capture_id: str | None = None) -> BitMap64:
        return self._at(capture_id)[1].deleted

    def changed_ids(self, capture_id: str | None = None) -> BitMap64:
        return self._at(capture_id)[1].changed

    def unchanged_ids(self, capture_id: str | None = None) -> BitMap64:
        point, fates = self._at(capture_id)
        return self.session.engine.all_ids(point) - fates.deleted - fates.changed

    def _values(self, ids: BitMap64) -> list[Any]:
        return [v for _, v in self.session.values.values(self._at()[0], ids)]

    def deleted(self) -> list[Any]:
        """The target's records that would disappear (their values, by id)."""
        return self._values(self.deleted_ids())

    def reached(self) -> list[Any]:
        """The current values of the target's records that survive with deleted or changed inputs."""
        return self._values(self.changed_ids())

    def unreached(self) -> list[Any]:
        """The target's records whose lineage holds no deleted or changed record."""
        return self._values(self.unchanged_ids())

    def counts(self) -> dict[str, dict[str, int]]:
        """Per capture point the deletion reached: how many of its records are deleted and changed."""
        return {cid: {"deleted": len(f.deleted), "changed": len(f.changed)} for cid, f in self.fates.items()}


def what_if_deleted(session: TraceSession, deleted: Frontier, target: str | None = None) -> Impact:
    """Propagates ``deleted`` through a run (``Propagation``) up to ``target``: a capture id, or
    the output of the last action computed from the deleted records."""
    store = session.store
    reached: set[str] = set()
    for cid in deleted:
        reached |= store.descendants(cid)
    if target is None:
        outputs = [store.point(c) for c in reached if store.point(c).kind == "output"]
        if not outputs:
            raise NotCaptured("no action's output was computed from these records: run an action first, "
                              "or name a target")
        target = max(outputs, key=lambda p: p.seq).capture_id
    scope = store.ancestors(target) & reached
    return Impact(session, Propagation(session.engine).run(deleted, scope), target)
