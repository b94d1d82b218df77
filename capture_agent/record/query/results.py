"""A trace's result as a table in the lineage store, read back page by page or streamed whole.

One Parquet file per result, rows by capture point (in the run's order) then record id:

| column | type | holds |
|---|---|---|
| capture_id | string | the capture point the record is at |
| record_id | int64 | its id: partition << 32 | position |
| value | string, null | the record as JSON (the first page's; points read later: null), null where not kept |
| file | string, null | the file it lives in (text, CSV and Parquet inputs, saveAsTextFile outputs) |
| offset | int64, null | its byte offset in that file (text), or its row (Parquet) |
| value_later | bool | its value is read from its source (the file and offset above) when it is read |

A trace is answered once the ids and places of the records it reached are known: their values are
read a page at a time (``read_page``: only that page's rows of their source files) or a row group
at a time (``iter_records``, a download), by a ``ValueFetcher`` over the run's lineage; a result
of 200,000 rows is not decoded and encoded whole before the trace is done. The file is written a
chunk at a time, so a result of any size is written in bounded memory; row groups of
``ROW_GROUP`` rows let a page read only the groups it needs. Results written before
``value_later`` existed hold every value.
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
from capture_agent.record.storage.ids import id_array, partition_of, position_of
from capture_agent.record.storage.layouts.inputs import check_files
from capture_agent.record.storage.manifest import CapturePoint
from capture_agent.record.storage.tables import parquet_file, take_rows, write_once

ROW_GROUP = 1000
CHUNK = 10_000  # records whose values are fetched at once
# An answer of at most this many records is written with every value (it stays whole if its inputs
# are later overwritten; writing them costs a few tenths of a second); a larger one with its first
# page's values only, the rest read from the inputs a page at a time.
KEEP_ALL = 5_000
COLUMNS = ("capture_id", "record_id", "value", "file", "offset")
LATER = "value_later"  # true where the value is read from the record's source when its page is read
ValueFetcher = Callable[[str, BitMap64], dict[int, Any]]  # (capture id, ids) -> {id: value}


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
                      ("file", pa.string()), ("offset", pa.int64()), (LATER, pa.bool_())])


def write_result(session: TraceSession, result: Frontier, path: str, first_page: int = 50,
                 on_chunk: Callable[[int], None] | None = None, keep_all: int = KEEP_ALL) -> ResultSummary:
    """Writes the records of ``result`` to ``path`` in the run's store: their ids and places
    (file and offset where known) and values. An answer of more than ``keep_all`` records has the
    values read from the job's own input files written for its first ``first_page`` records only
    (the summary's first page), the others' read when a page of them is read (``read_page``,
    ``iter_records``); a smaller one has every value written. ``on_chunk(records written)`` is
    called after each chunk (it may raise to stop).

    Raises:
        InputChangedError: an input file the records live in changed since capture.
    """
    import pyarrow.parquet as pq

    store = session.store
    summary = ResultSummary()
    points = sorted((cid for cid, ids in result.items() if ids), key=lambda c: store.point(c).seq)
    total = sum(len(result[cid]) for cid in points)
    eager = first_page if total > keep_all else total
    handle, local = tempfile.mkstemp(prefix="trace-", suffix=".parquet")
    os.close(handle)
    try:
        with pq.ParquetWriter(local, _schema(), compression="zstd") as writer:
            for cid in points:
                summary.by_point[cid] = len(result[cid])
                for k, chunk in enumerate(id_chunks(result[cid])):
                    table = _chunk_table(session, cid, chunk, eager - summary.count, k == 0, summary)
                    writer.write_table(table, row_group_size=ROW_GROUP)
                    room = first_page - len(summary.first_page)
                    if room > 0:
                        summary.first_page.extend(_as_record(r) for r in table.slice(0, room).to_pylist())
                    summary.count += table.num_rows
                    if on_chunk is not None:
                        on_chunk(summary.count)
        publish(store.fs, local, path)
    finally:
        os.unlink(local)
    return summary


def id_chunks(ids: BitMap64) -> Iterator[BitMap64]:
    """``ids`` in bitmaps of at most ``CHUNK``, in order."""
    values = ids.to_array()
    for start in range(0, len(values), CHUNK):
        yield BitMap64(values[start:start + CHUNK])


def _chunk_table(session: TraceSession, cid: str, ids: BitMap64, eager: int, first: bool,
                 summary: ResultSummary) -> Any:
    """A chunk's rows: ids and places, and values. Where they are read from the job's sources
    (``Layout.source_values``) only the first ``eager`` ids' values are written, the others marked
    ``LATER``; other points' values (unpickled, which the web process never does) are all written.
    A point that keeps no values (found at its ``first`` chunk) is named in ``summary.values_missing``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    point = session.store.point(cid)
    record_ids = id_array(ids)
    n = len(record_ids)
    places = point.layout.places(session.values, point, ids)
    later = point.layout.source_values
    if places is not None and later:
        check_sources(point, set(pc.unique(places[0]).to_pylist()))
    now = record_ids.slice(0, max(0, eager)).to_pylist() if later else record_ids.to_pylist()
    texts: list[str | None] = []
    if cid not in summary.values_missing and (now or first):
        try:
            # the values written now; or one, for whether the point keeps them (the rest are read with their page)
            values = dict(session.values.values(point, BitMap64(now or [ids.min()])))
            texts = [json_text(values[i]) if i in values else None for i in now]
        except ValuesNotAvailable:
            summary.values_missing.append(cid)
    later = later and cid not in summary.values_missing
    texts += [None] * (n - len(texts))
    files, offsets = places if places is not None else (pa.nulls(n, pa.string()), pa.nulls(n, pa.int64()))
    return pa.table({
        "capture_id": pa.array([cid] * n, pa.string()), "record_id": record_ids,
        "value": pa.array(texts, pa.string()), "file": files, "offset": offsets,
        LATER: pa.array([False] * len(now) + [later] * (n - len(now)), pa.bool_()),
    }, schema=_schema())


def check_sources(point: CapturePoint, sources: set[str]) -> None:
    """Raises InputChangedError when one of ``sources`` (paths of the point's input files) changed
    since capture: a trace over it fails at once, not when a page of its records is read."""
    files = getattr(point.layout, "files", None)
    if files:
        check_files([f for f in files if f["path"] in sources])


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


def _columns(pf: Any) -> list[str]:
    """The columns a reader takes (results written before values were read later have no ``LATER``)."""
    return [*COLUMNS, LATER] if LATER in pf.schema_arrow.names else list(COLUMNS)


def _records(table: Any, values: ValueFetcher | None) -> list[dict[str, Any]]:
    """A result table's rows as records, the values of rows marked ``LATER`` fetched by point
    with ``values`` (only those rows' ids).

    Raises:
        ValuesNotAvailable: rows need values and ``values`` is None.
    """
    rows = table.to_pylist()
    wanted: dict[str, list[int]] = {}
    for row in rows:
        if row.get(LATER):
            wanted.setdefault(row["capture_id"], []).append(row["record_id"])
    if wanted and values is None:
        raise ValuesNotAvailable("this result's values are read from the run's sources: give a value reader")
    fetched = {cid: values(cid, BitMap64(ids)) for cid, ids in wanted.items()} if values is not None else {}
    out = []
    for row in rows:
        record = _as_record(row)
        if row.get(LATER):
            found = fetched[row["capture_id"]]
            record["value"] = json_value(found[row["record_id"]]) if row["record_id"] in found else None
        out.append(record)
    return out


def session_values(session: TraceSession) -> ValueFetcher:
    """A ``ValueFetcher`` over a run's lineage (its value reader, as ``write_result`` would read)."""
    def fetch(cid: str, ids: BitMap64) -> dict[int, Any]:
        return dict(session.values.values(session.store.point(cid), ids))
    return fetch


def result_rows(fs: StoreFS, path: str) -> int:
    return int(_table(fs, path).metadata.num_rows)


def result_points(fs: StoreFS, path: str) -> dict[str, bool]:
    """The capture points of a result, each with whether values of its records are read later."""
    pf = _table(fs, path)
    table = pf.read(columns=["capture_id", *([LATER] if LATER in pf.schema_arrow.names else [])])
    later = table.column(LATER).to_pylist() if LATER in table.column_names else None
    points: dict[str, bool] = {}
    for i, cid in enumerate(table.column("capture_id").to_pylist()):
        points[cid] = points.get(cid, False) or bool(later and later[i])
    return points


def read_page(fs: StoreFS, path: str, start: int, size: int, capture_id: str | None = None,
              values: ValueFetcher | None = None) -> tuple[int, list[dict[str, Any]]]:
    """(rows in all, the records of rows ``start`` to ``start + size``), of one point when given;
    values not in the file are fetched with ``values`` for those rows alone.

    Raises:
        ValuesNotAvailable, InputChangedError: values are needed and cannot be read.
    """
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
    return total, _records(take_rows(pf, _columns(pf), rows), values)


def iter_records(fs: StoreFS, path: str, values: ValueFetcher | None = None) -> Iterator[dict[str, Any]]:
    """Every record of a result, a row group at a time (any size, bounded memory); values not in
    the file fetched with ``values`` a row group at a time."""
    pf = _table(fs, path)
    columns = _columns(pf)
    for group in range(pf.metadata.num_row_groups):
        yield from _records(pf.read_row_group(group, columns=columns), values)


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
