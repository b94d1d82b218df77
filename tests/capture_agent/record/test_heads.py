"""The ``first_rest_*`` layouts (``storage.layouts.heads``) against the plain ``list_*`` layouts they
replace: random tables written by both layouts' own writers into a real run folder must give the
same ids backward and forward, the same per-row inputs, and the same deletion counts; and a
captured word count over many distinct words, traced both ways, against an oracle from the text."""

from __future__ import annotations

import os
import pickle
import random
from collections import defaultdict
from operator import add
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyroaring import BitMap64

from capture_agent.record.query.session import TraceSession
from capture_agent.record.storage.fs import StoreFS
from capture_agent.record.storage.layouts import FirstRestGlobal, FirstRestLocal, ListGlobal, ListLocal, Values
from capture_agent.record.storage.layouts.heads import joined_lists, split_lists
from capture_agent.record.storage.manifest import LineageStore
from capture_agent.record.storage.tables import TableTarget
from tests.capture_agent.record.oracle import lines_with_offsets, trace_back

# per partition, per row: a list of positions (may be empty: a histogram bucket no record fell in)
PARTS = st.lists(st.lists(st.lists(st.integers(0, 40), max_size=5), max_size=12), min_size=1, max_size=3)


def test_split_and_join_give_back_the_lists():
    lists = pa.array([[5, 1, 9], [], [2], [7, 7], []], pa.list_(pa.int64()))
    columns = split_lists(lists)
    assert columns["first"].to_pylist() == [5, None, 2, 7, None]
    assert columns["rest"].to_pylist() == [[1, 9], [], [], [7], []]
    assert joined_lists(columns["first"], columns["rest"]).to_pylist() == lists.to_pylist()
    assert joined_lists(*split_lists(pa.array([], pa.list_(pa.uint32()))).values()).to_pylist() == []
    sliced = lists.slice(2, 2)
    assert joined_lists(*split_lists(sliced).values()).to_pylist() == [[2], [7, 7]]


class Twin:
    """Two run folders of one shape: the plain layout in one, its first/rest twin in the other."""

    def __init__(self, root: Path, plain: Any, heads: Any, parts: list[list[list[int]]]) -> None:
        self.runs = []
        width = max([p for part in parts for row in part for p in row], default=0) + 1
        for n, layout in enumerate((plain, heads)):
            store = LineageStore.create(StoreFS.resolve(str(root / f"store{n}")), f"app-{n}")
            inp = store.new_point("input", "op", Values(), [], len(parts))
            for part in range(len(parts)):
                target = TableTarget.of(store.fs, inp.location, inp.capture_id)
                Values.write(target, part, [pickle.dumps(i) for i in range(width)], [str(i) for i in range(width)])
            point = store.new_point("combiner", "op", layout, [inp], len(parts))
            for part, rows in enumerate(parts):
                if layout.local:
                    lists = pa.array(rows, pa.list_(pa.uint32()))
                else:
                    lists = pa.array([[(p % len(parts)) << 32 | p for p in row] for row in rows], pa.list_(pa.int64()))
                type(layout).write(TableTarget.of(store.fs, point.location, point.capture_id), part, lists)
            self.runs.append((TraceSession(store).engine, inp, point))

    def same(self, call: Any) -> Any:
        plain, heads = (call(*run) for run in self.runs)
        assert plain == heads
        return plain


@pytest.mark.parametrize("plain, heads", [(ListLocal(), FirstRestLocal()), (ListGlobal(), FirstRestGlobal()),
                                          (ListGlobal(mode="distinct"), FirstRestGlobal(mode="distinct"))])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=PARTS, seed=st.integers(0, 1 << 30))
