"""The base class of table layouts, and what a layout needs from the code that traces with it.

A layout owns everything about one shape of association table: its columns, its task-side
writer (a ``write`` class method called by the task code in ``worker/``), the backward and
forward steps of a trace through it (split into units of one partition table each, which run in
the tracing process or as Spark tasks), the ids of all its records, the values and positions of
its records where the table or the source keeps them, and its deletion rule. Its details (the
typed fields of a subclass: input files, a union's ranges, a group's mode...) are written to the
run's manifest.

Task-safe: the ``*_table`` methods run inside Spark tasks (the class travels by value).
"""

from __future__ import annotations

import dataclasses
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple, Protocol

from pyroaring import BitMap, BitMap64

from capture_agent.record.storage.deletion import Copy, DeletionRule, Product, Sum, Token
from capture_agent.record.storage.fs import StoreFS
from capture_agent.record.storage.ids import SHIFT, in_partition, split_by_partition, union_all
from capture_agent.record.storage.layouts.counts import RowCounts, row_counts
from capture_agent.record.storage.tables import ROW_GROUP, ROW_GROUP_SETS, TableSink, read_rows

Unit = tuple[Any, ...]
Predicate = Callable[[Any], bool] | None
assert array("I").itemsize == 4 and array("q").itemsize == 8


class Position(NamedTuple):
    """Where a record lives: a file and byte offset (text), a file and row index (Parquet), the
    index in an action's result ("result"), or a capture point and record id."""

    source: str
    offset: int


class CapturePoint(Protocol):
    """What a layout reads of a capture point (``storage.point.CapturePoint``)."""

    capture_id: str
    kind: str
    parents: list[str]
    num_partitions: int
    location: str
    rows: int
    bytes: int

    @property
    def layout(self) -> Layout: ...

    def table_path(self, part: int) -> str: ...

    def partial_path(self, part: int) -> str: ...

    def partition_rows(self, store: StoreFS) -> dict[int, int]: ...


class StepContext(Protocol):
    """What a layout's trace steps need from the engine."""

    @property
    def fs(self) -> StoreFS: ...

    def run_units(self, fn: Callable[..., Any], units: list[Unit], cost: int) -> list[Any]: ...

    def point(self, capture_id: str) -> CapturePoint: ...


class ValueContext(StepContext, Protocol):
    """What reading values needs beyond a step: the values at another point (a union's parents)."""

    # ``point``: a point ``point()`` returned (the reader reads fields of the full CapturePoint)
    def values(self, point: Any, ids: BitMap64, predicate: Predicate = None) -> list[tuple[int, Any]]: ...


class MissingTable(FileNotFoundError):
    """A partition table a trace step needs was never written."""


# ---------------------------------------------------------------- arrow helpers (task side)

