"""Record-level diff of two runs of one job: which outputs were added, removed, changed or kept,
and, for one output, the input records that explain it.

    old, new = LineageRun(old_dir, sc), LineageRun(new_dir, sc)
    diff = RunDiff(old, new, "0008-output-collect")
    diff.outputs()                    # every output key with its fate, old and new records
    diff.explain(key)                 # input records in its lineage in one run only, and the check

The two runs are of the same job: their capture points match by capture id (sequence, kind and
operation, the code identity ``same_job`` compares). Outputs match by key: a DataFrame
aggregate's group columns (or the columns asked for), an RDD pair's key, else the whole record.
Input records have other ids in each run; they match by their input point and their content, as
multisets (an edited line is one removed and one added record). For a numeric output the
explanation adds up when the change equals what the added records contribute less what the
removed ones did: each contribution is the job's kept functions replayed (``stored_job``) on those
records alone, the inputs that did not change read whole.
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pyroaring import BitMap64

from capture_agent.record.errors import ReplayNotPossible
from capture_agent.record.query.engine import Frontier
from capture_agent.record.query.multisets import canonical
from capture_agent.record.query.run import LineageRun
from capture_agent.record.query.stored_job import Build
from capture_agent.record.storage.manifest import CapturePoint

FATES = ("added", "removed", "changed", "unchanged")
T = TypeVar("T")
U = TypeVar("U")
Found = tuple[str, int, Any]  # an input record in an output's lineage: (input capture id, record id, value)
GIVEN_SOURCES = ("textFile", "parallelize")  # inputs whose records a replay can be given as values


class NotSameJob(ValueError):
    """The two runs are not runs of one job (their capture points differ)."""


def code_identity(run: LineageRun) -> list[tuple[str, str, str, tuple[str, ...]]]:
    """What makes two runs runs of one job: each capture point's id, kind, operation and parents."""
    return [(p.capture_id, p.kind, p.op, tuple(p.parents)) for p in run.capture_points()]


def same_job(old: LineageRun, new: LineageRun) -> None:
    """Raises NotSameJob naming the first capture point where the runs differ."""
    a, b = code_identity(old), code_identity(new)
    for x, y in zip(a, b, strict=False):
        if x != y:
            raise NotSameJob(f"the runs differ at capture point {x[0]} ({x[1]} {x[2]}) against {y[0]} ({y[1]} {y[2]})")
    if len(a) != len(b):
        raise NotSameJob(f"one run has {len(a)} capture points, the other {len(b)}")


def key_fields_of(point: CapturePoint, asked: list[str] | None) -> list[str] | None:
    """The columns an output's records match by: those asked, else a DataFrame aggregate's groups."""
    if asked:
        return list(asked)
    return getattr(point.layout, "keys", None)


def key_of(value: Any, fields: list[str] | None) -> Any:
    """An output record's key: its ``fields`` (a Row's), an RDD pair's key, else the whole record."""
    if fields is not None:
        return tuple(value[f] for f in fields)
    if isinstance(value, tuple) and len(value) == 2 and not hasattr(value, "__fields__"):
        try:
            hash(value[0])
            return value[0]
        except TypeError:
            pass
    return canonical(value)


def numbers_of(value: Any, fields: list[str] | None) -> dict[str, float] | None:
    """The numeric part of an output record (a pair's value, a Row's non-key numeric columns), or None."""
    if fields is not None and hasattr(value, "asDict"):
        found = {k: v for k, v in value.asDict().items() if k not in fields and _number(v)}
        return found or None
    if isinstance(value, tuple) and len(value) == 2 and _number(value[1]):
        return {"value": value[1]}
    return None


def _same_records(old: list[tuple[int, Any]], new: list[tuple[int, Any]]) -> bool:
    """Whether two runs' records at one key hold the same values, as multisets (one each: compared as they are)."""
    if len(old) == len(new) == 1:
        return bool(canonical(old[0][1]) == canonical(new[0][1]))
    return Counter(canonical(v) for _, v in old) == Counter(canonical(v) for _, v in new)


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


@dataclass
class OutputDiff:
    """One output key: its fate and its records ((id, value)) in the old and the new run."""

    key: Any
    fate: str
    old: list[tuple[int, Any]]
    new: list[tuple[int, Any]]


@dataclass
class InputRecord:
    """An input record in one run's lineage of an output: where it is and what it holds."""

    capture_id: str
    record_id: int
    source: str
    offset: int
    value: Any


