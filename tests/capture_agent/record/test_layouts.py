"""Each table layout's writer, backward and forward steps, ids, values and positions, on small
hand-made tables, without Spark: a real run folder, the layouts' own writers, the real engine."""

from __future__ import annotations

import json
import pickle
from array import array
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyroaring import BitMap64

from capture_agent.record.errors import IncompleteLineage, InputChangedError
from capture_agent.record.query.session import TraceSession
from capture_agent.record.storage.fs import StoreFS
from capture_agent.record.storage.layouts import (
    ListGlobal,
    ListLocal,
    OneGlobal,
    OneLocal,
    Pair,
    Rows,
    Save,
    SetGlobal,
    SetLocal,
    SetPartition,
    Sets,
    Single,
    Text,
    Union,
    Values,
)
from capture_agent.record.storage.layouts.base import bitmap64_bytes, bitmap_bytes
from capture_agent.record.storage.manifest import CapturePoint, LineageStore
from capture_agent.record.storage.tables import TableTarget


def rid(part: int, pos: int) -> int:
    return (part << 32) | pos


def ids(*pairs: tuple[int, int]) -> BitMap64:
    return BitMap64([rid(p, i) for p, i in pairs])


class Run:
    """A run folder built by hand: points of given layouts, tables written by their writers."""

    def __init__(self, tmp_path: Path) -> None:
        self.store = LineageStore.create(StoreFS.resolve(str(tmp_path / "store")), "app-1")
        self.session = TraceSession(self.store)
        self.engine = self.session.engine

    def point(self, kind: str, layout: Any, parents: list[CapturePoint], parts: int) -> CapturePoint:
        return self.store.new_point(kind, "op", layout, parents, parts)

    def target(self, point: CapturePoint) -> TableTarget:
        return TableTarget.of(self.store.fs, point.location, point.capture_id)

    def values_input(self, partitions: list[list[Any]]) -> CapturePoint:
        point = self.point("input", Values(), [], len(partitions))
        for part, values in enumerate(partitions):
            Values.write(self.target(point), part, [pickle.dumps(v) for v in values], [repr(v) for v in values])
        return point

    def back(self, point: CapturePoint, chosen: BitMap64) -> dict[str, BitMap64]:
        return self.engine.backward(point, chosen)

    def forward(self, child: CapturePoint, parent: CapturePoint, chosen: BitMap64) -> BitMap64:
        return self.engine.forward(child, parent.capture_id, chosen)


@pytest.fixture
def run(tmp_path: Path) -> Run:
    return Run(tmp_path)


def test_values_input_keeps_values_and_enumerates_ids(run):
    inp = run.values_input([["a", "b"], ["c"]])
    assert list(run.engine.all_ids(inp)) == [rid(0, 0), rid(0, 1), rid(1, 0)]
    assert run.session.values.values(inp, ids((0, 1), (1, 0))) == [(rid(0, 1), "b"), (rid(1, 0), "c")]
    assert run.session.values.values(inp, ids((0, 0), (0, 1)), lambda v: v == "a") == [(rid(0, 0), "a")]
    assert run.back(inp, ids((0, 0))) == {}


def test_one_local_maps_each_row_to_one_position_of_the_same_partition(run):
    inp = run.values_input([["a", "b", "c"], ["d", "e"]])
    out = run.point("output", OneLocal(), [inp], 2)
    OneLocal.write(run.target(out), 0, array("I", [2, 0]))
    OneLocal.write(run.target(out), 1, array("I", [1]))
    assert run.back(out, ids((0, 0), (1, 0))) == {inp.capture_id: ids((0, 2), (1, 1))}
    assert run.forward(out, inp, ids((0, 0), (1, 0))) == ids((0, 1))
    assert list(run.engine.all_ids(out)) == [rid(0, 0), rid(0, 1), rid(1, 0)]


def test_set_local_rows_hold_sets_of_positions(run):
    inp = run.values_input([list("abcd")])
    comb = run.point("combiner", SetLocal(), [inp], 1)
    SetLocal.write(run.target(comb), 0, [bitmap_bytes([0, 3]), bitmap_bytes([1]), bitmap_bytes([2])])
    assert run.back(comb, ids((0, 0), (0, 2))) == {inp.capture_id: ids((0, 0), (0, 3), (0, 2))}
    assert run.forward(comb, inp, ids((0, 3), (0, 1))) == ids((0, 0), (0, 1))


