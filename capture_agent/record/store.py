"""The lineage store: one folder per application run, one folder (table) per capture point.

``<root>/<run_id>/run.json`` lists the capture points (kind, operation, table layout, parents,
partitions, row and byte counts, layout details such as input files with their size and
modification time); ``<root>/<run_id>/<capture_id>/part-NNNNN.parquet`` holds the association
table written by the task that computed partition NNNNN. The store can be opened later, in
another process, from the run folder alone (``LineageStore.open``).

Table layouts (``CapturePoint.layout``); ids are 64-bit, partition << 32 | position:

| layout | columns | meaning |
|---|---|---|
| text | out_id, offset (uint32) | input lines; position = line number in its split, offset from split start |
| values | out_id, value, text | parallelize input; pickled values kept |
| rows | local_start, file, row_start, count | Parquet input; segments of (file, row index) |
| one_local | out_id, in_id (uint32) | in id = (same partition, in_id) at the parent |
| set_local | out_id, in_ids (BitMap) | in ids = (same partition, each) at the parent |
| set_partition | out_count, in_ids (BitMap) | every output of the partition <- all of in_ids |
| save | out_id, in_id (uint32) | saveAsTextFile; out_id = (part file, byte offset) |
| one_global | out_id, in_id (int64) | one parent id |
| list_global | out_id, in_ids (list<int64>) | combiner ids of a reducer output |
| set_global | out_id, in_ids (BitMap64) | a group's input ids |
| sets | out_id, in_ids_0..n (BitMap64) | one set per parent (cogroup, intersection) |
| pair | out_id, left_id, right_id (nullable) | a join/cartesian output's two inputs |
| union | (none) | virtual: partitions of the parents side by side (``extra['ranges']``) |
"""

from __future__ import annotations

import itertools
import json
import os
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any

DEFAULT_ROOT = os.path.join("var", "lineage")
# How a deletion propagates through each kind of point (the semiring labels of Lipstick):
# token = the record itself, copy = deleted with its one input, + = deleted when all its inputs
# are, . = deleted when either input is.
LABELS = {"input": "token", "stage": "copy", "combiner": "+", "reducer": "+", "join": "·", "union": "+",
          "output": "token"}
MANIFEST = "run.json"
LOCAL_LAYOUTS = ("one_local", "set_local", "save", "set_partition")


def store_root(root: str | None = None) -> str:
    """Lineage store root: the argument, else ``LINEAGE_STORE``, else ``var/lineage`` (cwd)."""
    value = root or os.environ.get("LINEAGE_STORE") or DEFAULT_ROOT
    if value.startswith("file://"):
        value = value[len("file://"):]
    elif value.startswith("file:"):
        value = value[len("file:"):]
    if "://" in value:
        raise ValueError(f"LINEAGE_STORE={value!r}: only local paths are supported for now")
    return os.path.abspath(value)


def local_path(uri: str) -> str:
    """A Hadoop path string (file:/x, file:///x or /x) as a local path."""
    if uri.startswith("file://"):
        return uri[len("file://"):]
    if uri.startswith("file:"):
        return uri[len("file:"):]
    return uri


@dataclass
class CapturePoint:
    """Metadata of one capture point (its association table lives in ``location``)."""

    capture_id: str
    kind: str
    op: str
    layout: str
    parents: list[str]
    num_partitions: int
    location: str
    seq: int
    rdd_id: int | None = None
    stage_id: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    rows: int = 0
    bytes: int = 0
    label: str = ""
    created: float = field(default_factory=time.time)

    def table_file(self, part: int) -> str:
        return f"{self.location}/part-{part:05d}.parquet"

    @property
    def is_input(self) -> bool:
        return self.kind == "input"

    @property
    def is_virtual(self) -> bool:
        return self.layout == "union"


