"""A trace's result as a table in the lineage store, read back page by page or streamed whole.

One Parquet file per result, rows by capture point (in the run's order) then record id:

| column | type | holds |
|---|---|---|
| capture_id | string | the capture point the record is at |
| record_id | int64 | its id: partition << 32 | position |
| value | string, null | the record as JSON (inputs, kept action results, saved text lines); null where not kept |
| file | string, null | the file it lives in (text, CSV and Parquet inputs, saveAsTextFile outputs) |
| offset | int64, null | its byte offset in that file (text), or its row (Parquet) |

Values are fetched chunk by chunk while the file is written, so a result of any size is written in
bounded memory; row groups of ``ROW_GROUP`` rows let a page read only the groups it needs.
"""

from __future__ import annotations

import datetime
import decimal
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pyroaring import BitMap64

from capture_agent.record.errors import ValuesNotAvailable
from capture_agent.record.query.engine import Frontier
from capture_agent.record.query.session import TraceSession
from capture_agent.record.storage.fs import StoreFS
from capture_agent.record.storage.ids import partition_of, position_of
from capture_agent.record.storage.tables import parquet_file, take_rows, write_once

ROW_GROUP = 1000
CHUNK = 10_000  # records whose values are fetched at once
COLUMNS = ("capture_id", "record_id", "value", "file", "offset")


_NOT_SCALAR = object()


