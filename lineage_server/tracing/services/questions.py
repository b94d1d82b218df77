"""A trace's question checked against the catalog before anything is queued (a 400 names what is wrong).

Capture ids here are the server's (``<run>/<capture id>``, as agents register them); the worker
maps them to the run folder's own.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from capture_agent.record.errors import LineageError
from capture_agent.record.worker.predicates import PredicateError, check_fields, compile_filter
from lineage_server.catalog.models import Application, CaptureKind, CapturePoint
from lineage_server.catalog.selectors.samples import open_run
from lineage_server.tracing.models import Direction, Trace, TraceKind, TraceStatus

MAX_IDS = 10_000
END, STEP = "end", "step"
_VALUE_KINDS = (CaptureKind.INPUT, CaptureKind.OUTPUT)  # points whose records' values can be read
_END_ALIASES = {"backward": "inputs", "forward": "outputs"}


class TraceQuestionError(ValueError):
    """A question that cannot be asked; ``field`` is the request field it is about."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass
class Question:
    """A checked question: where it starts, what it selects there, which way and how far it goes."""

    application: Application
    direction: str
    start: CapturePoint | None  # None: the seed trace's result points
    selection: dict[str, Any]
    target: str  # END, STEP or a server capture id
    seed: Trace | None = None
    kind: str = TraceKind.TRACE

    def key(self) -> str:
        """Same question on the same lineage -> same key (the seed's answer counts as its selection)."""
        points = list(
            self.application.capture_points.order_by("capture_id").values_list(
                "capture_id", "rows", "bytes", "missing_table_count", "location"
            )
        )
        seed = (self.seed.result_location, self.seed.result_count) if self.seed is not None else None
        text = json.dumps(
            [self.application.app_id, self.direction, self.start.capture_id if self.start else None,
             self.selection, self.target, seed, points, *([self.kind] if self.kind != TraceKind.TRACE else [])],
            sort_keys=True, default=str,
        )
        return hashlib.sha256(text.encode()).hexdigest()


def last_output(app: Application) -> CapturePoint | None:
    """The output point of the application's last action (highest sequence number in its run)."""
    outputs = list(app.capture_points.filter(kind=CaptureKind.OUTPUT))
    return max(outputs, key=lambda p: (p.capture_id.split("/", 1)[-1], p.pk), default=None)


def check_question(app: Application, *, direction: str, capture_point: str | None, selection: Any,
                   target: str | None, seeds: QuerySet[Trace], kind: str = TraceKind.TRACE) -> Question:
    """The question, checked; ``seeds`` are the traces the caller may seed from. A what-if
    (``kind``) deletes the selected records and goes forward to an output (``target``: end, the
    output of the last action computed from them, or an output's capture id).

    Raises:
        TraceQuestionError: what is wrong, and with which field.
    """
    if direction not in Direction.values:
        raise TraceQuestionError("direction", f"{direction!r} is not a direction: use backward or forward")
    if not isinstance(selection, dict) or len(selection.keys() & {"ids", "predicate", "trace", "all"}) != 1:
        raise TraceQuestionError(
            "selection", 'give exactly one of {"ids": [...]}, {"predicate": {...}}, {"trace": <id>} or {"all": true}'
        )
    points = {p.capture_id: p for p in app.capture_points.all()}
    if not points:
        raise TraceQuestionError("application", f"{app.app_id} has no record-level lineage (no capture points)")
    seed = _seed(selection, seeds, app) if "trace" in selection else None
    if kind == TraceKind.WHATIF and not capture_point and seed is None:
        raise TraceQuestionError("capture_point", "name the capture point whose records a what-if deletes (an "
                                                  "input), or select an earlier trace's result")
    start = _start(app, points, capture_point, seed)
    if start is not None and start.not_captured:
        raise TraceQuestionError("capture_point", f"the output {start.capture_id} was not captured (it ran without "
                                                  f"record lineage): {start.not_captured}")
    checked = _selection(selection, start)
    if kind == TraceKind.WHATIF:
        if target == STEP:
            raise TraceQuestionError("target", "a what-if goes to an output: use end or an output's capture id")
        if target not in (None, "", END) and target in points and points[target].kind != CaptureKind.OUTPUT:
            raise TraceQuestionError("target", f"{target} is a {points[target].kind} point; a what-if's target "
                                               "is an output (an action's result)")
    return Question(app, direction, start, checked, _target(points, direction, start, seed, target), seed, kind)


