"""What-if deletion: what becomes of a run's records if some of its records had not been there.

Lipstick's deletion propagation (section 4.2 of the Lipstick paper, Definition 4.2) over the
record-level lineage, capture point by capture point in the order they were computed. A point's
records meet the deletion through the ids of their inputs at each parent slot; each point's
deletion rule (``storage.deletion``, derived from its layout and kind) decides from how many of a
record's inputs per slot are deleted, and how many it has, whether it is deleted, changed or
unchanged. A record with an input that survives with another value is changed (unless the rule
deletes it). Counting runs per partition table, as trace steps do (``Layout.counts``: here, or as
a Spark job for big steps).

This is what lineage alone decides (``Impact.dead``, ``reached``, ``unreached``): dead records
disappear whatever the functions do; reached ones are those whose inputs were deleted or changed.
Their new values, and records that change or appear only because a changed value moves to another
key of a later group or join (which no lineage of the original run reaches), need the job run
again without the deleted records (``capture.rerun``; from kept aggregates and on the touched
keys only where it can, ``query.delta``); ``classify`` then matches the new output with the old one
(``Impact.deleted``, ``changed``, ``unchanged``, ``appeared``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pyroaring import BitMap64

from capture_agent.record.errors import NotCaptured, ReplayNotPossible
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


def _merged(tables: list[RowCounts], nslots: int) -> dict[int, tuple[Sequence[int], Sequence[int], bool]]:
    """Counts per out id over the tables read (a one-result layout's rows add up)."""
    out: dict[int, tuple[Sequence[int], Sequence[int], bool]] = {}
    for t in tables:
        # per row, its counts at each slot (a tuple each, built by zip rather than a list per row)
        rows = zip(t.out_ids, zip(*t.lost[:nslots], strict=True), zip(*t.total[:nslots], strict=True), t.changed,
                   strict=True)
        for out_id, lost, total, moved in rows:
            seen = out.get(out_id)
            if seen is None:
                out[out_id] = (lost, total, moved)
            else:
                out[out_id] = ([a + b for a, b in zip(seen[0], lost, strict=True)],
                               [a + b for a, b in zip(seen[1], total, strict=True)], seen[2] or moved)
    return out


class Propagation:
    """Propagates a deletion through one run's capture points."""

    def __init__(self, engine: TraceEngine) -> None:
        self.engine = engine

    def run(self, deleted: Frontier, scope: set[str] | None = None,
            progress: Callable[[int, int, int], None] | None = None) -> dict[str, PointFates]:
        """The fates of every record a deletion reaches: ``deleted`` ({capture id: ids}) at the
        points it names, and through every point computed from them (within ``scope``);
        ``progress(points done, points in all, records reached)`` after each point (it may raise
        to stop)."""
        store = self.engine.store
        fates = {cid: PointFates(cid, deleted=ids.copy()) for cid, ids in deleted.items() if ids}
        reached: set[str] = set()
        for cid in fates:
            reached |= store.descendants(cid)
        if scope is not None:
            reached &= scope
        self.engine.check_complete(reached)
        todo = sorted((store.point(c) for c in reached - set(fates)), key=lambda p: p.seq)
        for done, point in enumerate(todo, start=1):
            found = self.step(point, fates)
            if found:
                fates[point.capture_id] = found
            if progress is not None:
                progress(done, len(todo), sum(len(f.deleted) + len(f.changed) for f in fates.values()))
        return fates

    def step(self, point: CapturePoint, fates: dict[str, PointFates]) -> PointFates:
        """The fates at ``point`` given its parents' fates."""
        empty = PointFates("")
        parents = [fates.get(p, empty) for p in point.parents]
        out = PointFates(point.capture_id)
        if not any(parents):
            return out
        layout = point.layout
        if layout.virtual or point.kind == "input":
            # a union's records are its parents' records; an input's parents are the earlier
            # outputs whose files it reads: its records are theirs, read back
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


def _canonical(value: Any) -> Any:
    """A hashable stand-in for a value, equal for equal values (lists and dicts by their repr)."""
    try:
        hash(value)
    except TypeError:
        return ("repr", repr(value))
    return ("value", value)


def _key(value: Any) -> Any:
    """The key of a (key, value) record, when it is one with a hashable key (else None)."""
    if isinstance(value, tuple) and len(value) == 2:
        try:
            hash(value[0])
        except TypeError:
            return None
        return ("key", value[0])
    return None


@dataclass
class Classes:
    """An output's records by fate, exactly: ``deleted + [old for old, _ in changed] + unchanged``
    is the original output and ``unchanged + [new for _, new in changed] + appeared`` the output
    without the deleted records (as multisets). ``ids`` holds the output record id of each deleted,
    changed and unchanged record (in the same order as its list)."""

    deleted: list[Any]
    changed: list[tuple[Any, Any]]
    unchanged: list[Any]
    appeared: list[Any]
    ids: dict[str, list[int]] = field(default_factory=dict)


def classify(old: list[tuple[int, Any]], dead: BitMap64, reached: BitMap64, new: list[Any],
             single: bool = False, key_fields: list[str] | None = None) -> Classes:
    """Matches an output's records (``old``: (id, value)) with the output computed again
    (``new``). A record keeps its place when its value is still there (unreached records first,
    then ``reached``, then ``dead`` ones). What is left is paired by key ((key, value) records
    with hashable keys: changed), records lineage keeps first, then the ones it deletes (a group
    whose every record is deleted while other records move into its key has changed); a
    one-result output (``single``) pairs its one record with the new one; ``key_fields`` (a
    DataFrame aggregate's group columns) pair Rows by those fields instead. Left over: deleted on
    the old side, appeared on the new."""
    key_of = _key if key_fields is None else (lambda row: ("key", tuple(row[f] for f in key_fields)))
    pending: dict[Any, list[Any]] = {}
    for value in new:
        pending.setdefault(_canonical(value), []).append(value)
    unchanged: list[tuple[int, Any]] = []
    left: list[tuple[int, Any]] = []
    # unreached first, then reached, then dead: an equal record of the new output takes the place
    # of a dead one (take(n) of equal values, a group rebuilt with the same members)
    in_order = sorted(old, key=lambda t: 2 if t[0] in dead else 1 if t[0] in reached else 0)
    for record_id, value in in_order:
        same = pending.get(_canonical(value))
        if same:
            unchanged.append((record_id, same.pop()))
        else:
            left.append((record_id, value))
    rest = [v for values in pending.values() for v in values]
    by_key: dict[Any, list[int]] = {}
    for n, value in enumerate(rest):
        key = key_of(value)
        if key is not None:
            by_key.setdefault(key, []).append(n)
    changed: list[tuple[int, tuple[Any, Any]]] = []
    deleted: list[tuple[int, Any]] = []
    paired: set[int] = set()
    for record_id, value in left:
        key = key_of(value)
        partners = by_key.get(key) if key is not None else None
        if partners:
            n = partners.pop()
            changed.append((record_id, (value, rest[n])))
            paired.add(n)
        else:
            deleted.append((record_id, value))
    appeared = [v for n, v in enumerate(rest) if n not in paired]
    if single and len(deleted) == 1 and len(appeared) == 1 and not changed and not unchanged:
        changed, deleted, appeared = [(deleted[0][0], (deleted[0][1], appeared[0]))], [], []
    return Classes([v for _, v in deleted], [pair for _, pair in changed], [v for _, v in unchanged], appeared,
                   {"deleted": [i for i, _ in deleted], "changed": [i for i, _ in changed],
                    "unchanged": [i for i, _ in unchanged]})


class Impact:
    """What deleting some records does to a target point (an action's output, by default the
    last one computed from them).

    Lineage alone (``dead``, ``reached``, ``unreached``, ``counts``, the ids): which records die, which
    are reached by the deletion, the fates at every point on the way. Exactly, by replaying the
    job without the deleted records (``deleted``, ``changed``, ``unchanged``, ``appeared``): in
    the process that ran the job, or from the job kept in the run's folder (``stored_job``);
    ``ReplayNotPossible`` says why not where neither can."""

    def __init__(self, session: TraceSession, fates: dict[str, PointFates], target: str,
                 seeds: Frontier | None = None) -> None:
        self.session = session
        self.fates = fates
        self.target = target
        self.seeds = seeds if seeds is not None else {}
        self._classes: Classes | None = None
        self._replay: dict[str, Any] = {}

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

    def dead(self) -> list[Any]:
        """The target's records that lineage alone says die (every input of theirs deleted, by
        their point's rule); with replay they are in ``deleted()`` too."""
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

    # ------------------------------------------------------------------ exact, by replay
    def classes(self) -> Classes:
        """The four classes (computed once, by rerunning the job without the deleted records)."""
        if self._classes is None:
            if self.session.rerun is None:
                raise ReplayNotPossible("the job cannot be replayed here: a run opened from its folder replays "
                                        "the job kept there only given a SparkContext; without one, the what-if "
                                        "gives the fates lineage decides (dead, reached, unreached, counts)")
            point, fates = self._at()
            # an input reading what an earlier action of the run wrote loses the records the
            # deletion reached there: a replay reads that input, not the first one
            store = self.session.store
            reached = {cid: f.deleted for cid, f in self.fates.items()
                       if f.deleted and cid not in self.seeds and store.point(cid).kind == "input"}
            dead = {cid: f.deleted for cid, f in self.fates.items() if f.deleted}
            new = self.session.rerun(self.target, {**self.seeds, **reached}, dead)
            self._replay = self.session.report() if self.session.report is not None else {}
            old = self.session.values.values(point, self.session.engine.all_ids(point))
            self._classes = classify(old, fates.deleted, fates.changed, new, single=point.layout.keep_all_rows,
                                     key_fields=getattr(point.layout, "keys", None))
        return self._classes

    def replay(self) -> dict[str, Any]:
        """How the new output was computed (after ``classes``): ``how`` (a sentence of
        ``stored_job``), ``keys_replayed`` ({"op #node": keys} per combine and later shuffle that a
        key-restricted replay ran on those keys only), ``stages_in_full`` (the later shuffles it
        needed whole) and ``stage_paths`` ({"op #node": how that stage was computed, a
        ``stage_paths`` name})."""
        self.classes()
        return dict(self._replay)

    def deleted(self) -> list[Any]:
        """Output records that would disappear."""
        return self.classes().deleted

    def changed(self) -> list[tuple[Any, Any]]:
        """(old, new) of the output records that survive with another value."""
        return self.classes().changed

    def unchanged(self) -> list[Any]:
        """The rest of the original output."""
        return self.classes().unchanged

    def appeared(self) -> list[Any]:
        """Outputs that exist only without the deleted records."""
        return self.classes().appeared


def what_if_deleted(session: TraceSession, deleted: Frontier, target: str | None = None,
                    progress: Callable[[int, int, int], None] | None = None) -> Impact:
    """Propagates ``deleted`` through a run (``Propagation``) up to ``target``: a capture id, or
    the output of the last action computed from the deleted records."""
    store = session.store
    if target is None:
        reached = set().union(*(store.descendants(cid) for cid in deleted))
        outputs = [store.point(c) for c in reached if store.point(c).kind == "output"]
        if not outputs:
            raise NotCaptured("no action's output was computed from these records: run an action first, "
                              "or name a target")
        target = max(outputs, key=lambda p: p.seq).capture_id
    fates = Propagation(session.engine).run(deleted, scope=store.ancestors(target), progress=progress)
    return Impact(session, fates, target, deleted)