def _json_scalar(value: Any) -> Any:
    """A value that holds no other as JSON data (itself, dates and times as ISO text, decimals their
    digits, bytes as text); ``_NOT_SCALAR`` for any other value."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, (datetime.date, datetime.time)):  # a DataFrame source's typed columns
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    return _NOT_SCALAR


def json_value(value: Any) -> Any:
    """A record as JSON data: tuples become lists, Rows objects, dates and times ISO text,
    decimals their digits; anything else its ``repr``."""
    scalar = _json_scalar(value)
    if scalar is not _NOT_SCALAR:
        return scalar
    if isinstance(value, (list, tuple)):
        if hasattr(value, "asDict") and hasattr(value, "__fields__"):  # a pyspark Row
            return {k: json_value(v) for k, v in value.asDict().items()}
        return [json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): json_value(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return [json_value(v) for v in sorted(value, key=repr)]
    return repr(value)


def json_text(value: Any) -> str:
    """``json.dumps(json_value(value))``, without ``json_value``'s walk for a Row of values that
    hold no other (a DataFrame source's row: a trace of an aggregate reaches 200,000 of them)."""
    if hasattr(value, "asDict") and hasattr(value, "__fields__"):
        flat: dict[str, Any] = {}
        for name, item in zip(value.__fields__, value, strict=False):
            scalar = _json_scalar(item)
            if scalar is _NOT_SCALAR:  # nested: the walk
                return json.dumps(json_value(value))
            flat[name] = scalar
        return json.dumps(flat)
    return json.dumps(json_value(value))


@dataclass
class ResultSummary:
    """What the database keeps of a result: counts per point and its first records."""

    count: int = 0
    by_point: dict[str, int] = field(default_factory=dict)
    first_page: list[dict[str, Any]] = field(default_factory=list)
    values_missing: list[str] = field(default_factory=list)  # points whose values are not kept


def _schema() -> Any:
    import pyarrow as pa

    return pa.schema([("capture_id", pa.string()), ("record_id", pa.int64()), ("value", pa.string()),
                      ("file", pa.string()), ("offset", pa.int64())])


def write_result(session: TraceSession, result: Frontier, path: str, first_page: int = 50,
                 on_chunk: Callable[[int], None] | None = None) -> ResultSummary:
    """Writes the records of ``result`` (with values and positions where kept) to ``path`` in the
    run's store; ``on_chunk(records written)`` is called after each chunk (it may raise to stop).

    Raises:
        InputChangedError: an input file changed since capture (its lines cannot be shown).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    store = session.store
    summary = ResultSummary()
    points = sorted((cid for cid, ids in result.items() if ids), key=lambda c: store.point(c).seq)
    handle, local = tempfile.mkstemp(prefix="trace-", suffix=".parquet")
    os.close(handle)
    try:
        with pq.ParquetWriter(local, _schema(), compression="zstd") as writer:
            for cid in points:
                summary.by_point[cid] = len(result[cid])
                for chunk in id_chunks(result[cid]):
                    rows = _rows(session, cid, chunk, summary)
                    writer.write_table(pa.Table.from_pylist(rows, schema=_schema()), row_group_size=ROW_GROUP)
                    room = first_page - len(summary.first_page)
                    if room > 0:
                        summary.first_page.extend(_as_record(r) for r in rows[:room])
                    summary.count += len(rows)
                    if on_chunk is not None:
                        on_chunk(summary.count)
        publish(store.fs, local, path)
    finally:
        os.unlink(local)
    return summary


def id_chunks(ids: BitMap64) -> Iterator[BitMap64]:
    """``ids`` in bitmaps of at most ``CHUNK``, in order."""
    batch: list[int] = []
    for record_id in ids:
        batch.append(record_id)
        if len(batch) == CHUNK:
            yield BitMap64(batch)
            batch = []
    if batch:
        yield BitMap64(batch)


def _rows(session: TraceSession, cid: str, ids: BitMap64, summary: ResultSummary) -> list[dict[str, Any]]:
    point = session.store.point(cid)
    try:
        values: dict[int, Any] | None = dict(session.values.values(point, ids))
    except ValuesNotAvailable:
        values = None
        if cid not in summary.values_missing:
            summary.values_missing.append(cid)
    known = point.layout.positions(session.values, point, ids)
    places = dict(zip(ids, known, strict=True)) if known is not None else {}
    rows = []
    for record_id in ids:
        place = places.get(record_id)
        value = json_text(values[record_id]) if values is not None and record_id in values else None
        rows.append({"capture_id": cid, "record_id": record_id, "value": value,
                     "file": place.source if place else None, "offset": place.offset if place else None})
    return rows


def publish(fs: StoreFS, local: str, path: str) -> None:
    def copy(dest: Any) -> None:
        if isinstance(dest, str):
            shutil.copyfile(local, dest)
        else:
            with open(local, "rb") as src:
                shutil.copyfileobj(src, dest)

    fs.make_dirs(path.rsplit("/", 1)[0])
    if not write_once(fs.fs, fs.is_local, path, copy):
        raise FileExistsError(f"a trace result is already at {path}")


def as_record(row: dict[str, Any], *extra: str) -> dict[str, Any]:
    """A result row (a trace's, or a what-if's) as the API shows it: the value parsed, the id split
    into partition and position (None without an id), then the ``extra`` columns as they are."""
    record_id = row["record_id"]
    value = row["value"]
    return {"capture_id": row["capture_id"], "record_id": record_id,
            "partition": None if record_id is None else partition_of(record_id),
            "position": None if record_id is None else position_of(record_id),
            "value": None if value is None else json.loads(value), **{column: row[column] for column in extra}}


def _as_record(row: dict[str, Any]) -> dict[str, Any]:
    return as_record(row, "file", "offset")


def _table(fs: StoreFS, path: str) -> Any:
    return parquet_file(fs, path)


def result_rows(fs: StoreFS, path: str) -> int:
    return int(_table(fs, path).metadata.num_rows)


def read_page(fs: StoreFS, path: str, start: int, size: int,
              capture_id: str | None = None) -> tuple[int, list[dict[str, Any]]]:
    """(rows in all, the records of rows ``start`` to ``start + size``), of one point when given."""
    pf = _table(fs, path)
    if capture_id is None:
        total = int(pf.metadata.num_rows)
        rows = list(range(start, min(start + size, total)))
    else:
        import pyarrow.compute as pc

        points = pf.read(columns=["capture_id"]).column("capture_id")
        matching = pc.indices_nonzero(pc.equal(points, capture_id)).to_pylist()
        total = len(matching)
        rows = matching[start:start + size]
    if not rows:
        return total, []
    return total, [_as_record(r) for r in take_rows(pf, list(COLUMNS), rows).to_pylist()]


def iter_records(fs: StoreFS, path: str) -> Iterator[dict[str, Any]]:
    """Every record of a result, a row group at a time (any size, bounded memory)."""
    pf = _table(fs, path)
    for group in range(pf.metadata.num_row_groups):
        for row in pf.read_row_group(group, columns=list(COLUMNS)).to_pylist():
            yield _as_record(row)


def read_frontier(fs: StoreFS, path: str, capture_id: str | None = None) -> Frontier:
    """The ids of a result by capture point (one point when given): a new trace's selection."""
    pf = _table(fs, path)
    frontier: Frontier = {}
    for group in range(pf.metadata.num_row_groups):
        table = pf.read_row_group(group, columns=["capture_id", "record_id"])
        for cid, record_id in zip(table.column("capture_id").to_pylist(), table.column("record_id").to_pylist(),
                                  strict=True):
            if capture_id is None or cid == capture_id:
                frontier.setdefault(cid, BitMap64()).add(record_id)
    return frontier
