"""Raw records behind ids: read back from the source, the stored results, or by replay.

Each layout reads what it keeps (``Layout.values`` / ``Layout.positions``): input lines by
seeking to their byte offset (after checking that the file still has the size and modification
time recorded at capture), Parquet rows by (file, row index), parallelized values from the input
table, ``saveAsTextFile`` lines by offset in the part file, a union's records from its parents.
Here: action results from memory or the point's ``values.parquet``, and records at
intermediate points by replaying the partitions that hold them (only in the process that ran the
job, through ``replay``).
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from pyroaring import BitMap64

from capture_agent.record.errors import ValuesNotAvailable
from capture_agent.record.query.engine import TraceEngine
from capture_agent.record.storage.fs import StoreFS
from capture_agent.record.storage.layouts import Position
from capture_agent.record.storage.manifest import CapturePoint
from capture_agent.record.storage.tables import read_rows

Predicate = Callable[[Any], bool] | None
Replay = Callable[[CapturePoint, BitMap64, Predicate], list[tuple[int, Any]]]


class KeptResult(Protocol):
    """An action's result kept in memory: its record ids and values (``capture.outputs.OutputRun``)."""

    ids: list[int]

    def value_map(self) -> dict[int, Any] | None: ...


def kept_results(fs: StoreFS, point: CapturePoint) -> dict[int, Any] | None:
    """{out id: value} of an action's results kept beside its table (``values.parquet``), or None."""
    if not point.values_file:
        return None
    table = read_rows(fs, f"{point.location}/{point.values_file}", ["out_id", "value"])
    return dict(zip(table.column("out_id").to_pylist(), (pickle.loads(b) for b in table.column("value").to_pylist()),
                    strict=True))


class ValueReader:
    """Values and positions of the records of one run."""

    def __init__(self, engine: TraceEngine, outputs: Mapping[str, KeptResult] | None = None,
                 replay: Replay | None = None) -> None:
        self.engine = engine
        self.outputs = outputs if outputs is not None else {}
        self.replay = replay

    def values(self, point: CapturePoint, ids: BitMap64, predicate: Predicate = None) -> list[tuple[int, Any]]:
        """(id, value) pairs sorted by id; with a predicate only those whose value satisfies it."""
        if not ids:
            return []
        kept = point.layout.values(self, point, ids, predicate)
        if kept is not None:
            return kept
        if point.kind == "output":
            return self._output_values(point, ids, predicate)
        if self.replay is not None:
            return self.replay(point, ids, predicate)
        raise ValuesNotAvailable(f"records at {point.capture_id} ({point.kind} of {point.op}) are not stored; "
                                 "trace to an input or output to see values, or trace in the process that ran it")

    def _output_values(self, point: CapturePoint, ids: BitMap64, predicate: Predicate) -> list[tuple[int, Any]]:
        run = self.outputs.get(point.capture_id)
        by_id = run.value_map() if run is not None else None
        if by_id is None:
            by_id = kept_results(self.engine.fs, point)
        if by_id is None:
            raise ValuesNotAvailable(f"the results of {point.capture_id} were not kept")
        pairs = [(i, by_id[i]) for i in ids if i in by_id]
        return pairs if predicate is None else [(i, v) for i, v in pairs if predicate(v)]

    def text_units(self, point: CapturePoint, ids: BitMap64) -> list[tuple[Any, ...]] | None:
        """Units reading the lines behind ids at a text input, for a Spark job (None: not text)."""
        return point.layout.text_units(self.engine.fs, point, ids, None)

    # ------------------------------------------------------------------ the context layouts read values in
    @property
    def fs(self) -> StoreFS:
        return self.engine.fs

    def run_units(self, fn: Callable[..., Any], units: list[tuple[Any, ...]], cost: int) -> list[Any]:
        return self.engine.run_units(fn, units, cost)

    def point(self, capture_id: str) -> CapturePoint:
        return self.engine.point(capture_id)

    # ------------------------------------------------------------------ positions
    def positions(self, point: CapturePoint, ids: BitMap64) -> list[Position]:
        known = point.layout.positions(self, point, ids)
        if known is not None:
            return known
        run = self.outputs.get(point.capture_id)
        if point.kind == "output" and run is not None:
            index = {record_id: i for i, record_id in enumerate(run.ids)}
            return [Position("result", index.get(record_id, -1)) for record_id in ids]
        return [Position(point.capture_id, record_id) for record_id in ids]
