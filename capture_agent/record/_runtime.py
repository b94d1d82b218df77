"""Task-side capture agents: the code that runs inside Spark's Python workers.

Everything here is shipped to the workers by value (see ``context.py``), so it imports only the
standard library, pyroaring and (lazily) pyarrow. Each agent writes its partition's association
table once, when the partition's records are known, as ``part-NNNNN.parquet`` in the capture
point's folder. A table that already exists is left alone: a recomputed partition (a second job
over the same RDD, a replay for values) yields the same records, and the first write wins.
"""

from __future__ import annotations

import os
import pickle
import uuid
from array import array
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from pyroaring import BitMap, BitMap64

SHIFT = 32
ROW_GROUP = 16384
ROW_GROUP_BITMAPS = 1024  # a trace of one record reads one row group: keep those of bitmaps small
_INT_ENCODING = "DELTA_BINARY_PACKED"

assert array("I").itemsize == 4 and array("q").itemsize == 8


class LimitReached(Exception):
    """Raised inside a stage function when take() has all the records it asked for."""


def table_file(location: str, part: int) -> str:
    return f"{location}/part-{part:05d}.parquet"


def partial_file(location: str, part: int) -> str:
    """A prefix of a partition's input table, written when take() stopped reading early."""
    return f"{location}/partial-{part:05d}.parquet"


def _arrow() -> tuple[Any, Any]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    return pa, pq


def _dense_out_ids(pa: Any, part: int, n: int) -> Any:
    """(part, 0), (part, 1)... as an int64 column, built in C++ (a Python range costs 80 ns a row)."""
    import pyarrow.compute as pc

    if n == 0:
        return pa.array([], type=pa.int64())
    return pc.cumulative_sum(pa.repeat(pa.scalar(1, pa.int64()), n), start=(part << SHIFT) - 1)


def _u32(pa: Any, values: array) -> Any:
    return pa.Array.from_buffers(pa.uint32(), len(values), [None, pa.py_buffer(values)])


def _i64(pa: Any, values: array) -> Any:
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


def write_table(location: str, part: int, columns: dict[str, Any]) -> None:
    """Writes one partition's association table unless it exists (write once, atomically).

    A storage failure is reported on the task's stderr and does not fail the job: a trace that
    needs the table then says it is missing.
    """
    try:
        _write_table(location, part, columns)
    except OSError as exc:
        import sys

        print(f"lineage: cannot write {table_file(location, part)}: {exc}", file=sys.stderr)


def _write_table(location: str, part: int, columns: dict[str, Any]) -> None:
    final = table_file(location, part)
    if os.path.exists(final):
        return
    pa, pq = _arrow()
    os.makedirs(location, exist_ok=True)
    table = pa.table(columns)
    encodings = {}
    compression: dict[str, str] = {}
    for name, column in zip(table.column_names, table.columns, strict=True):
        if pa.types.is_integer(column.type):
            encodings[name] = _INT_ENCODING
        if pa.types.is_binary(column.type) and name.startswith("in_ids"):
            compression[name] = "NONE"  # roaring bitmaps are already compact
        else:
            compression[name] = "SNAPPY"
    tmp = f"{location}/.tmp-{part:05d}-{uuid.uuid4().hex}.parquet"
    has_sets = any(pa.types.is_binary(c.type) or pa.types.is_list(c.type) for c in table.columns)
    pq.write_table(table, tmp, row_group_size=ROW_GROUP_BITMAPS if has_sets else ROW_GROUP, use_dictionary=False,
                   column_encoding=encodings, compression=compression)
    try:
        os.link(tmp, final)
    except FileExistsError:
        pass
    finally:
        os.unlink(tmp)


