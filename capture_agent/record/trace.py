"""The trace engine: one step backward or forward through a capture point's association table.

A frontier is a set of 64-bit ids at one capture point. A backward step reads only the partition
tables whose partitions hold ids of the frontier (the id's high bits name them: Titian's
partition-aware join) and only the row groups holding those rows. A forward step reads the
child's tables: only the frontier's partitions for partition-local layouts, all partitions
otherwise. Each step is a list of independent units (one partition table each): small steps run
in this process, large ones as a Spark job over the units when a SparkContext is at hand.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Callable
from typing import Any

from pyroaring import BitMap, BitMap64

from capture_agent.record.ids import SHIFT, lift, split_by_partition, union_all
from capture_agent.record.store import LOCAL_LAYOUTS, CapturePoint, LineageStore

SPARK_MIN_BYTES = 256 * 1024 * 1024  # a step reading less than this runs in this process

Unit = tuple[Any, ...]


def _read(path: str, columns: list[str], rows: list[int] | None) -> Any:
    """Columns of a table, or only ``rows`` of it (reading just the row groups that hold them)."""
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(path)
    if rows is None:
        return pf.read(columns=columns)
    meta = pf.metadata
    starts = []
    total = 0
    for g in range(meta.num_row_groups):
        starts.append(total)
        total += meta.row_group(g).num_rows
    rows = [r for r in rows if r < total]
    groups = sorted({bisect.bisect_right(starts, r) - 1 for r in rows})
    if not groups:
        return pf.schema_arrow.empty_table().select(columns)
    table = pf.read_row_groups(groups, columns=columns)
    base = {}
    acc = 0
    for g in groups:
        base[g] = acc
        acc += meta.row_group(g).num_rows
    indices = [base[g] + r - starts[g] for r in rows for g in (bisect.bisect_right(starts, r) - 1,)]
    return table.take(indices)


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _slots(layout: str, nparents: int) -> int:
    return nparents if layout in ("sets", "pair") else 1


def backward_unit(layout: str, path: str, part: int, positions: bytes | None, nparents: int,
                  by_out_id: bool) -> list[bytes]:
    """Ids at each parent slot of the rows ``positions`` (None: all rows) of one partition table."""
    import pyarrow.compute as pc

    nslots = _slots(layout, nparents)
    result = [BitMap64() for _ in range(nslots)]
    if not os.path.exists(path):
        raise FileNotFoundError(f"lineage table {path} is missing: its task did not write it (see the job's log)")
    wanted = BitMap.deserialize(positions) if positions is not None else None
    if layout == "set_partition":
        blob = _read(path, ["in_ids"], None).column("in_ids")[0].as_py()
        return [lift(part, BitMap.deserialize(blob)).serialize()]
    columns = {"one_local": ["in_id"], "save": ["out_id", "in_id"], "set_local": ["in_ids"],
               "one_global": ["in_id"], "list_global": ["in_ids"], "set_global": ["in_ids"],
               "pair": ["left_id", "right_id"]}.get(layout) or [f"in_ids_{i}" for i in range(nslots)]
    if by_out_id or wanted is None:
        table = _read(path, columns, None)
        if by_out_id and wanted is not None:
            import pyarrow as pa

            lows = pc.bit_wise_and(table.column("out_id"), pa.scalar((1 << SHIFT) - 1, pa.int64()))
            table = table.filter(pc.is_in(lows, value_set=pa.array(list(wanted), pa.int64())))
    else:
        table = _read(path, columns, list(wanted))
    if layout in LOCAL_LAYOUTS:
        if layout == "set_local":
            local = BitMap()
            for blob in table.column("in_ids").to_pylist():
                local |= BitMap.deserialize(blob)
        else:
            local = BitMap(table.column("in_id").to_pylist())
        result[0] = lift(part, local)
    elif layout == "one_global":
        result[0] = BitMap64(table.column("in_id").to_pylist())
    elif layout == "list_global":
        result[0] = BitMap64(pc.list_flatten(table.column("in_ids")).to_pylist())
    elif layout == "set_global":
        result[0] = union_all(BitMap64.deserialize(b) for b in table.column("in_ids").to_pylist())
    elif layout == "pair":
        for slot, name in enumerate(("left_id", "right_id")):
            result[slot] = BitMap64([x for x in table.column(name).to_pylist() if x is not None])
    else:  # sets
        for slot in range(nslots):
            result[slot] = union_all(BitMap64.deserialize(b) for b in table.column(f"in_ids_{slot}").to_pylist())
    for bm in result:
        bm.run_optimize()
    return [bm.serialize() for bm in result]


def forward_unit(layout: str, path: str, part: int, slot: int, ids: bytes, single: bool) -> bytes:
    """Out ids of the rows of one partition table whose inputs (at parent ``slot``) meet ``ids``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    out = BitMap64()
    if not os.path.exists(path):
        return out.serialize()
    if layout == "set_partition":
        table = _read(path, ["out_count", "in_ids"], None)
        if not BitMap.deserialize(table.column("in_ids")[0].as_py()).intersect(BitMap.deserialize(ids)):
            return out.serialize()
        out.add_range(part << SHIFT, (part << SHIFT) + table.column("out_count")[0].as_py())
        return out.serialize()
    if layout in LOCAL_LAYOUTS:
        local = BitMap.deserialize(ids)
        if layout == "set_local":
            blobs = _read(path, ["in_ids"], None).column("in_ids").to_pylist()
            rows = [i for i, blob in enumerate(blobs) if BitMap.deserialize(blob).intersect(local)]
        else:
            table = _read(path, ["out_id", "in_id"], None)
            mask = pc.is_in(table.column("in_id"), value_set=pa.array(list(local), pa.uint32()))
            if layout == "save":
                return BitMap64(table.column("out_id").filter(mask).to_pylist()).serialize()
            rows = pc.indices_nonzero(mask).to_pylist()
    else:
        wanted = BitMap64.deserialize(ids)
        if layout in ("one_global", "pair"):
            name = "in_id" if layout == "one_global" else ("left_id", "right_id")[slot]
            column = _read(path, [name], None).column(name)
            rows = pc.indices_nonzero(pc.fill_null(pc.is_in(column, value_set=pa.array(list(wanted), pa.int64())),
                                                   False)).to_pylist()
        elif layout == "list_global":
            column = _read(path, ["in_ids"], None).column("in_ids").combine_chunks()
            flat = pc.list_flatten(column)
            parents = pc.list_parent_indices(column)
            hits = pc.is_in(flat, value_set=pa.array(list(wanted), pa.int64()))
            rows = sorted(set(parents.filter(hits).to_pylist()))
        else:  # set_global, sets
            name = "in_ids" if layout == "set_global" else f"in_ids_{slot}"
            blobs = _read(path, [name], None).column(name).to_pylist()
            rows = [i for i, blob in enumerate(blobs) if BitMap64.deserialize(blob).intersect(wanted)]
    if single:
        return BitMap64([0] if rows else []).serialize()
    hi = part << SHIFT
    return BitMap64([hi | r for r in rows]).serialize()