def test_first_rest_tables_trace_as_the_lists_do(tmp_path_factory, plain, heads, parts, seed):
    twin = Twin(tmp_path_factory.mktemp("twin"), plain, heads, parts)
    rng = random.Random(seed)
    every = twin.same(lambda engine, inp, point: list(engine.all_ids(point)))
    chosen = BitMap64(rng.sample(every, min(len(every), rng.randint(1, 4)))) if every else BitMap64()
    twin.same(lambda engine, inp, point: engine.backward(point, chosen)[inp.capture_id]
              if chosen and engine.backward(point, chosen) else None)
    inputs = BitMap64(p << 32 | rng.randint(0, 40) for p in range(len(parts)) for _ in range(3))
    twin.same(lambda engine, inp, point: list(engine.forward(point, inp.capture_id, inputs)))
    twin.same(lambda engine, inp, point: [
        sorted(map(sorted, point.layout.row_inputs(table, part, 1)[0].to_pylist()))
        for part, table in tables(engine, point)])
    lost = [BitMap64(rng.sample(list(inputs), min(len(inputs), 2)))]
    changed = [BitMap64(rng.sample(list(inputs), min(len(inputs), 1))) - lost[0]]
    counted = twin.same(lambda engine, inp, point: sorted(
        (out_id, lost_n, total_n, moved)
        for c in point.layout.counts(engine, point, lost, changed)
        for out_id, lost_n, total_n, moved in zip(c.out_ids, c.lost[0], c.total[0], c.changed, strict=True)))
    # the counts against the rows themselves: per row meeting the deletion, its inputs deleted,
    # its inputs, and whether one of them changed
    expected = []
    for part, rows in enumerate(parts):
        for n, row in enumerate(rows):
            ids = [part << 32 | p if plain.local else (p % len(parts)) << 32 | p for p in row]
            gone, other = sum(i in lost[0] for i in ids), sum(i in changed[0] for i in ids)
            if gone or other:
                expected.append((part << 32 | n, gone, len(ids), other > 0))
    assert counted == sorted(expected)


def tables(engine: Any, point: Any) -> list[tuple[int, Any]]:
    from capture_agent.record.storage.tables import read_rows

    nparents = len(point.parents)
    return [(part, read_rows(engine.fs, point.table_path(part), ["out_id", *point.layout.id_columns(nparents)]))
            for part in sorted(point.partition_rows(engine.fs))]


@pytest.mark.spark
def test_high_cardinality_word_count_traces_both_ways(lc, tmp_path):
    """Thousands of distinct words over two partitions, most in one line, some in many: each
    word's backward trace gives exactly the lines holding it, and a line's forward trace exactly
    its words; the run's tables are the first/rest layouts."""
    rng = random.Random(5)
    vocabulary = [f"{rng.getrandbits(40):010x}" for _ in range(5000)]
    lines = [" ".join(rng.choice(vocabulary[:200] if rng.random() < 0.1 else vocabulary) for _ in range(8))
             for _ in range(1200)]
    path = tmp_path / "words.txt"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    counts = lc.textFile(str(path), 2).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add)
    result = dict(counts.collect())
    oracle: dict[str, set[tuple[str, int]]] = defaultdict(set)
    for offset, line in lines_with_offsets(str(path)):
        for word in line.split():
            oracle[word].add((os.path.abspath(path), offset))
    assert {w: len([1 for line in lines for x in line.split() if x == w]) for w in oracle} == result
    assert {p.layout.name for p in lc.store.points.values()} >= {"first_rest_local", "first_rest_global"}
    lin = counts.getLineage()
    items = lin.items()
    picked = rng.sample(items, 8) + [item for item in items if item[1][1] > 3][:4]
    point = lin.points()[0]
    for record_id, (word, _) in picked:
        assert trace_back(lc.lineage(point, [record_id])) == oracle[word], word
    source = lc.lineage(point, [picked[0][0]]).goBackAll()
    by_offset = dict(lines_with_offsets(str(path)))
    for input_id, (_, offset) in list(zip(source.ids(), source.positions(), strict=True))[:3]:
        outputs = [rec for rec in lc.lineage(source.points()[0], [input_id]).goNextAll().collect()
                   if isinstance(rec, tuple)]
        assert sorted(outputs) == sorted((w, result[w]) for w in set(by_offset[offset].split()))


@pytest.mark.parametrize("far", [9, (1 << 27) + 5, (1 << 32) - 1])
def test_counts_of_a_partitions_positions_near_and_far(far):
    """A local table's positions are counted against its own partition's ids only, by a bool lookup
    (positions under ``DENSE_POSITIONS``) or by ``is_in`` (past it): the same counts."""
    from capture_agent.record.storage.layouts.counts import row_counts

    lists = pa.array([[3, far], [], [far, 7, 3], None], pa.list_(pa.uint32()))
    for part in (0, 2):
        lost = BitMap64([part << 32 | far, (part + 1) << 32 | 3])  # the next partition's 3 is not this one's
        changed = BitMap64([part << 32 | 7])
        got = row_counts(pa.array([10, 11, 12, 13], pa.int64()), [[lists]], [lost], [changed], part=part)
        assert (got.out_ids, got.lost, got.total, got.changed) == ([10, 12], [[1, 1]], [[2, 3]], [False, True])