def _seed(selection: dict[str, Any], seeds: QuerySet[Trace], app: Application) -> Trace:
    unknown = set(selection) - {"trace", "capture_point"}
    if unknown:
        raise TraceQuestionError("selection", f"a trace selection takes trace and capture_point, not {sorted(unknown)}")
    seed_id = selection["trace"]
    if isinstance(seed_id, bool) or not isinstance(seed_id, int):
        raise TraceQuestionError("selection", "trace: the id (an integer) of an earlier trace")
    seed = seeds.filter(pk=seed_id).first()
    if seed is None:
        raise TraceQuestionError("selection", f"no trace {seed_id} of yours to start from")
    if seed.application_id != app.pk:
        raise TraceQuestionError("selection", f"trace {seed_id} is of another application")
    if seed.kind != TraceKind.TRACE:
        raise TraceQuestionError("selection", f"{seed_id} is a what-if: start from a trace's result")
    if seed.status != TraceStatus.SUCCEEDED or not seed.result_location:
        raise TraceQuestionError("selection", f"trace {seed_id} has no result to start from (it is {seed.status})")
    wanted = selection.get("capture_point")
    if wanted is not None and wanted not in (seed.summary.get("result_points") or {}):
        raise TraceQuestionError("selection", f"trace {seed_id}'s result has no records at {wanted!r}")
    return seed


def _start(app: Application, points: dict[str, CapturePoint], capture_point: str | None,
           seed: Trace | None) -> CapturePoint | None:
    if seed is not None:
        if capture_point:
            raise TraceQuestionError("capture_point", "a trace that starts from an earlier trace's result starts "
                                                      "where that result is: leave capture_point out")
        return None
    if not capture_point:
        start = last_output(app)
        if start is None:
            raise TraceQuestionError("capture_point", f"{app.app_id} has no output capture point: name one")
        return start
    if capture_point not in points:
        raise TraceQuestionError("capture_point", f"{app.app_id} has no capture point {capture_point!r}")
    return points[capture_point]


def _selection(selection: dict[str, Any], start: CapturePoint | None) -> dict[str, Any]:
    if "trace" in selection:
        return {"trace": selection["trace"], "capture_point": selection.get("capture_point")}
    assert start is not None
    if "all" in selection:
        if selection != {"all": True}:
            raise TraceQuestionError("selection", 'all: write {"all": true} (every record of the capture point)')
        return {"all": True}
    if "ids" in selection:
        ids = selection["ids"]
        if set(selection) != {"ids"} or not isinstance(ids, list) or not ids or len(ids) > MAX_IDS:
            raise TraceQuestionError("selection", f"ids: a list of 1 to {MAX_IDS} record ids")
        if any(isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < 2**63 for i in ids):
            raise TraceQuestionError("selection", "ids: record ids are integers (partition << 32 | position)")
        return {"ids": sorted(set(ids))}
    if set(selection) != {"predicate"}:
        raise TraceQuestionError("selection", "a predicate selection takes only predicate")
    try:
        compile_filter(selection["predicate"])
        fields = record_fields(start)
        if fields is not None:
            check_fields(selection["predicate"], fields, start.capture_id)
    except PredicateError as exc:
        raise TraceQuestionError("selection", str(exc)) from None
    if start.kind not in _VALUE_KINDS:
        raise TraceQuestionError("selection", f"the records at {start.capture_id} ({start.kind}) keep no values to "
                                              "filter: choose an input or an output capture point, or select by ids")
    return {"predicate": selection["predicate"]}


def record_fields(point: CapturePoint) -> list[str] | None:
    """The columns of the records at an input point that is a DataFrame source, read from its
    run's manifest (None: not such a point, or its run folder cannot be read here)."""
    if point.kind != CaptureKind.INPUT:
        return None
    run_id, _, local_id = point.capture_id.rpartition("/")
    try:
        run = open_run(point.location, point.application.app_id)
        if run is None or (run_id and run.run_id and run.run_id != run_id) or local_id not in run.points:
            return None
        return run.point(local_id).layout.record_fields()
    except (OSError, ValueError, LineageError):
        return None


def _target(points: dict[str, CapturePoint], direction: str, start: CapturePoint | None, seed: Trace | None,
            target: str | None) -> str:
    if target in (None, "", END, _END_ALIASES[direction]):
        return END
    if target == STEP:
        return STEP
    if target in _END_ALIASES.values():
        raise TraceQuestionError("target", f"a {direction} trace ends at the job's {_END_ALIASES[direction]}, "
                                           f"not its {target}")
    if target not in points:
        raise TraceQuestionError("target", f"no capture point {target!r}: use end, step or a capture point id")
    if start is not None:
        starts = [start.capture_id]
    else:
        starts = list((seed.summary.get("result_points") or {}) if seed else [])
    if not any(_reaches(points, s, target, direction) for s in starts):
        way = "upstream" if direction == "backward" else "downstream"
        raise TraceQuestionError("target", f"capture point {target} is not {way} of the selected records")
    return target


def _reaches(points: dict[str, CapturePoint], start: str, target: str, direction: str) -> bool:
    if direction == "backward":
        todo, seen = [start], set()
        while todo:
            current = todo.pop()
            if current == target:
                return True
            if current not in seen and current in points:
                seen.add(current)
                todo.extend(points[current].parent_capture_ids)
        return False
    return _reaches(points, target, start, "backward")