def finish_text_input(location: str, part: int, offsets: array, complete: bool, base: int = 0) -> None:
    """Text input table of one split: line number -> byte offset from the split's start.

    ``offsets`` are the lines' file offsets, as array('q') (minus ``base``: the split's start) or
    array('I') (already relative).
    """
    pa, pq = _arrow()
    if offsets.typecode == "q":
        import pyarrow.compute as pc

        relative = pc.cast(pc.subtract(_i64(pa, offsets), pa.scalar(base, pa.int64())), pa.uint32())
    else:
        relative = _u32(pa, offsets)
    columns = {"out_id": _dense_out_ids(pa, part, len(offsets)), "offset": relative}
    if complete:
        write_table(location, part, columns)
        try:
            os.unlink(partial_file(location, part))
        except FileNotFoundError:
            pass
        return
    if os.path.exists(table_file(location, part)):
        return
    partial = partial_file(location, part)
    if os.path.exists(partial) and pq.ParquetFile(partial).metadata.num_rows >= len(offsets):
        return
    os.makedirs(location, exist_ok=True)
    tmp = f"{location}/.tmp-partial-{part:05d}-{uuid.uuid4().hex}.parquet"
    pq.write_table(pa.table(columns), tmp, use_dictionary=False,
                   column_encoding={"out_id": _INT_ENCODING, "offset": _INT_ENCODING})
    os.replace(tmp, partial)


def _bitmap_bytes(positions: Iterable[int]) -> bytes:
    bm = BitMap(positions)
    bm.run_optimize()
    return bm.serialize()


def _bitmap64_bytes(ids: list[int]) -> bytes:
    bm = BitMap64(ids)
    bm.run_optimize()
    return bm.serialize()


# ---------------------------------------------------------------- stage tails (called by generated code)

def finish_one_local(location: str, part: int, positions: array) -> None:
    """Output/stage table: out_id = (part, i) -> in_id = position i of the stage's input."""
    pa, _ = _arrow()
    write_table(location, part, {"out_id": _dense_out_ids(pa, part, len(positions)),
                                 "in_id": _u32(pa, positions)})


def finish_single(location: str, part: int, positions: array) -> None:
    """Aggregate output (count, reduce, sum...): the one result record <- every record of the part."""
    pa, _ = _arrow()
    write_table(location, part, {"out_id": pa.array([0], type=pa.int64()),
                                 "in_ids": pa.array([_bitmap_bytes(positions)], type=pa.binary())})


def finish_save(location: str, part: int, offsets: array, positions: array) -> None:
    """saveAsTextFile: out_id = (part file, byte offset of the line) -> in_id position."""
    pa, _ = _arrow()
    hi = part << SHIFT
    out = array("q", [hi | o for o in offsets])
    write_table(location, part, {"out_id": _i64(pa, out), "in_id": _u32(pa, positions)})


def _positions_by_slot(slots: array, positions: array | None) -> tuple[memoryview, list[int]]:
    """The positions of each key, grouped by key slot (0, 1, ...), with one C++ sort.

    Returns the grouped positions (uint32) and how many each slot has. Slots are numbered in
    first-seen order, so value_counts (first-seen order) lists the counts in slot order.
    """
    pa, _ = _arrow()
    import pyarrow.compute as pc

    n = len(slots)
    if n == 0:
        return memoryview(array("I")), []
    slot_array = pa.Array.from_buffers(pa.uint32(), n, [None, pa.py_buffer(slots)])
    order = pc.sort_indices(slot_array)  # stable
    if positions is None:  # record i has position i
        grouped = pc.cast(order, pa.uint32())
    else:
        grouped = pc.take(pa.Array.from_buffers(pa.uint32(), n, [None, pa.py_buffer(positions)]), order)
    counts = pc.value_counts(slot_array).field("counts").to_pylist()
    view = memoryview(grouped.buffers()[1]).cast("B").cast("I")[grouped.offset: grouped.offset + n]
    return view, counts


def finish_combiner(location: str, part: int, keys: dict, values: list, slots: array, positions: array | None,
                    ) -> Iterator[tuple[Any, tuple[Any, int]]]:
    """Map-side combine: writes combiner id -> bitmap of input positions, yields shuffle records."""
    pa, _ = _arrow()
    grouped, counts = _positions_by_slot(slots, positions)
    serialized = []
    start = 0
    for count in counts:
        bm = BitMap(grouped[start:start + count])
        bm.run_optimize()
        serialized.append(bm.serialize())
        start += count
    write_table(location, part, {"out_id": _dense_out_ids(pa, part, len(serialized)),
                                 "in_ids": pa.array(serialized, type=pa.binary())})
    hi = part << SHIFT
    for key, slot in keys.items():
        yield key, (values[slot], hi | slot)