def test_list_local_rows_hold_lists_of_positions(run):
    inp = run.values_input([list("abcd"), list("xy")])
    comb = run.point("combiner", ListLocal(), [inp], 2)
    ListLocal.write(run.target(comb), 0, pa.array([[0, 3], [1], [2]], pa.list_(pa.uint32())))
    ListLocal.write(run.target(comb), 1, pa.array([[0, 1]], pa.list_(pa.uint32())))
    assert run.back(comb, ids((0, 0), (0, 2), (1, 0))) == {inp.capture_id: ids((0, 0), (0, 3), (0, 2), (1, 0), (1, 1))}
    assert run.forward(comb, inp, ids((0, 3), (0, 1), (1, 1))) == ids((0, 0), (0, 1), (1, 0))
    assert list(run.engine.all_ids(comb)) == [rid(0, 0), rid(0, 1), rid(0, 2), rid(1, 0)]


def test_single_result_comes_from_every_partition(run):
    inp = run.values_input([["a", "b"], ["c"]])
    out = run.point("output", Single(), [inp], 2)
    Single.write_single(run.target(out), 0, array("I", [0, 1]))
    Single.write_single(run.target(out), 1, array("I", [0]))
    assert run.back(out, BitMap64([0])) == {inp.capture_id: ids((0, 0), (0, 1), (1, 0))}
    assert run.forward(out, inp, ids((1, 0))) == BitMap64([0])
    assert list(run.engine.all_ids(out)) == [0]


def test_set_partition_every_output_from_every_input_pulled(run):
    inp = run.values_input([list("abc")])
    mp = run.point("stage", SetPartition(), [inp], 1)
    SetPartition.write(run.target(mp), 0, 2, array("I", [0, 2]))
    assert run.back(mp, ids((0, 1))) == {inp.capture_id: ids((0, 0), (0, 2))}
    assert run.forward(mp, inp, ids((0, 2))) == ids((0, 0), (0, 1))
    assert run.forward(mp, inp, ids((0, 1))) == BitMap64()
    assert list(run.engine.all_ids(mp)) == [rid(0, 0), rid(0, 1)]


def test_save_ids_are_byte_offsets_in_part_files(run, tmp_path):
    inp = run.values_input([["x", "yy"]])
    folder = tmp_path / "saved"
    folder.mkdir()
    (folder / "part-00000").write_text("yy\nx\n")
    save = run.point("output", Save(path=f"file:{folder}"), [inp], 1)
    Save.write(run.target(save), 0, array("q", [0, 3]), array("I", [1, 0]))
    assert run.back(save, ids((0, 3))) == {inp.capture_id: ids((0, 0))}
    assert run.forward(save, inp, ids((0, 1))) == ids((0, 0))
    assert run.session.values.values(save, ids((0, 0), (0, 3))) == [(rid(0, 0), "yy"), (rid(0, 3), "x")]
    assert run.session.values.positions(save, ids((0, 3))) == [(f"file:{folder}/part-00000", 3)]


def test_global_layouts_point_at_ids_of_any_partition(run):
    inp = run.values_input([["a", "b"], ["c"]])
    moved = run.point("stage", OneGlobal(), [inp], 1)
    OneGlobal.write(run.target(moved), 0, array("q", [rid(1, 0), rid(0, 1)]))
    assert run.back(moved, ids((0, 1))) == {inp.capture_id: ids((0, 1))}
    assert run.forward(moved, inp, ids((1, 0))) == ids((0, 0))
    red = run.point("reducer", ListGlobal(), [inp], 1)
    ListGlobal.write(run.target(red), 0, pa.array([[rid(0, 0), rid(1, 0)], [rid(0, 1)]], pa.list_(pa.int64())))
    assert run.back(red, ids((0, 0))) == {inp.capture_id: ids((0, 0), (1, 0))}
    assert run.forward(red, inp, ids((1, 0), (0, 1))) == ids((0, 0), (0, 1))
    grp = run.point("reducer", SetGlobal(mode="group"), [inp], 1)
    SetGlobal.write(run.target(grp), 0, [bitmap64_bytes([rid(0, 1), rid(1, 0)])])
    assert run.back(grp, ids((0, 0))) == {inp.capture_id: ids((0, 1), (1, 0))}
    assert run.forward(grp, inp, ids((0, 0))) == BitMap64()


