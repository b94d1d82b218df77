"""Task code of captured DataFrames (``capture.frames``): a row's hidden id columns as the id sets
of a ``sets`` table, and a captured RDD's records given their ids as they become rows."""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from pyroaring import BitMap64

from capture_agent.record.storage.ids import SHIFT
from capture_agent.record.storage.layouts.shuffled import write_sets_per_parent
from capture_agent.record.storage.tables import TableTarget

EMPTY = bytes(BitMap64().serialize())


def id_sets(rows: Sequence[Sequence[Any]], sets: Sequence[bool]) -> list[list[bytes]]:
    """Per source, each row's ids serialized: ``rows`` hold the hidden values in source order, an
    id (bigint) or, where ``sets`` says so, an id set (serialized already); None is no id."""
    out: list[list[bytes]] = []
    for k, is_set in enumerate(sets):
        if is_set:
            out.append([EMPTY if row[k] is None else bytes(row[k]) for row in rows])
        else:  # an id column holding nulls reaches pandas as floats: ids are ints
            out.append([EMPTY if row[k] is None else one_id_set(int(row[k])) for row in rows])
    return out


# BitMap64([id]).serialize(), field by field (Roaring's portable 64-bit format): one 32-bit bucket
# (count, high half), then a 32-bit bitmap of one array container (cookie, count, key and
# cardinality - 1, offset of its data, the low 16 bits)
_ONE_ID = "<QIIIHHIH"  # a format, not a struct.Struct: task code travels pickled, and a Struct does not
_COOKIE = 12346  # SERIAL_COOKIE_NO_RUNCONTAINER


def one_id_set(i: int) -> bytes:
    """``bytes(BitMap64([i]).serialize())`` (``i`` not negative), packed directly: a 200,000-row
    collect of an aggregate made each through a BitMap64 in a microsecond."""
    return struct.pack(_ONE_ID, 1, i >> 32, _COOKIE, 1, (i >> 16) & 0xFFFF, 0, 16, i & 0xFFFF)


def lineage_writer(target: TableTarget, sets: list[bool]) -> Any:
    """For ``mapPartitionsWithIndex`` over a frame's hidden columns: writes each partition's table
    and yields (partition, rows)."""

    def write(part: int, rows: Iterable[Any]) -> Iterator[tuple[int, int]]:
        hidden = list(rows)
        if hidden:
            write_sets_per_parent(target, part, id_sets(hidden, sets))
        return iter([(part, len(hidden))])

    return write


def frame_rows_agent(target: TableTarget, names: list[str], visible: list[int], hidden: list[int],
                     sets: list[bool]) -> Any:
    """A captured DataFrame's rows as RDD records: (i, Row of the visible columns), and one table
    per partition of each row's ids per source (its hidden columns)."""

    def agent(split: int, iterator: Iterable[Any]) -> Iterator[tuple[int, Any]]:
        from pyspark.sql.types import _create_row

        kept = []
        i = 0
        for row in iterator:
            kept.append([row[c] for c in hidden])
            yield i, _create_row(names, [row[c] for c in visible])
            i += 1
        write_sets_per_parent(target, split, id_sets(kept, sets))

    return agent


def with_ids(names: list[str]) -> Any:
    """(i, record) pairs of a stage point -> rows of the record's fields and its id (p, i): Rows,
    tuples or lists by position, dicts by field name, anything else as one field."""

    def add(split: int, pairs: Iterable[tuple[int, Any]]) -> Iterator[tuple[Any, ...]]:
        high = split << SHIFT
        for i, value in pairs:
            if isinstance(value, dict):
                yield (*[value.get(n) for n in names], high | i)
            elif isinstance(value, (tuple, list)):
                yield (*value, high | i)
            else:
                yield (value, high | i)

    return add


def one_field(line: str) -> tuple[str]:
    """A text line as a one-field row."""
    return (line,)