def dense_out_ids(part: int, n: int) -> Any:
    """(part, 0), (part, 1)... as an int64 column, built in C++ (a Python range costs 80 ns a row)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if n == 0:
        return pa.array([], type=pa.int64())
    return pc.cumulative_sum(pa.repeat(pa.scalar(1, pa.int64()), n), start=(part << SHIFT) - 1)


def u32_column(values: array) -> Any:
    import pyarrow as pa

    return pa.Array.from_buffers(pa.uint32(), len(values), [None, pa.py_buffer(values)])


def i64_column(values: array) -> Any:
    import pyarrow as pa

    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


def _copied(column: Any, typecode: str) -> array:
    """A pyarrow array or chunked array of fixed-width ints (no nulls) as an array of ``typecode``,
    copied in C."""
    out = array(typecode)
    column = column.combine_chunks() if hasattr(column, "combine_chunks") else column
    if len(column):
        width = out.itemsize
        out.frombytes(memoryview(column.buffers()[1])[column.offset * width:(column.offset + len(column)) * width])
    return out


def int64_values(column: Any) -> array:
    """A pyarrow int64 array (no nulls) as array('q'), copied in C."""
    return _copied(column, "q")


def uint32_values(column: Any) -> array:
    """A pyarrow uint32 array (no nulls) as array('I'), copied in C (pyroaring reads it fast)."""
    return _copied(column, "I")


def list_rows_meeting(column: Any, wanted: Any) -> list[int]:
    """Rows of a list column that hold any of ``wanted`` (a pyarrow array of the lists' value type)."""
    import pyarrow.compute as pc

    column = column.combine_chunks()
    hits = pc.is_in(pc.list_flatten(column), value_set=wanted)
    return sorted(set(pc.list_parent_indices(column).filter(hits).to_pylist()))


def set_rows_meeting(blobs: list[bytes | None], ids: bytes) -> list[int]:
    """Rows of a column of serialized BitMap64s (None: no ids) that hold any of ``ids`` (serialized)."""
    wanted = BitMap64.deserialize(ids)
    return [i for i, blob in enumerate(blobs) if blob is not None and BitMap64.deserialize(blob).intersect(wanted)]


def bitmap_bytes(positions: Any) -> bytes:
    bm = BitMap(positions)
    bm.run_optimize()
    return bytes(bm.serialize())


def bitmap64_bytes(ids: Any) -> bytes:
    """``ids``: ints, an array('q') or an array('q')'s bytes."""
    if isinstance(ids, bytes) or (isinstance(ids, array) and ids.typecode == "q"):
        unsigned = array("Q")  # ids are >= 0: read as uint64 (BitMap64 takes the buffer)
        unsigned.frombytes(ids)
        ids = unsigned
    bm = BitMap64(ids)
    bm.run_optimize()
    return bytes(bm.serialize())


def write_sets(target: TableSink, part: int, sets: list[bytes]) -> None:
    """A table of out_id and one serialized id set per row (``in_ids``)."""
    import pyarrow as pa

    target.write(part, {"out_id": dense_out_ids(part, len(sets)), "in_ids": pa.array(sets, type=pa.binary())})


def serialize_all(bitmaps: list[BitMap64]) -> list[bytes]:
    for bm in bitmaps:
        bm.run_optimize()
    return [bytes(bm.serialize()) for bm in bitmaps]


def per_parent(point: CapturePoint, outputs: list[list[bytes]]) -> dict[str, BitMap64]:
    """Backward units' outputs (per unit, one serialized id set per parent slot) as ids per parent."""
    result: dict[str, BitMap64] = {}
    for slots in outputs:
        for slot, blob in enumerate(slots):
            bm = BitMap64.deserialize(blob)
            if bm:
                result.setdefault(point.parents[slot], BitMap64()).__ior__(bm)
    return result


def require(store: StoreFS, path: str) -> None:
    if not store.exists(path):
        raise MissingTable(f"lineage table {path} is missing: its task did not write it (see the job's log)")


# ---------------------------------------------------------------- the base class

@dataclass
class Layout:
    """One shape of association table (see the module docstring); subclasses add typed details."""

    name: ClassVar[str] = ""
    columns: ClassVar[tuple[str, ...]] = ()
    local: ClassVar[bool] = False  # ids at the parent are positions in the same partition
    virtual: ClassVar[bool] = False  # no table: a mapping of partitions (union)
    id_sets: ClassVar[bool] = False  # rows hold sets of ids (small row groups)
    # values are read from the files the job read, nothing unpickled: read when a trace's page is (web process)
    source_values: ClassVar[bool] = False

    mode: str = ""  # the operator family the rows come from (group, join, left, subtract...)

    # ------------------------------------------------------------------ details
    def files_read(self) -> list[str]:
        """The paths of the files an input point read (none for other points)."""
        return []

    def record_fields(self) -> list[str] | None:
        """The names of its records' fields where the point knows them (a DataFrame source's
        columns), else None."""
        return None

    def details(self) -> dict[str, Any]:
        """The typed fields, as written to the manifest (defaults left out)."""
        out = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
            if value != default:
                out[f.name] = value
        return out

    @classmethod
    def from_details(cls, data: dict[str, Any]) -> Layout:
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    # ------------------------------------------------------------------ deletion
    def deletion(self, kind: str) -> DeletionRule:
        """The deletion rule of a point of this layout and ``kind`` (see ``storage.deletion``)."""
        if kind == "input":
            return Token()
        if kind in ("combiner", "reducer"):
            return Sum()
        if kind == "join":
            return Product()
        return Copy()

    # ------------------------------------------------------------------ backward
    def slots(self, nparents: int) -> int:
        """How many parents the table's id columns refer to (1: the first parent only)."""
        return 1

    def backward(self, ctx: StepContext, point: CapturePoint, ids: BitMap64) -> dict[str, BitMap64]:
        """Ids at each parent of ``point`` that the records ``ids`` at ``point`` came from."""
        parts = self.backward_parts(point, ids)
        units = [(ctx.fs, point.table_path(p), p, blob, len(point.parents)) for p, blob in parts]
        return per_parent(point, ctx.run_units(self.backward_table, units, self.backward_cost(ctx.fs, point, units)))

    def backward_parts(self, point: CapturePoint, ids: BitMap64) -> list[tuple[int, bytes | None]]:
        """(partition, serialized wanted positions or None for all rows) of the tables to read."""
        return [(p, positions.serialize()) for p, positions in split_by_partition(ids)]

    def backward_cost(self, store: StoreFS, point: CapturePoint, units: list[Unit]) -> int:
        """Bytes a backward step reads: only the row groups holding the wanted rows."""
        per_row = point.bytes / max(point.rows, 1)
        group = ROW_GROUP_SETS if self.id_sets else ROW_GROUP
        cost = 0
        for unit in units:
            size = store.size(unit[1])
            cost += size if unit[3] is None else min(size, int(len(BitMap.deserialize(unit[3])) * group * per_row))
        return cost

    def backward_table(self, store: StoreFS, path: str, part: int, positions: bytes | None,
                       nparents: int) -> list[bytes]:
        """Task side: ids at each parent slot of rows ``positions`` (None: all) of one table."""
        require(store, path)
        rows = None if positions is None else list(BitMap.deserialize(positions))
        table = read_rows(store, path, self.id_columns(nparents), rows)
        return serialize_all(self.in_ids(table, part, nparents))

    def id_columns(self, nparents: int) -> list[str]:
        return [c for c in self.columns if c.startswith("in_")]

    def in_ids(self, table: Any, part: int, nparents: int) -> list[BitMap64]:
        """The input ids of a table's rows, one bitmap per parent slot."""
        raise NotImplementedError(self.name)

    # ------------------------------------------------------------------ forward
    def forward(self, ctx: StepContext, child: CapturePoint, parent_id: str, ids: BitMap64) -> BitMap64:
        """Ids at ``child`` (a point of this layout) of the records that used any of ``ids`` at
        its parent ``parent_id``."""
        slots = [i for i, p in enumerate(child.parents) if p == parent_id and i < self.slots(len(child.parents))]
        units: list[Unit] = []
        for slot in slots:
            if self.local:
                for part, positions in split_by_partition(ids):
                    units.append((ctx.fs, child.table_path(part), part, slot, positions.serialize()))
            else:
                blob = ids.serialize()
                units.extend((ctx.fs, child.table_path(p), p, slot, blob) for p in range(child.num_partitions))
        outputs = ctx.run_units(self.forward_table, units, sum(ctx.fs.size(u[1]) for u in units))
        return union_all(BitMap64.deserialize(b) for b in outputs)

    def forward_table(self, store: StoreFS, path: str, part: int, slot: int, ids: bytes) -> bytes:
        """Task side: out ids of the rows of one table whose inputs at ``slot`` meet ``ids``."""
        if not store.exists(path):
            return bytes(BitMap64().serialize())
        rows = self.rows_using(store, path, slot, ids)
        hi = part << SHIFT
        return bytes(BitMap64([hi | r for r in rows]).serialize())

    def rows_using(self, store: StoreFS, path: str, slot: int, ids: bytes) -> list[int]:
        """Row numbers of one table whose inputs at ``slot`` meet ``ids`` (serialized)."""
        raise NotImplementedError(self.name)

    # ------------------------------------------------------------------ deletion propagation
    keep_all_rows: ClassVar[bool] = False  # rows of one output spread over partitions (counts add up)

    def row_inputs(self, table: Any, part: int, nparents: int) -> list[Any]:
        """Per parent slot, each row's input ids (global int64 ids) as a pyarrow ListArray."""
        raise NotImplementedError(self.name)

    def counts(self, ctx: StepContext, point: CapturePoint, lost: list[BitMap64],
               changed: list[BitMap64]) -> list[RowCounts]:
        """Deletion counts (``layouts.counts``) of the rows of ``point`` whose inputs meet
        ``lost`` or ``changed`` (ids at each parent slot), one ``RowCounts`` per table read."""
        nslots = self.slots(len(point.parents))
        if self.local and not self.keep_all_rows:
            parts = [p for p, _ in split_by_partition(union_all((*lost[:nslots], *changed[:nslots])))]
        else:
            parts = list(range(point.num_partitions))

        def serialized(ids: list[BitMap64], part: int | None) -> list[bytes]:
            return [bytes((b if part is None else in_partition(b, part)).serialize()) for b in ids[:nslots]]

        nparents = len(point.parents)
        if self.local:  # a local table's rows have inputs of its own partition only: it is sent those ids
            units = [(ctx.fs, point.table_path(p), p, nparents, serialized(lost, p), serialized(changed, p))
                     for p in parts]
        else:  # every table is sent every id, serialized once
            every = (serialized(lost, None), serialized(changed, None))
            units = [(ctx.fs, point.table_path(p), p, nparents, *every) for p in parts]
        outputs = ctx.run_units(self.counts_table, units, sum(ctx.fs.size(u[1]) for u in units))
        return [c for c in outputs if c is not None]

    def counts_table(self, store: StoreFS, path: str, part: int, nparents: int, lost: list[bytes],
                     changed: list[bytes]) -> RowCounts | None:
        """Task side of ``counts``: one partition table (None when its task wrote none)."""
        if not store.exists(path):
            return None
        table = read_rows(store, path, ["out_id", *self.id_columns(nparents)])
        per_slot, positions_of = self.count_inputs(table, part, nparents)
        return row_counts(table.column("out_id").combine_chunks(), per_slot,
                          [BitMap64.deserialize(b) for b in lost], [BitMap64.deserialize(b) for b in changed],
                          self.keep_all_rows, positions_of)

    def count_inputs(self, table: Any, part: int, nparents: int) -> tuple[list[Any], int | None]:
        """Each row's inputs as ``row_counts`` counts them: per slot, ListArrays of global ids
        (``row_inputs``, and None), or of positions of partition ``part`` (and ``part``), which a
        partition-local layout gives without lifting them to ids."""
        return self.row_inputs(table, part, nparents), None

    # ------------------------------------------------------------------ export
    def associations(self, store: StoreFS, point: CapturePoint,
                     lookup: Callable[[str], CapturePoint]) -> Iterator[tuple[Any, list[Any]]]:
        """Per partition table, its out ids (int64) and, per parent slot, each row's input ids (a
        ListArray of global ids): the edges of the run's lineage graph, as triples export them.
        ``lookup`` gives another point of the run by id.

        Raises:
            NotImplementedError: the layout keeps no per-row inputs (``row_inputs``).
        """
        nparents = len(point.parents)
        for part in sorted(point.partition_rows(store)):
            table = read_rows(store, point.table_path(part), ["out_id", *self.id_columns(nparents)])
            yield table.column("out_id").combine_chunks(), self.row_inputs(table, part, nparents)

    # ------------------------------------------------------------------ records
    def all_ids(self, store: StoreFS, point: CapturePoint) -> BitMap64:
        """Every record id at a point (row i of partition p is record (p, i))."""
        out = BitMap64()
        for part, rows in point.partition_rows(store).items():
            if rows:
                out.add_range(part << SHIFT, (part << SHIFT) + rows)
        return out

    def values(self, ctx: ValueContext, point: CapturePoint, ids: BitMap64,
               predicate: Predicate) -> list[tuple[int, Any]] | None:
        """(id, value) of records whose values this layout keeps, sorted by id; None when it keeps none."""
        return None

    def positions(self, ctx: ValueContext, point: CapturePoint, ids: BitMap64) -> list[Position] | None:
        """Where the records live, when this layout knows; None otherwise."""
        return None

    def places(self, ctx: ValueContext, point: CapturePoint, ids: BitMap64) -> tuple[Any, Any] | None:
        """``positions`` as two Arrow arrays, sources (string) and offsets (int64), in id order
        (a trace's answer is written as columns); None when this layout does not know."""
        import pyarrow as pa

        known = self.positions(ctx, point, ids)
        if known is None:
            return None
        return pa.array([p.source for p in known], pa.string()), pa.array([p.offset for p in known], pa.int64())

    def text_units(self, store: StoreFS, point: CapturePoint, ids: BitMap64,
                   predicate: Predicate) -> list[tuple[Any, ...]] | None:
        """Units that read the records behind ids from text files, for a Spark job; None when the
        records are not lines of text files."""
        return None


def filtered(pairs: Sequence[tuple[int, Any]], predicate: Predicate) -> list[tuple[int, Any]]:
    return list(pairs) if predicate is None else [(i, v) for i, v in pairs if predicate(v)]