def test_sets_and_pairs_have_one_slot_per_parent(run):
    left = run.values_input([["a", "b"]])
    right = run.values_input([["c"]])
    cog = run.point("reducer", Sets(mode="cogroup"), [left, right], 1)
    Sets.write(run.target(cog), 0, [[bitmap64_bytes([rid(0, 0)]), bitmap64_bytes([rid(0, 1)])],
                                    [bitmap64_bytes([rid(0, 0)]), bitmap64_bytes([])]])
    assert run.back(cog, ids((0, 1))) == {left.capture_id: ids((0, 1))}
    assert run.back(cog, ids((0, 0))) == {left.capture_id: ids((0, 0)), right.capture_id: ids((0, 0))}
    assert run.forward(cog, right, ids((0, 0))) == ids((0, 0))
    join = run.point("join", Pair(mode="left"), [left, right], 1)
    Pair.write(run.target(join), 0, [rid(0, 0), rid(0, 1)], [rid(0, 0), None])
    assert run.back(join, ids((0, 1))) == {left.capture_id: ids((0, 1))}
    assert run.back(join, ids((0, 0))) == {left.capture_id: ids((0, 0)), right.capture_id: ids((0, 0))}
    assert run.forward(join, right, ids((0, 0))) == ids((0, 0))
    assert run.forward(join, left, ids((0, 1))) == ids((0, 1))


def test_subtract_refers_to_its_left_parent_only(run):
    left = run.values_input([["a", "b"]])
    right = run.values_input([["b"]])
    sub = run.point("reducer", OneGlobal(mode="subtract"), [left, right], 1)
    OneGlobal.write(run.target(sub), 0, array("q", [rid(0, 0)]))
    assert run.back(sub, ids((0, 0))) == {left.capture_id: ids((0, 0))}
    assert run.forward(sub, right, ids((0, 0))) == BitMap64()


def test_union_maps_partitions_side_by_side(run):
    a = run.values_input([["a"], ["b"]])
    b = run.values_input([["c", "d"]])
    union = run.point("union", Union(ranges=[[0, 0, 2], [1, 2, 1]]), [a, b], 3)
    assert run.back(union, ids((1, 0), (2, 1))) == {a.capture_id: ids((1, 0)), b.capture_id: ids((0, 1))}
    assert run.forward(union, b, ids((0, 0))) == ids((2, 0))
    assert run.session.values.values(union, ids((0, 0), (2, 1))) == [(rid(0, 0), "a"), (rid(2, 1), "d")]


def _text_point(run: Run, tmp_path: Path, lines: list[str]) -> tuple[CapturePoint, Path]:
    path = tmp_path / "in.txt"
    path.write_text("".join(line + "\n" for line in lines))
    st = path.stat()
    files = [{"path": f"file:{path}", "size": st.st_size, "mtime": int(st.st_mtime * 1000)}]
    point = run.point("input", Text(source=str(path), files=files, splits=[[0, 0, st.st_size]]), [], 1)
    offsets, at = array("q"), 0
    for line in lines:
        offsets.append(at)
        at += len(line) + 1
    Text.write(run.target(point), 0, offsets, True, 0)
    return point, path


def test_text_input_reads_lines_by_offset_and_notices_changed_files(run, tmp_path):
    point, path = _text_point(run, tmp_path, ["first", "second line", "3"])
    assert run.session.values.values(point, ids((0, 1), (0, 2))) == [(rid(0, 1), "second line"), (rid(0, 2), "3")]
    assert run.session.values.positions(point, ids((0, 2))) == [(f"file:{path}", 18)]
    path.write_text("changed\n")
    with pytest.raises(InputChangedError, match="changed since lineage was captured"):
        run.session.values.values(point, ids((0, 0)))


