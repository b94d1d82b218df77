"""Traces asked as data, as the server's trace worker asks them: a selection, a direction, a target.

    session = LineageRun(run_dir).session
    start = select(session, "0007-output-collect", predicate={"field": 0, "op": "equals", "value": "error"})
    answer = walk(session, start, "backward", "end", progress=report)

A selection is a frontier ({capture id: ids}): given ids, every record of a point, or the records
of a point whose values pass a declarative filter (``worker.predicates``). ``walk`` steps through
capture points as ``TraceEngine.back_all`` / ``next_all`` do, towards a target: ``"end"`` (the
job's inputs backward, its outputs forward), ``"step"`` (one capture point), or a capture id. It
reports progress after each point (the callback may raise ``TraceCancelled``), keeps the records
it crossed at every point, and, for small traces, the record-level edges between them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pyroaring import BitMap64

from capture_agent.record.errors import LineageError
from capture_agent.record.query.engine import Frontier
from capture_agent.record.query.session import TraceSession
from capture_agent.record.worker.predicates import check_fields, compile_filter

DIRECTIONS = ("backward", "forward")
END, STEP = "end", "step"
EDGE_LIMIT = 300  # record-level edges are kept for traces crossing at most this many records

Progress = Callable[[int, int, int], None]  # (capture points done, points in all, records found so far)
Edge = tuple[str, int, str, int]  # (parent point, parent id, child point, child id)


class TraceCancelled(LineageError):
    """Raised by a progress callback to stop a trace between capture points."""


@dataclass
class TraceAnswer:
    """What a walk found: records at its target points, and every record it crossed on the way."""

    result: Frontier
    crossed: Frontier
    edges: list[Edge] | None = None
    spark_jobs: int = 0
    spark_seconds: float = 0.0
    visited: list[str] = field(default_factory=list)  # capture ids, in the order walked

    @property
    def count(self) -> int:
        return sum(len(ids) for ids in self.result.values())


def select(session: TraceSession, capture_id: str, ids: list[int] | None = None,
           predicate: Mapping[str, Any] | None = None) -> Frontier:
    """Records at one capture point: ``ids`` (every record when None), kept only if their values
    pass ``predicate`` (a filter's JSON; raises ``PredicateError`` when it is not valid, or names a
    column that a DataFrame source's records do not have).

    Raises:
        KeyError: no such capture point in the run.
        ValuesNotAvailable: a predicate on a point whose values are not kept.
    """
    point = session.store.point(capture_id)
    chosen = session.engine.all_ids(point) if ids is None else BitMap64(ids)
    if predicate is not None:
        test = compile_filter(predicate)
        fields = point.layout.record_fields()
        if fields is not None:
            check_fields(predicate, fields, capture_id)
        chosen = BitMap64([i for i, _ in session.values.values(point, chosen, test)])
    return {capture_id: chosen} if chosen else {}


def reachable(session: TraceSession, start: list[str], direction: str, target: str) -> bool:
    """Whether ``target`` (a capture id) lies ``direction`` of some point of ``start``."""
    store = session.store
    closure = store.ancestors if direction == "backward" else store.descendants
    return any(target in closure(cid) for cid in start)


def walk(session: TraceSession, frontier: Frontier, direction: str, target: str = END,
         progress: Progress | None = None, scope: set[str] | None = None) -> TraceAnswer:
    """Traces ``frontier`` ``direction`` to ``target``; ``scope`` bounds a forward walk.

    Raises:
        ValueError: an unknown direction, or a target capture point not on the way.
        IncompleteLineage: the walk needs tables their tasks could not write.
        TraceCancelled: raised by ``progress``.
    """
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be backward or forward, not {direction!r}")
    start = {cid: ids.copy() for cid, ids in frontier.items() if ids}
    if target not in (END, STEP):
        session.store.point(target)
        if not reachable(session, list(start), direction, target):
            raise ValueError(f"capture point {target} is not {'upstream' if direction == 'backward' else 'downstream'}"
                             " of the selected records")
    engine = session.engine
    jobs_before, seconds_before = engine.spark_jobs, engine.spark_seconds
    walker = _Walker(session, direction, target, scope, progress)
    answer = walker.one_step(start) if target == STEP else walker.all_the_way(start)
    answer.spark_jobs = engine.spark_jobs - jobs_before
    answer.spark_seconds = engine.spark_seconds - seconds_before
    if sum(len(ids) for ids in answer.crossed.values()) <= EDGE_LIMIT:
        answer.edges = record_edges(session, answer.crossed)
    return answer


class _Walker:
    """One walk's state: where it may go, and the records seen at each point."""

    def __init__(self, session: TraceSession, direction: str, target: str, scope: set[str] | None,
                 progress: Progress | None) -> None:
        self.session = session
        self.store = session.store
        self.engine = session.engine
        self.backward = direction == "backward"
        self.stop = target if target not in (END, STEP) else None
        self.scope = scope
        self.progress = progress
        # Points from which the stop can still be reached in this direction.
        if self.stop is None:
            self.allowed: set[str] | None = None
        else:
            self.allowed = self.store.descendants(self.stop) if self.backward else self.store.ancestors(self.stop)
        if scope is not None:
            self.allowed = scope if self.allowed is None else self.allowed & scope

    def _may_visit(self, cid: str) -> bool:
        return self.allowed is None or cid in self.allowed

    def _neighbours(self, cid: str) -> list[str]:
        if self.backward:
            return [p for p in self.store.point(cid).parents if self._may_visit(p)]
        return [c.capture_id for c in self.store.children(cid) if self._may_visit(c.capture_id)]

    def _plan(self, start: list[str]) -> set[str]:
        """Every point the walk may visit (for progress and the completeness check)."""
        seen: set[str] = set()
        todo = [cid for cid in start if self._may_visit(cid)]
        while todo:
            cid = todo.pop()
            if cid in seen:
                continue
            seen.add(cid)
            if cid != self.stop:
                todo.extend(self._neighbours(cid))
        return seen

    def _report(self, done: int, total: int, found: Frontier) -> None:
        if self.progress is not None:
            self.progress(done, total, sum(len(ids) for ids in found.values()))

    def _step(self, cid: str, ids: BitMap64) -> dict[str, BitMap64]:
        point = self.store.point(cid)
        if self.backward:
            return {p: i for p, i in self.engine.backward(point, ids).items() if self._may_visit(p)}
        out: dict[str, BitMap64] = {}
        for child in self._neighbours(cid):
            reached = self.engine.forward(self.store.point(child), cid, ids)
            if reached:
                out[child] = reached
        return out

    def _terminal(self, cid: str) -> bool:
        return cid == self.stop or (self.stop is None and not self._neighbours(cid))

    def all_the_way(self, start: Frontier) -> TraceAnswer:
        pending = {cid: ids for cid, ids in start.items() if self._may_visit(cid)}
        plan = self._plan(list(pending))
        self.engine.check_complete(plan)
        result: Frontier = {}
        crossed: Frontier = {}
        visited: list[str] = []
        self._report(0, len(plan), result)
        while pending:
            # Backward: children before parents (higher seq first); forward: the reverse. Every
            # contribution to a point arrives before it is taken, so each point is taken once.
            seq = {cid: self.store.point(cid).seq for cid in pending}
            cid = max(seq, key=seq.__getitem__) if self.backward else min(seq, key=seq.__getitem__)
            ids = pending.pop(cid)
            crossed.setdefault(cid, BitMap64()).__ior__(ids)
            visited.append(cid)
            if self._terminal(cid):
                result.setdefault(cid, BitMap64()).__ior__(ids)
            else:
                for nxt, reached in self._step(cid, ids).items():  # cid itself: records that start here
                    (result if nxt == cid else pending).setdefault(nxt, BitMap64()).__ior__(reached)
            self._report(len(visited), max(len(plan), len(visited)), result)
        return TraceAnswer(result, crossed, visited=visited)

    def one_step(self, start: Frontier) -> TraceAnswer:
        self.engine.check_complete(start)
        result: Frontier = {}
        crossed: Frontier = {cid: ids.copy() for cid, ids in start.items()}
        visited = sorted(start, key=lambda c: self.store.point(c).seq, reverse=self.backward)
        self._report(0, len(visited), result)
        for done, cid in enumerate(visited, 1):
            ids = start[cid]
            reached = self._step(cid, ids) if self._neighbours(cid) else {cid: ids}
            for nxt, found in reached.items():
                result.setdefault(nxt, BitMap64()).__ior__(found)
                crossed.setdefault(nxt, BitMap64()).__ior__(found)
            self._report(done, len(visited), result)
        return TraceAnswer(result, crossed, visited=visited)


def record_edges(session: TraceSession, crossed: Frontier) -> list[Edge]:
    """Which crossed record came from which (each crossed record's backward step, kept where it
    meets the crossed records of the parent): the record-level graph of a small trace."""
    edges: list[Edge] = []
    for cid, ids in crossed.items():
        point = session.store.point(cid)
        if not point.parents or not any(p in crossed for p in point.parents):
            continue
        for record_id in ids:
            for parent, parent_ids in session.engine.backward(point, BitMap64([record_id])).items():
                if parent == cid:
                    continue
                kept = parent_ids & crossed.get(parent, BitMap64())
                edges.extend((parent, pid, cid, record_id) for pid in kept)
    return edges
