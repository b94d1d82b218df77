"""Raw records behind ids: read back from the source, the stored results, or by replay.

Input lines are fetched by seeking to their byte offset (after checking that the file still has
the size and modification time recorded at capture), Parquet rows by (file, row index),
parallelized values from the input table, action results from memory or ``values.parquet``,
``saveAsTextFile`` lines by offset in the part file. Records at intermediate capture points are
recomputed by replaying the partitions that hold them (only in the process that ran the job).
"""

from __future__ import annotations

import bisect
import os
import pickle
from collections.abc import Callable
from typing import Any, NamedTuple

from pyroaring import BitMap64

from capture_agent.record.errors import InputChangedError, ValuesNotAvailable
from capture_agent.record.ids import SHIFT, lift, split_by_partition
from capture_agent.record.store import CapturePoint, LineageStore, local_path

Predicate = Callable[[Any], bool] | None
Replay = Callable[[CapturePoint, BitMap64, Predicate], list[tuple[int, Any]]]


class Position(NamedTuple):
    """Where a record lives: a file and byte offset (text), a file and row index (Parquet), the
    index in an action's result ("result"), or a capture point and record id."""

    source: str
    offset: int


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def _split_hadoop_lines(start: int, raw: bytes) -> list[tuple[int, bytes]]:
    """Hadoop's LineReader ends a line at \\n, \\r or \\r\\n; ``raw`` may hold several of them."""
    out = []
    i = 0
    n = len(raw)
    while i < n:
        j = i
        while j < n and raw[j] not in (10, 13):
            j += 1
        out.append((start + i, raw[i:j]))
        if j < n and raw[j] == 13 and j + 1 < n and raw[j + 1] == 10:
            j += 1
        i = j + 1
    return out


def read_lines(path: str, offsets: list[int]) -> list[str]:
    """The lines starting at the given (sorted) byte offsets of a local file."""
    out: list[str] = []
    if not offsets:
        return out
    with open(path, "rb") as f:
        span = offsets[-1] - offsets[0]
        if len(offsets) > 256 and span < 2048 * len(offsets):
            wanted = set(offsets)
            f.seek(offsets[0])
            position = offsets[0]
            found: dict[int, str] = {}
            for raw in f:
                pieces = [(position, raw.rstrip(b"\n"))] if b"\r" not in raw else _split_hadoop_lines(position, raw)
                for start, line in pieces:
                    if start in wanted:
                        found[start] = _decode(line)
                position += len(raw)
                if position > offsets[-1]:
                    break
            return [found.get(o, "") for o in offsets]
        for offset in offsets:
            f.seek(offset)
            raw = f.readline()
            cut = len(raw)
            for terminator in (b"\n", b"\r"):
                k = raw.find(terminator)
                if k >= 0:
                    cut = min(cut, k)
            out.append(_decode(raw[:cut]))
    return out


def text_unit(path: str, record_ids: list[int], offsets: list[int], parse: Any, predicate: Predicate,
              ) -> list[tuple[int, Any]]:
    """(id, line) for lines of one text split at the given byte offsets (``parse``: line -> Row)."""
    out = []
    for record_id, line in zip(record_ids, read_lines(path, offsets), strict=True):
        value = parse(line) if parse is not None else line
        if predicate is None or predicate(value):
            out.append((record_id, value))
    return out


def line_offsets(point: CapturePoint, part: int, positions: list[int]) -> list[int]:
    """Byte offsets (from the split's start) of the given line numbers of one input split."""
    from capture_agent.record._runtime import partial_file
    from capture_agent.record.trace import _read

    path = point.table_file(part)
    if not os.path.exists(path):
        path = partial_file(point.location, part)
    if not os.path.exists(path):
        raise ValuesNotAvailable(f"no line offsets of split {part} of {point.capture_id}")
    column = _read(path, ["offset"], positions).column("offset").to_pylist()
    if len(column) != len(positions):
        raise ValuesNotAvailable(f"lines {positions[len(column):][:3]}... of split {part} were never read")
    return column


def csv_parser(extra: dict[str, Any]) -> Callable[[str], Any]:
    columns, sep, quote = extra["columns"], extra["sep"], extra["quote"]

    def parse(line: str) -> Any:
        import csv

        from pyspark.sql.types import _create_row

        fields = next(csv.reader([line], delimiter=sep, quotechar=quote), [])
        values: list[Any] = [f if f != "" else None for f in fields[: len(columns)]]
        values.extend([None] * (len(columns) - len(values)))
        return _create_row(columns, values)

    return parse