def finish_group(part: int, side: int, keys: dict, values: list, slots: array, positions: array | None,
                 ) -> Iterator[tuple[Any, tuple[int, list, array, int]]]:
    """Map side of groupByKey/join/cogroup: values and their positions travel per key, aligned."""
    grouped, counts = _positions_by_slot(slots, positions)
    start = 0
    for key, slot in keys.items():
        chunk = array("I")
        chunk.frombytes(grouped[start:start + counts[slot]].tobytes())
        start += counts[slot]
        yield key, (side, values[slot], chunk, part)


# ---------------------------------------------------------------- input agents

def _short_repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 200 else text[:197] + "..."


def _dumps(value: Any) -> bytes:
    try:
        return pickle.dumps(value, protocol=5)
    except Exception:  # noqa: BLE001 - lambdas and friends
        from pyspark import cloudpickle

        return cloudpickle.dumps(value, protocol=5)


def values_input_agent(location: str) -> Callable[[int, Iterable[Any]], Iterator[tuple[int, Any]]]:
    """parallelize(): records get (partition, index) ids; the values are kept for traces."""

    def agent(split: int, iterator: Iterable[Any]) -> Iterator[tuple[int, Any]]:
        pickles: list[bytes] = []
        texts: list[str] = []
        i = 0
        for value in iterator:
            pickles.append(_dumps(value))
            texts.append(_short_repr(value))
            yield i, value
            i += 1
        pa, _ = _arrow()
        write_table(location, split, {"out_id": _dense_out_ids(pa, split, i),
                                      "value": pa.array(pickles, type=pa.binary()),
                                      "text": pa.array(texts, type=pa.string())})

    return agent


def parquet_input_agent(location: str) -> Callable[[int, Iterable[Any]], Iterator[tuple[int, Any]]]:
    """DataFrame rows with _metadata.file_path/row_index: ids (partition, i), segments kept."""

    def agent(split: int, iterator: Iterable[Any]) -> Iterator[tuple[int, Any]]:
        from pyspark.sql.types import _create_row

        fields = None
        seg_start: list[int] = []
        seg_file: list[str] = []
        seg_row: list[int] = []
        seg_count: list[int] = []
        path = None
        expected = -1
        i = 0
        for row in iterator:
            if fields is None:
                fields = list(row.__fields__[:-2])
            file_path, row_index = row[-2], row[-1]
            if file_path != path or row_index != expected:
                seg_start.append(i)
                seg_file.append(file_path)
                seg_row.append(row_index)
                seg_count.append(0)
                path = file_path
            seg_count[-1] += 1
            expected = row_index + 1
            yield i, _create_row(fields, row[:-2])
            i += 1
        pa, _ = _arrow()
        write_table(location, split, {"local_start": pa.array(seg_start, type=pa.int64()),
                                      "file": pa.array(seg_file, type=pa.string()),
                                      "row_start": pa.array(seg_row, type=pa.int64()),
                                      "count": pa.array(seg_count, type=pa.int64())})

    return agent


def csv_input_agent(location: str, bases: list[int], header: bool, columns: list[str], sep: str, quote: str,
                    ) -> Callable[[int, Iterable[Any]], Iterator[tuple[int, Any]]]:
    """CSV read as text lines (ids and offsets like textFile) parsed like Spark's reader."""

    def agent(split: int, iterator: Iterable[Any]) -> Iterator[tuple[int, Any]]:
        import csv

        from pyspark.sql.types import _create_row

        base = bases[split]
        width = len(columns)
        offsets = array("I")
        for pos, (offset, line) in enumerate(iterator):
            offsets.append(offset - base)
            if header and offset == 0:
                continue
            fields = next(csv.reader([line], delimiter=sep, quotechar=quote), [])
            values: list[Any] = [f if f != "" else None for f in fields[:width]]
            values.extend([None] * (width - len(values)))
            yield pos, _create_row(columns, values)
        finish_text_input(location, split, offsets, True)

    return agent