class TraceEngine:
    """Steps through one run's capture points; runs big steps as Spark jobs when it can."""

    def __init__(self, store: LineageStore, sc: Any = None, mode: str = "auto") -> None:
        if mode not in ("auto", "local", "spark"):
            raise ValueError(f"trace mode must be auto, local or spark, not {mode!r}")
        self.store = store
        self.sc = sc
        self.mode = mode
        self.spark_jobs = 0

    # ------------------------------------------------------------------ execution
    def run_units(self, fn: Callable[..., Any], units: list[Unit], cost: int) -> list[Any]:
        """Runs independent units here, or as one Spark job when they would read ``cost`` bytes
        or more (auto mode)."""
        if self._use_spark(cost, len(units)):
            self.spark_jobs += 1
            return self.sc.parallelize(units, len(units)).map(lambda u: fn(*u)).collect()
        return [fn(*u) for u in units]

    def _use_spark(self, cost: int, nunits: int) -> bool:
        if self.sc is None or self.mode == "local" or nunits == 0:
            return False
        return self.mode == "spark" or (nunits > 1 and cost >= SPARK_MIN_BYTES)

    # ------------------------------------------------------------------ steps
    def backward(self, point: CapturePoint, ids: BitMap64) -> dict[str, BitMap64]:
        """Ids at each parent of ``point`` that the records ``ids`` at ``point`` came from."""
        result: dict[str, BitMap64] = {}
        if not ids or not point.parents:
            return result
        if point.is_virtual:
            for part, positions in split_by_partition(ids):
                parent, local_part = self._union_parent(point, part)
                result.setdefault(parent, BitMap64()).__ior__(lift(local_part, positions))
            return result
        if point.layout == "text":
            return self._saved_lines_backward(point, ids)
        single = bool(point.extra.get("single"))
        by_out_id = point.layout == "save"
        if single:
            parts: list[tuple[int, bytes | None]] = [(p, None) for p in range(point.num_partitions)]
        elif point.layout == "set_partition":
            parts = [(p, None) for p, _ in split_by_partition(ids)]
        else:
            parts = [(p, positions.serialize()) for p, positions in split_by_partition(ids)]
        units = [(point.layout, point.table_file(p), p, pos, len(point.parents), by_out_id) for p, pos in parts]
        if single or by_out_id or point.layout == "set_partition":
            cost = sum(_size(u[1]) for u in units)
        else:  # only the row groups holding the wanted rows are read
            per_row = point.bytes / max(point.rows, 1)
            group = 1024 if point.layout in ("set_local", "set_global", "sets", "list_global") else 16384
            cost = sum(min(_size(u[1]), int(len(BitMap.deserialize(u[3])) * group * per_row)) for u in units)
        outputs = self.run_units(backward_unit, units, cost)
        for slots in outputs:
            for slot, blob in enumerate(slots):
                parent = point.parents[slot]
                bm = BitMap64.deserialize(blob)
                if bm:
                    result.setdefault(parent, BitMap64()).__ior__(bm)
        return result

    def forward(self, child: CapturePoint, parent_id: str, ids: BitMap64) -> BitMap64:
        """Ids at ``child`` of the records that used any of ``ids`` (ids at ``parent_id``)."""
        if not ids:
            return BitMap64()
        slots = [i for i, p in enumerate(child.parents) if p == parent_id]
        if child.is_virtual:
            out = BitMap64()
            for parent_index, first, count in child.extra["ranges"]:
                if parent_index in slots:
                    for part, positions in split_by_partition(ids):
                        if part < count:
                            out |= lift(first + part, positions)
            return out
        if child.layout == "text":
            return self._saved_lines_forward(child, self.store.point(parent_id), ids)
        if child.layout not in ("sets", "pair"):
            # one id column: it refers to the first parent only (subtract's right side has none)
            slots = [s for s in slots if s == 0]
        single = bool(child.extra.get("single"))
        units: list[Unit] = []
        for slot in slots:
            if child.layout in LOCAL_LAYOUTS:
                for part, positions in split_by_partition(ids):
                    units.append((child.layout, child.table_file(part), part, slot, positions.serialize(), single))
            else:
                blob = ids.serialize()
                units.extend((child.layout, child.table_file(p), p, slot, blob, single)
                             for p in range(child.num_partitions))
        outputs = self.run_units(forward_unit, units, sum(_size(u[1]) for u in units))
        return union_all(BitMap64.deserialize(b) for b in outputs)

    # ------------------------------------------------------------------ chaining through saved text
    def _saved_lines_backward(self, point: CapturePoint, ids: BitMap64) -> dict[str, BitMap64]:
        """Input lines that an earlier saveAsTextFile wrote -> that output's records."""
        from capture_agent.record.values import line_offsets

        saves = [(self.store.point(p), str(self.store.point(p).extra["path"]).rstrip("/") + "/")
                 for p in point.parents]
        splits, files = point.extra["splits"], point.extra["files"]
        result: dict[str, BitMap64] = {}
        for part, positions in split_by_partition(ids):
            file_index, start, _ = splits[part]
            uri = files[file_index]["path"]
            for save, prefix in saves:
                name = uri[len(prefix):]
                if uri.startswith(prefix) and name.startswith("part-"):
                    hi = int(name[5:].split(".")[0].split("-")[0]) << SHIFT
                    offsets = line_offsets(point, part, list(positions))
                    records = BitMap64([hi | (start + o) for o in offsets])
                    result.setdefault(save.capture_id, BitMap64()).__ior__(records)
        return result

    def _saved_lines_forward(self, child: CapturePoint, save: CapturePoint, ids: BitMap64) -> BitMap64:
        """Records of an earlier saveAsTextFile -> the lines of a later text input that read them."""
        import pyarrow.parquet as pq

        from capture_agent.record._runtime import partial_file

        prefix = str(save.extra["path"]).rstrip("/") + "/"
        splits, files = child.extra["splits"], child.extra["files"]
        out = BitMap64()
        for part, offsets in split_by_partition(ids):
            wanted = set(offsets)
            for k, (file_index, start, length) in enumerate(splits):
                name = files[file_index]["path"][len(prefix):]
                if not files[file_index]["path"].startswith(prefix) or not name.startswith(f"part-{part:05d}"):
                    continue
                path = child.table_file(k) if os.path.exists(child.table_file(k)) else partial_file(child.location, k)
                if not os.path.exists(path) or not any(start <= o <= start + length for o in wanted):
                    continue
                relative = pq.read_table(path, columns=["offset"]).column("offset").to_pylist()
                out |= BitMap64([(k << SHIFT) | line for line, o in enumerate(relative) if start + o in wanted])
        return out

    def _union_parent(self, point: CapturePoint, part: int) -> tuple[str, int]:
        for parent_index, first, count in point.extra["ranges"]:
            if first <= part < first + count:
                return point.parents[parent_index], part - first
        raise KeyError(f"partition {part} is outside union {point.capture_id}")

    # ------------------------------------------------------------------ walks
    def back_all(self, frontier: dict[str, BitMap64]) -> dict[str, BitMap64]:
        """Walks back until only input points (points without parents) hold ids."""
        pending = {k: v.copy() for k, v in frontier.items() if v}
        done: dict[str, BitMap64] = {}
        while pending:
            cid = max(pending, key=lambda c: self.store.point(c).seq)
            ids = pending.pop(cid)
            point = self.store.point(cid)
            if not point.parents:
                done.setdefault(cid, BitMap64()).__ior__(ids)
                continue
            for parent, pids in self.backward(point, ids).items():
                pending.setdefault(parent, BitMap64()).__ior__(pids)
        return done

    def next_all(self, frontier: dict[str, BitMap64], scope: set[str] | None) -> dict[str, BitMap64]:
        """Walks forward until the ids reach points without children (in ``scope``)."""
        pending = {k: v.copy() for k, v in frontier.items() if v}
        done: dict[str, BitMap64] = {}
        while pending:
            cid = min(pending, key=lambda c: self.store.point(c).seq)
            ids = pending.pop(cid)
            children = self.children(cid, scope)
            if not children:
                done.setdefault(cid, BitMap64()).__ior__(ids)
                continue
            for child in children:
                out = self.forward(child, cid, ids)
                if out:
                    pending.setdefault(child.capture_id, BitMap64()).__ior__(out)
        return done

    def children(self, cid: str, scope: set[str] | None) -> list[CapturePoint]:
        return [c for c in self.store.children(cid) if scope is None or c.capture_id in scope]

    # ------------------------------------------------------------------ all ids of a point
    def all_ids(self, point: CapturePoint) -> BitMap64:
        """Every record id at a point whose table lists its records (dense or by out_id)."""
        if point.extra.get("single"):
            return BitMap64([0])
        if point.layout in ("union", "rows"):
            raise ValueError(f"cannot enumerate the records of {point.capture_id} from its table")
        out = BitMap64()
        if point.layout == "set_partition":
            for part in self.store.partition_rows(point):
                count = _read(point.table_file(part), ["out_count"], None).column("out_count")[0].as_py()
                out.add_range(part << SHIFT, (part << SHIFT) + count)
            return out
        if point.layout == "save":
            parts = []
            for part in self.store.partition_rows(point):
                column = _read(point.table_file(part), ["out_id"], None).column("out_id")
                parts.append(BitMap64(column.to_pylist()))
            return union_all(parts)
        for part, rows in self.store.partition_rows(point).items():
            if rows:
                out.add_range(part << SHIFT, (part << SHIFT) + rows)
        return out