@dataclass
class AdditiveCheck:
    """Whether an output's change equals what the added inputs contribute less the removed ones'."""

    old: dict[str, float]
    new: dict[str, float]
    added: dict[str, float]  # the output at the key computed from the added records alone
    removed: dict[str, float]
    holds: bool


@dataclass
class Explanation:
    """The input records in one run's lineage of an output and not the other's, and the count shared."""

    added: list[InputRecord] = field(default_factory=list)
    removed: list[InputRecord] = field(default_factory=list)
    common: int = 0
    check: AdditiveCheck | None = None
    why_no_check: str = ""


def side_by_side(first: Callable[[], T], second: Callable[[], U], spark: bool) -> tuple[T, U]:
    """``first()`` in a thread of its own while this thread computes ``second()``: one run's walk
    or replay beside the other's (native reads and Spark jobs overlap). With ``spark`` the thread
    inherits this one's Spark job group and scheduler pool, so cancelling the group cancels its
    jobs too; this thread waits in short joins, where an interrupt reaches it."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = first()
        except BaseException as exc:  # noqa: BLE001 - raised again in the asking thread
            box["error"] = exc

    if spark:
        from pyspark import InheritableThread

        thread: threading.Thread = InheritableThread(run, daemon=True)
    else:
        thread = threading.Thread(target=run, daemon=True)
    thread.start()
    value = second()
    while thread.is_alive():
        thread.join(0.05)
    if "error" in box:
        raise box["error"]
    return box["value"], value


class RunDiff:
    """The diff of ``target`` (a capture id of both runs) between an old and a new run of one job."""

    def __init__(self, old: LineageRun, new: LineageRun, target: str, key_fields: list[str] | None = None) -> None:
        same_job(old, new)
        self.old, self.new, self.target = old, new, target
        point = new.store.point(target)
        if point.kind != "output":
            raise ValueError(f"{target} is not an action's output ({point.kind} of {point.op})")
        self.fields = key_fields_of(point, key_fields)
        self._outputs: dict[Any, OutputDiff] | None = None
        self._spark = new.session.sc is not None

    def _records(self, run: LineageRun) -> list[tuple[int, Any]]:
        point = run.store.point(self.target)
        return run.session.values.values(point, run.engine.all_ids(point))

    def outputs(self) -> list[OutputDiff]:
        """Every output key of either run with its fate (changed ones first, then added, removed, unchanged)."""
        order = {"changed": 0, "added": 1, "removed": 2, "unchanged": 3}
        return sorted(self._by_key().values(), key=lambda o: (order[o.fate], repr(o.key)))

    def _by_key(self) -> dict[Any, OutputDiff]:
        if self._outputs is None:
            found: dict[Any, OutputDiff] = {}
            for side, run in (("old", self.old), ("new", self.new)):
                for record_id, value in self._records(run):
                    key = key_of(value, self.fields)
                    entry = found.setdefault(key, OutputDiff(key, "", [], []))
                    getattr(entry, side).append((record_id, value))
            for entry in found.values():
                if not entry.old:
                    entry.fate = "added"
                elif not entry.new:
                    entry.fate = "removed"
                else:
                    entry.fate = "unchanged" if _same_records(entry.old, entry.new) else "changed"
            self._outputs = found
        return self._outputs

    def output(self, key: Any) -> OutputDiff:
        """One output key's diff (KeyError when neither run has it)."""
        return self._by_key()[key]

    def counts(self) -> dict[str, int]:
        found = Counter(o.fate for o in self._by_key().values())
        return {fate: found[fate] for fate in FATES}

    # ------------------------------------------------------------------ explanation
    def _inputs(self, run: LineageRun, ids: list[int]) -> list[Found]:
        """(input capture id, record id, value) of the input records in the lineage of output ``ids``."""
        if not ids:
            return []
        found = run.engine.back_all({self.target: BitMap64(ids)})
        return [(cid, record_id, value) for cid, point_ids in sorted(found.items())
                for record_id, value in run.session.values.values(run.store.point(cid), point_ids)]

    @staticmethod
    def _located(run: LineageRun, records: list[Found]) -> list[InputRecord]:
        """The records with their file and offset (read for these records only, not the common ones)."""
        by_point: dict[str, dict[int, Any]] = {}
        for cid, record_id, value in records:
            by_point.setdefault(cid, {})[record_id] = value
        located = []
        for cid, values in sorted(by_point.items()):
            ids = BitMap64(values)
            positions = run.session.values.positions(run.store.point(cid), ids)
            located += [InputRecord(cid, record_id, position.source, position.offset, values[record_id])
                        for record_id, position in zip(ids, positions, strict=True)]
        return located

    def explain(self, key: Any) -> Explanation:
        """The input records behind output ``key`` in one run and not the other (matched by their
        input point and content), the count common to both, and the additive check."""
        entry = self.output(key)
        old, new = side_by_side(lambda: self._inputs(self.old, [i for i, _ in entry.old]),
                                lambda: self._inputs(self.new, [i for i, _ in entry.new]), self._spark)
        pending: dict[tuple[str, Any], list[Found]] = {}
        for record in old:
            cid, _, value = record
            pending.setdefault((cid, canonical(value)), []).append(record)
        answer = Explanation()
        added = []
        for record in new:
            cid, _, value = record
            same = pending.get((cid, canonical(value)))
            if same:
                same.pop()
                answer.common += 1
            else:
                added.append(record)
        answer.added = self._located(self.new, added)
        answer.removed = self._located(self.old, [r for rs in pending.values() for r in rs])
        if entry.fate != "unchanged":
            try:
                answer.check = self.additive(entry, answer)
            except ReplayNotPossible as exc:
                answer.why_no_check = str(exc)
        return answer

    # ------------------------------------------------------------------ the additive check
    def additive(self, entry: OutputDiff, answer: Explanation) -> AdditiveCheck | None:
        """The check for a numeric output: new - old == contribution(added) - contribution(removed)."""
        values = [v for _, v in entry.old + entry.new]
        numbers = [numbers_of(v, self.fields) for v in values]
        if len(entry.old) > 1 or len(entry.new) > 1 or not numbers or any(n is None for n in numbers):
            return None
        changed = {r.capture_id for r in answer.added} | {r.capture_id for r in answer.removed}
        old = self._number_at([v for _, v in entry.old], entry.key)
        new = self._number_at([v for _, v in entry.new], entry.key)
        with_added, with_removed = side_by_side(
            lambda: self._contribution(self.new, changed, answer.added),
            lambda: self._contribution(self.old, changed, answer.removed), self._spark)
        added, removed = self._number_at(with_added, entry.key), self._number_at(with_removed, entry.key)
        names = set(old) | set(new) | set(added) | set(removed)
        holds = all(math.isclose(new.get(n, 0) - old.get(n, 0), added.get(n, 0) - removed.get(n, 0),
                                 rel_tol=1e-9, abs_tol=1e-9) for n in names)
        return AdditiveCheck(old, new, added, removed, holds)

    def _number_at(self, values: list[Any], key: Any) -> dict[str, float]:
        """The numbers of the record at ``key`` among ``values`` ({} when none is: it adds nothing)."""
        for value in values:
            if key_of(value, self.fields) == key:
                return numbers_of(value, self.fields) or {}
        return {}

    def _contribution(self, run: LineageRun, changed: set[str], kept: list[InputRecord]) -> list[Any]:
        """The target's output of ``run`` computed from ``kept`` alone at the input points in
        ``changed`` (the other inputs read whole), by replaying the job kept in its folder."""
        job = run.job
        if job is None:
            raise ReplayNotPossible("the job's functions were not kept, or no SparkContext is at hand")
        why = job.why_not(self.target)
        if why is not None:
            raise ReplayNotPossible(why)
        if not changed:
            return []
        by_point: dict[str, list[InputRecord]] = {cid: [] for cid in changed}
        for record in kept:
            by_point[record.capture_id].append(record)
        if self.target in job.job.get("frames", {}):
            return job.frame_rows(self.target, self._all_but(run, by_point))
        nodes = {n["input"]: (int(seq), n) for seq, n in job.job["nodes"].items() if "input" in n}
        if all(cid in nodes and nodes[cid][1]["op"] in GIVEN_SOURCES for cid in changed):
            # the records themselves, on one partition each: no need to read the inputs again
            given = {nodes[cid][0]: job.sc.parallelize([r.value for r in records], 1)
                     for cid, records in by_point.items()}
            return job.redo(self.target, Build(job, {}, given))
        return job.rerun(self.target, self._all_but(run, by_point))

    def _all_but(self, run: LineageRun, by_point: dict[str, list[InputRecord]]) -> Frontier:
        return {cid: run.engine.all_ids(run.store.point(cid)) - BitMap64([r.record_id for r in records])
                for cid, records in by_point.items()}
