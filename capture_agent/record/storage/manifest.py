"""The lineage store: one folder per application run, one folder (table) per capture point.

``<root>/<run_id>/run.json`` (the manifest) lists the capture points: kind, operation, table
layout and its details (input files with their size and modification time, a union's ranges, a
group's mode...), parents, partitions, row and byte counts, and the partition tables that could
not be written, with why. ``<root>/<run_id>/<capture_id>/part-NNNNN.parquet`` holds the
association table written by the task that computed partition NNNNN (``storage.tables``; the
columns of each layout are in ``storage.layouts``). A run can be opened later, in another process,
from its folder alone (``LineageStore.open``).

Manifest format 2 (this one) keeps no deletion labels: deletion rules are derived from each
point's kind and layout when read (``storage.deletion``). Format 1 manifests (``extra`` instead of
``details``, a persisted ``label``) are still read.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from capture_agent.record.errors import LineageError
from capture_agent.record.storage.deletion import DeletionRule
from capture_agent.record.storage.fs import StoreFS
from capture_agent.record.storage.layouts import Layout, Single, layout_from
from capture_agent.record.storage.tables import num_rows, part_of, partial_name, rows_and_stage, table_name

MANIFEST = "run.json"
FORMAT = 2


@dataclass
class CapturePoint:
    """Metadata of one capture point (its association tables live in ``location``)."""

    capture_id: str
    kind: str
    op: str
    layout: Layout
    parents: list[str]
    num_partitions: int
    location: str  # a path of the store's file system
    seq: int
    rdd_id: int | None = None
    stage_id: int | None = None
    rows: int = 0
    bytes: int = 0
    values_file: str = ""  # an action's results kept beside its table ("values.parquet")
    missing: dict[int, str] = field(default_factory=dict)  # partition -> why its table is missing
    created: float = field(default_factory=time.time)
    # an output's columns' sources: OpenLineage's columnLineage facet (``capture.frame_columns``)
    column_lineage: dict[str, Any] = field(default_factory=dict)

    def table_path(self, part: int) -> str:
        return f"{self.location}/{table_name(part)}"

    def partial_path(self, part: int) -> str:
        return f"{self.location}/{partial_name(part)}"

    @property
    def is_input(self) -> bool:
        return self.kind == "input"

    @property
    def is_virtual(self) -> bool:
        return self.layout.virtual

    @property
    def deletion(self) -> DeletionRule:
        """How a deletion propagates through this point (derived, never stored)."""
        return self.layout.deletion(self.kind)

    def partition_rows(self, store: StoreFS) -> dict[int, int]:
        """Rows of each partition table written so far (from the Parquet footers)."""
        rows: dict[int, int] = {}
        for name, _ in store.list_files(self.location):
            part = part_of(name)
            if part is not None:
                rows[part] = num_rows(store, f"{self.location}/{name}")
        return rows

    # ------------------------------------------------------------------ manifest entries
    def to_json(self, store: StoreFS) -> dict[str, Any]:
        return {"capture_id": self.capture_id, "kind": self.kind, "op": self.op, "layout": self.layout.name,
                "details": self.layout.details(), "parents": self.parents, "num_partitions": self.num_partitions,
                "location": store.uri(self.location), "seq": self.seq, "rdd_id": self.rdd_id,
                "stage_id": self.stage_id, "rows": self.rows, "bytes": self.bytes, "values_file": self.values_file,
                "missing": {str(k): v for k, v in sorted(self.missing.items())}, "created": self.created,
                **({"column_lineage": self.column_lineage} if self.column_lineage else {})}

    @classmethod
    def from_json(cls, raw: dict[str, Any], location: str, version: int) -> CapturePoint:
        if version == 1:
            layout, values_file = _layout_v1(raw["layout"], raw.get("extra") or {})
        else:
            layout, values_file = layout_from(raw["layout"], raw.get("details") or {}), raw.get("values_file", "")
        return cls(capture_id=raw["capture_id"], kind=raw["kind"], op=raw["op"], layout=layout,
                   parents=list(raw["parents"]), num_partitions=int(raw["num_partitions"]), location=location,
                   seq=int(raw["seq"]), rdd_id=raw.get("rdd_id"), stage_id=raw.get("stage_id"),
                   rows=int(raw.get("rows", 0)), bytes=int(raw.get("bytes", 0)), values_file=values_file,
                   missing={int(k): str(v) for k, v in (raw.get("missing") or {}).items()},
                   created=float(raw.get("created", 0.0)), column_lineage=dict(raw.get("column_lineage") or {}))


_V1_RENAMED = {"name": "source", "columns": "fields"}


def _layout_v1(name: str, extra: dict[str, Any]) -> tuple[Layout, str]:
    """A format-1 point's layout: ``extra`` held the details under older names."""
    details = {_V1_RENAMED.get(k, k): v for k, v in extra.items()}
    if name == "set_local" and details.get("single"):
        return Single(), str(extra.get("values", ""))
    return layout_from(name, details), str(extra.get("values", ""))