class ValueReader:
    """Values and positions of the records of one run."""

    def __init__(self, store: LineageStore, run_units: Callable[..., list[Any]] | None = None,
                 outputs: dict[str, Any] | None = None, replay: Replay | None = None) -> None:
        self.store = store
        self.run_units = run_units or (lambda fn, units, cost: [fn(*u) for u in units])
        self.outputs = outputs if outputs is not None else {}
        self.replay = replay

    def check_inputs(self, point: CapturePoint, file_indexes: set[int] | None = None) -> None:
        """Raises InputChangedError when a recorded input file changed since capture."""
        for i, info in enumerate(point.extra.get("files", [])):
            if file_indexes is not None and i not in file_indexes:
                continue
            path = local_path(info["path"])
            recorded = (info["size"], info["mtime"])
            try:
                st = os.stat(path)
            except FileNotFoundError:
                raise InputChangedError(info["path"], recorded, None) from None
            current = (st.st_size, int(st.st_mtime * 1000))
            if current[0] != recorded[0] or abs(current[1] - recorded[1]) > 1:
                raise InputChangedError(info["path"], recorded, current)

    # ------------------------------------------------------------------ values
    def values(self, point: CapturePoint, ids: BitMap64, predicate: Predicate = None) -> list[tuple[int, Any]]:
        """(id, value) pairs sorted by id; with a predicate only those whose value satisfies it."""
        if not ids:
            return []
        layout = point.layout
        if point.is_virtual:
            return self._union_values(point, ids, predicate)
        if layout == "text":
            return self._text_values(point, ids, predicate)
        if layout == "values":
            return self._table_values(point, ids, predicate)
        if layout == "rows":
            return self._parquet_values(point, ids, predicate)
        if layout == "save":
            return self._saved_values(point, ids, predicate)
        if point.kind == "output":
            return self._output_values(point, ids, predicate)
        if self.replay is not None:
            return self.replay(point, ids, predicate)
        raise ValuesNotAvailable(f"records at {point.capture_id} ({point.kind} of {point.op}) are not stored; "
                                 "trace to an input or output to see values, or trace in the process that ran it")

    def _filtered(self, pairs: list[tuple[int, Any]], predicate: Predicate) -> list[tuple[int, Any]]:
        return pairs if predicate is None else [(i, v) for i, v in pairs if predicate(v)]

    def _text_values(self, point: CapturePoint, ids: BitMap64, predicate: Predicate) -> list[tuple[int, Any]]:
        units = self.text_units(point, ids, predicate)
        out: list[tuple[int, Any]] = []
        # a sparse line costs about a page read; dense ones are read sequentially
        cost = sum(min(len(u[1]) * 4096, _size(u[0])) for u in units)
        for chunk in self.run_units(text_unit, units, cost):
            out.extend(chunk)
        return out

    def text_units(self, point: CapturePoint, ids: BitMap64, predicate: Predicate) -> list[tuple[Any, ...]]:
        """One ``text_unit`` per split holding ids: (file, ids, byte offsets, parser, predicate)."""
        splits = point.extra["splits"]
        files = point.extra["files"]
        parts = list(split_by_partition(ids))
        self.check_inputs(point, {splits[p][0] for p, _ in parts})
        parse = csv_parser(point.extra) if point.extra.get("format") == "csv" else None
        units = []
        for p, bm in parts:
            positions = list(bm)
            start = splits[p][1]
            offsets = [start + o for o in line_offsets(point, p, positions)]
            units.append((local_path(files[splits[p][0]]["path"]), [(p << SHIFT) | x for x in positions], offsets,
                          parse, predicate))
        return units

    def _table_values(self, point: CapturePoint, ids: BitMap64, predicate: Predicate) -> list[tuple[int, Any]]:
        from capture_agent.record.trace import _read

        out: list[tuple[int, Any]] = []
        for part, positions in split_by_partition(ids):
            rows = list(positions)
            table = _read(point.table_file(part), ["value"], rows)
            hi = part << SHIFT
            blobs = table.column("value").to_pylist()
            out.extend((hi | r, pickle.loads(b)) for r, b in zip(rows, blobs, strict=True))
        return self._filtered(out, predicate)

    def _parquet_values(self, point: CapturePoint, ids: BitMap64, predicate: Predicate) -> list[tuple[int, Any]]:
        import pyarrow.parquet as pq
        from pyspark.sql.types import _create_row

        from capture_agent.record.trace import _read

        self.check_inputs(point)
        located: dict[str, list[tuple[int, int]]] = {}
        for part, positions in split_by_partition(ids):
            segments = pq.read_table(point.table_file(part)).to_pydict()
            starts = segments["local_start"]
            for pos in positions:
                s = bisect.bisect_right(starts, pos) - 1
                located.setdefault(segments["file"][s], []).append(
                    ((part << SHIFT) | pos, segments["row_start"][s] + pos - starts[s]))
        out: list[tuple[int, Any]] = []
        for file_uri, wanted in located.items():
            path = local_path(file_uri)
            rows = [r for _, r in wanted]
            table = _read(path, pq.ParquetFile(path).schema_arrow.names, rows)
            names = table.column_names
            columns = [table.column(n).to_pylist() for n in names]
            for k, (record_id, _) in enumerate(wanted):
                out.append((record_id, _create_row(names, [column[k] for column in columns])))
        out.sort(key=lambda t: t[0])
        return self._filtered(out, predicate)

    def _saved_values(self, point: CapturePoint, ids: BitMap64, predicate: Predicate) -> list[tuple[int, Any]]:
        base = local_path(point.extra["path"])
        out: list[tuple[int, Any]] = []
        for part, offsets in split_by_partition(ids):
            path = os.path.join(base, f"part-{part:05d}")
            hi = part << SHIFT
            offs = list(offsets)
            out.extend((hi | o, line) for o, line in zip(offs, read_lines(path, offs), strict=True))
        return self._filtered(out, predicate)

    def _output_values(self, point: CapturePoint, ids: BitMap64, predicate: Predicate) -> list[tuple[int, Any]]:
        run = self.outputs.get(point.capture_id)
        if run is not None and run.values is not None:
            by_id = run.value_map()
        elif point.extra.get("values"):
            import pyarrow.parquet as pq

            table = pq.read_table(os.path.join(point.location, point.extra["values"]), columns=["out_id", "value"])
            by_id = dict(zip(table.column("out_id").to_pylist(),
                             (pickle.loads(b) for b in table.column("value").to_pylist()), strict=True))
        else:
            raise ValuesNotAvailable(f"the results of {point.capture_id} were not kept")
        return self._filtered([(i, by_id[i]) for i in ids if i in by_id], predicate)

    def _union_values(self, point: CapturePoint, ids: BitMap64, predicate: Predicate) -> list[tuple[int, Any]]:
        out: list[tuple[int, Any]] = []
        for parent_index, first, count in point.extra["ranges"]:
            parent = self.store.point(point.parents[parent_index])
            for part, positions in split_by_partition(ids):
                if first <= part < first + count:
                    for record_id, value in self.values(parent, lift(part - first, positions), predicate):
                        out.append((record_id + (first << SHIFT), value))
        out.sort(key=lambda t: t[0])
        return out

    # ------------------------------------------------------------------ positions
    def positions(self, point: CapturePoint, ids: BitMap64) -> list[Position]:
        layout = point.layout
        out: list[Position] = []
        if layout == "text":
            splits, files = point.extra["splits"], point.extra["files"]
            for part, bm in split_by_partition(ids):
                file_index, start, _ = splits[part]
                path = files[file_index]["path"]
                out.extend(Position(path, start + o) for o in line_offsets(point, part, list(bm)))
        elif layout == "save":
            for record_id in ids:
                out.append(Position(f"{point.extra['path']}/part-{record_id >> SHIFT:05d}",
                                    record_id & ((1 << SHIFT) - 1)))
        elif layout == "rows":
            import pyarrow.parquet as pq

            for part, positions in split_by_partition(ids):
                segments = pq.read_table(point.table_file(part)).to_pydict()
                starts = segments["local_start"]
                for pos in positions:
                    s = bisect.bisect_right(starts, pos) - 1
                    out.append(Position(segments["file"][s], segments["row_start"][s] + pos - starts[s]))
        elif point.kind == "output" and point.capture_id in self.outputs:
            index = {record_id: i for i, record_id in enumerate(self.outputs[point.capture_id].ids)}
            out.extend(Position("result", index.get(record_id, -1)) for record_id in ids)
        else:
            out.extend(Position(point.capture_id, record_id) for record_id in ids)
        return out