class LineageStore:
    """The capture points of one application run and their tables."""

    def __init__(self, run_dir: str, app_id: str = "", run_id: str = "") -> None:
        self.run_dir = os.path.abspath(run_dir)
        self.app_id = app_id
        self.run_id = run_id or os.path.basename(self.run_dir)
        self.points: dict[str, CapturePoint] = {}
        self._lock = threading.Lock()
        self._seq = 0

    @classmethod
    def create(cls, root: str | None, app_id: str) -> LineageStore:
        """A new run folder ``<root>/<app_id>`` (``-2``, ``-3``... when already taken)."""
        base = store_root(root)
        os.makedirs(base, exist_ok=True)
        safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in app_id) or "app"
        for n in itertools.count(1):
            run_id = safe if n == 1 else f"{safe}-{n}"
            path = os.path.join(base, run_id)
            try:
                os.makedirs(path)
            except FileExistsError:
                continue
            store = cls(path, app_id, run_id)
            store.save()
            return store
        raise AssertionError("unreachable")

    @classmethod
    def open(cls, run_dir: str) -> LineageStore:
        """Opens a run folder written by an earlier (or another) process."""
        with open(os.path.join(run_dir, MANIFEST), encoding="utf-8") as f:
            data = json.load(f)
        store = cls(run_dir, data.get("app_id", ""), data.get("run_id", ""))
        for raw in data.get("points", []):
            point = CapturePoint(**raw)
            point.location = os.path.join(store.run_dir, os.path.basename(point.location))
            store.points[point.capture_id] = point
            store._seq = max(store._seq, point.seq)
        return store

    def new_point(self, kind: str, op: str, layout: str, parents: list[CapturePoint], num_partitions: int,
                  extra: dict[str, Any] | None = None) -> CapturePoint:
        with self._lock:
            self._seq += 1
            seq = self._seq
        capture_id = f"{seq:04d}-{kind}-{op}"
        point = CapturePoint(capture_id=capture_id, kind=kind, op=op, layout=layout,
                             parents=[p.capture_id for p in parents], num_partitions=num_partitions,
                             location=os.path.join(self.run_dir, capture_id), seq=seq, extra=extra or {},
                             label=LABELS.get(kind, ""))
        self.points[capture_id] = point
        return point

    def point(self, capture_id: str) -> CapturePoint:
        try:
            return self.points[capture_id]
        except KeyError:
            raise KeyError(f"no capture point {capture_id!r} in {self.run_dir}") from None

    def children(self, capture_id: str) -> list[CapturePoint]:
        return [p for p in self.points.values() if capture_id in p.parents]

    def ancestors(self, capture_id: str) -> set[str]:
        seen: set[str] = set()
        todo = [capture_id]
        while todo:
            current = todo.pop()
            if current in seen:
                continue
            seen.add(current)
            todo.extend(self.points[current].parents)
        return seen

    def save(self) -> None:
        data = {"app_id": self.app_id, "run_id": self.run_id, "format": 1,
                "points": [asdict(p) for p in sorted(self.points.values(), key=lambda p: p.seq)]}
        tmp = os.path.join(self.run_dir, f".{MANIFEST}.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1, default=str)
        os.replace(tmp, os.path.join(self.run_dir, MANIFEST))

    def partition_rows(self, point: CapturePoint) -> dict[int, int]:
        """Rows of each partition table written so far (from the Parquet footers)."""
        import pyarrow.parquet as pq

        rows: dict[int, int] = {}
        if not os.path.isdir(point.location):
            return rows
        for name in os.listdir(point.location):
            if name.startswith("part-") and name.endswith(".parquet"):
                rows[int(name[5:10])] = pq.ParquetFile(os.path.join(point.location, name)).metadata.num_rows
        return rows

    def refresh_stats(self, point: CapturePoint) -> bool:
        """Recounts rows and bytes of a point's tables; returns True when they changed."""
        if point.is_virtual:
            return False
        per_part = self.partition_rows(point)
        rows = sum(per_part.values())
        size = 0
        if os.path.isdir(point.location):
            size = sum(os.path.getsize(os.path.join(point.location, n)) for n in os.listdir(point.location)
                       if n.endswith(".parquet") and n.startswith("part-"))
        changed = (rows, size) != (point.rows, point.bytes)
        point.rows, point.bytes = rows, size
        return changed

    def lineage_bytes(self) -> int:
        """Bytes of all association tables of the run (inputs' own data not counted)."""
        total = 0
        for point in self.points.values():
            if os.path.isdir(point.location):
                total += sum(os.path.getsize(os.path.join(point.location, n)) for n in os.listdir(point.location)
                             if n.startswith("part-"))
        return total