class LineageStore:
    """The capture points of one application run and their tables."""

    def __init__(self, store: StoreFS, run_dir: str, app_id: str = "", run_id: str = "") -> None:
        self.fs = store
        self.run_dir = run_dir
        self.app_id = app_id
        self.run_id = run_id or run_dir.rstrip("/").rsplit("/", 1)[-1]
        self.points: dict[str, CapturePoint] = {}
        # actions that ran plain: {action, reason, capture_id} (the id the server knows the output by)
        self.not_captured: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._seq = 0

    @classmethod
    def create(cls, store: StoreFS, app_id: str) -> LineageStore:
        """A new run folder ``<root>/<app_id>`` (``-2``, ``-3``... when already taken).

        Raises:
            LineageError: the store cannot be written (naming the LINEAGE_STORE setting).
        """
        safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in app_id) or "app"
        try:
            store.make_dirs(store.root)
            for n in itertools.count(1):
                run_id = safe if n == 1 else f"{safe}-{n}"
                path = store.join(store.root, run_id)
                if store.exists(path):
                    continue
                run = cls(store, path, app_id, run_id)
                store.make_dirs(path)
                run.save()
                return run
        except OSError as exc:
            raise LineageError(f"the lineage store LINEAGE_STORE={store.describe()!r} cannot be written: {exc}. "
                               "Set LINEAGE_STORE (or LineageContext(store=...)) to a folder or URL this job can "
                               "write, or disable record-level capture with LINEAGE_DISABLED=true") from exc
        raise AssertionError("unreachable")

    @classmethod
    def open(cls, run_dir: str, store: StoreFS | None = None) -> LineageStore:
        """Opens a run folder written by an earlier (or another) process (a path or URL)."""
        if store is None:
            store = StoreFS.resolve(run_dir)
            run_dir = store.root
        else:
            run_dir = store.path_of(run_dir)
        data = json.loads(store.read_bytes(store.join(run_dir, MANIFEST)))
        version = int(data.get("format", 1))
        if version > FORMAT:
            raise LineageError(f"{run_dir}: manifest format {version} is newer than this agent reads ({FORMAT})")
        run = cls(store, run_dir, data.get("app_id", ""), data.get("run_id", ""))
        for raw in data.get("points", []):
            name = str(raw["location"]).rstrip("/").rsplit("/", 1)[-1]
            point = CapturePoint.from_json(raw, store.join(run_dir, name), version)
            run.points[point.capture_id] = point
            run._seq = max(run._seq, point.seq)
        run.not_captured = list(data.get("not_captured", []))
        for entry in run.not_captured:  # keep new entries' numbers past the old ones'
            seq = str(entry.get("capture_id", "")).split("-", 1)[0]
            run._seq = max(run._seq, int(seq) if seq.isdigit() else 0)
        return run

    def new_point(self, kind: str, op: str, layout: Layout, parents: list[CapturePoint],
                  num_partitions: int) -> CapturePoint:
        with self._lock:
            self._seq += 1
            seq = self._seq
        capture_id = f"{seq:04d}-{kind}-{op}"
        point = CapturePoint(capture_id=capture_id, kind=kind, op=op, layout=layout,
                             parents=[p.capture_id for p in parents], num_partitions=num_partitions,
                             location=self.fs.join(self.run_dir, capture_id), seq=seq)
        self.points[capture_id] = point
        return point

    def add_not_captured(self, action: str, reason: str) -> dict[str, str]:
        """Records an action that ran plain; its entry takes a sequence number as a point would."""
        with self._lock:
            self._seq += 1
            seq = self._seq
        entry = {"action": action, "reason": reason, "capture_id": f"{seq:04d}-output-{action}-not-captured"}
        self.not_captured.append(entry)
        return entry

    def point(self, capture_id: str) -> CapturePoint:
        try:
            return self.points[capture_id]
        except KeyError:
            raise KeyError(f"no capture point {capture_id!r} in {self.fs.uri(self.run_dir)}") from None

    def by_seq(self) -> list[CapturePoint]:
        return sorted(self.points.values(), key=lambda p: p.seq)

    def children(self, capture_id: str) -> list[CapturePoint]:
        return [p for p in self.points.values() if capture_id in p.parents]

    def ancestors(self, capture_id: str) -> set[str]:
        """The point and every point it was computed from."""
        return self._closure(capture_id, lambda cid: self.point(cid).parents)

    def descendants(self, capture_id: str) -> set[str]:
        """The point and every point computed from it."""
        return self._closure(capture_id, lambda cid: [c.capture_id for c in self.children(cid)])

    @staticmethod
    def _closure(start: str, step: Callable[[str], list[str]]) -> set[str]:
        seen: set[str] = set()
        todo = [start]
        while todo:
            current = todo.pop()
            if current not in seen:
                seen.add(current)
                todo.extend(step(current))
        return seen

    def save(self) -> None:
        data = {"app_id": self.app_id, "run_id": self.run_id, "format": FORMAT,
                "points": [p.to_json(self.fs) for p in self.by_seq()], "not_captured": self.not_captured}
        self.fs.write_bytes(self.fs.join(self.run_dir, MANIFEST),
                            json.dumps(data, indent=1, default=str).encode("utf-8"))

    def refresh_stats(self, point: CapturePoint) -> bool:
        """Recounts rows and bytes of a point's tables and forgets missing tables that were written
        since (a retried task); returns True when anything changed."""
        if point.is_virtual:
            return False
        rows = size = 0
        written = set()
        for name, length in self.fs.list_files(point.location):
            part = part_of(name)
            if part is not None:
                written.add(part)
                count, stage = rows_and_stage(self.fs, f"{point.location}/{name}")
                rows += count
                size += length
                if point.stage_id is None:  # the stage its tasks ran in, as they stamped it
                    point.stage_id = stage
        healed = [p for p in point.missing if p in written]
        for part in healed:
            del point.missing[part]
        changed = (rows, size) != (point.rows, point.bytes) or bool(healed)
        point.rows, point.bytes = rows, size
        return changed

    def record_failures(self, failures: list[tuple[str, int, str]]) -> set[str]:
        """Marks tables that tasks could not write; returns the capture ids that changed."""
        changed = set()
        for capture_id, part, reason in failures:
            point = self.points.get(capture_id)
            if point is not None and point.missing.get(part) != reason:
                point.missing[part] = reason
                changed.add(capture_id)
        return changed

    def missing_tables(self, capture_ids: set[str] | None = None) -> dict[str, dict[int, str]]:
        """{capture id: {partition: reason}} of the points (all by default) with missing tables."""
        return {cid: dict(p.missing) for cid, p in self.points.items()
                if p.missing and (capture_ids is None or cid in capture_ids)}

    def lineage_bytes(self) -> int:
        """Bytes of all association tables of the run (inputs' own data not counted)."""
        return sum(length for point in self.points.values() for name, length in self.fs.list_files(point.location)
                   if name.startswith("part-"))