def test_rows_input_finds_parquet_rows_by_file_and_row_index(run, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    source = tmp_path / "t.parquet"
    pq.write_table(pa.table({"k": [10, 11, 12, 13]}), source, row_group_size=2)
    st = source.stat()
    files = [{"path": f"file:{source}", "size": st.st_size, "mtime": int(st.st_mtime * 1000)}]
    point = run.point("input", Rows(paths=[str(source)], files=files), [], 1)
    Rows.write(run.target(point), 0, [0, 1], [f"file:{source}", f"file:{source}"], [3, 0], [1, 2])
    assert list(run.engine.all_ids(point)) == [rid(0, 0), rid(0, 1), rid(0, 2)]
    got = run.session.values.values(point, ids((0, 0), (0, 2)))
    assert [(i, row.k) for i, row in got] == [(rid(0, 0), 13), (rid(0, 2), 11)]
    assert run.session.values.positions(point, ids((0, 1))) == [(f"file:{source}", 0)]


def test_a_missing_table_stops_a_walk_before_it_starts(run):
    inp = run.values_input([["a"]])
    out = run.point("output", OneLocal(), [inp], 2)
    OneLocal.write(run.target(out), 0, array("I", [0]))
    out.missing[1] = "OSError: [Errno 28] No space left on device"
    with pytest.raises(IncompleteLineage, match="No space left on device"):
        run.engine.back_all({out.capture_id: ids((0, 0))})
    with pytest.raises(IncompleteLineage, match=out.capture_id):
        run.engine.next_all({inp.capture_id: ids((0, 0))}, None)


def test_write_failures_are_reported_not_raised(run, tmp_path):
    inp = run.values_input([["a"]])
    out = run.point("output", OneLocal(), [inp], 1)
    Path(out.location).write_text("a file where the table folder should be")
    reported: list[Any] = []

    class Collect:
        def add(self, items: list[Any]) -> None:
            reported.extend(items)

    target = TableTarget.of(run.store.fs, out.location, out.capture_id, Collect())
    OneLocal.write(target, 0, array("I", [0]))
    [(capture_id, part, reason)] = reported
    assert (capture_id, part) == (out.capture_id, 0) and "Error" in reason


def test_manifest_round_trip_keeps_layout_details_and_no_labels(run):
    a = run.values_input([["a"]])
    union = run.point("union", Union(ranges=[[0, 0, 1]]), [a], 1)
    run.store.save()
    data = json.loads(Path(run.store.run_dir, "run.json").read_text())
    assert data["format"] == 2 and all("label" not in p for p in data["points"])
    again = LineageStore.open(run.store.run_dir)
    assert again.point(union.capture_id).layout == Union(ranges=[[0, 0, 1]])


def test_format_1_manifests_are_still_read(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    base = {"num_partitions": 1, "seq": 1, "rows": 1, "bytes": 10, "created": 1.0}
    points = [
        {**base, "capture_id": "0001-input-textFile", "kind": "input", "op": "textFile", "layout": "text",
         "parents": [], "location": "/old/0001-input-textFile", "label": "token",
         "extra": {"format": "text", "name": "in.txt", "files": [], "splits": [[0, 0, 5]]}},
        {**base, "capture_id": "0002-join-leftOuterJoin", "kind": "join", "op": "leftOuterJoin", "layout": "pair",
         "parents": ["0001-input-textFile", "0001-input-textFile"], "location": "/old/0002", "label": "·",
         "extra": {"mode": "left"}, "seq": 2},
        {**base, "capture_id": "0003-output-count", "kind": "output", "op": "count", "layout": "set_local",
         "parents": ["0002-join-leftOuterJoin"], "location": "/old/0003", "label": "token",
         "extra": {"single": True, "values": "values.parquet"}, "seq": 3},
    ]
    (folder / "run.json").write_text(json.dumps({"app_id": "a", "run_id": "run", "points": points}))
    store = LineageStore.open(str(folder))
    text = store.point("0001-input-textFile")
    assert isinstance(text.layout, Text) and text.layout.source == "in.txt"
    assert text.location == f"{folder}/0001-input-textFile"
    join = store.point("0002-join-leftOuterJoin")
    assert join.layout == Pair(mode="left") and join.deletion.label == "·/+"
    count = store.point("0003-output-count")
    assert isinstance(count.layout, Single) and count.values_file == "values.parquet"


def test_a_task_loads_pyarrow_only_when_it_writes(tmp_path: Path) -> None:
    """A TableTarget travels with its file system pickled inside: unpickling it in a task does not
    import pyarrow (some 40 MB of a worker); writing the first table does, and writes."""
    import subprocess
    import sys

    target = TableTarget.of(StoreFS.resolve(str(tmp_path)), f"{tmp_path}/point", "p1")
    blob = tmp_path / "target.pickle"
    blob.write_bytes(pickle.dumps(target))
    script = (
        "import pickle, sys\n"
        f"target = pickle.loads(open({str(blob)!r}, 'rb').read())\n"
        "print('pyarrow' in sys.modules)\n"
        "import os; os.makedirs(target.location, exist_ok=True)\n"
        "from array import array\n"
        "from capture_agent.record.storage.layouts.local import write_one_local\n"
        "write_one_local(target, 0, array('I', [4, 5]))\n"
        "print('pyarrow' in sys.modules, type(target.fs).__name__)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).parents[3]).stdout.split()
    assert out == ["False", "True", "LocalFileSystem"]
    assert pickle.loads(pickle.dumps(target)) == target  # and it still compares equal once unpickled
    assert list(pa.parquet.read_table(target.path(0)).column("in_id").to_pylist()) == [4, 5]
