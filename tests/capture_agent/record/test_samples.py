"""Sample records of capture points, read as the web process reads them: from a run folder opened
afresh, without Spark, and without unpickling anything (checked by making unpickling fail)."""

from __future__ import annotations

import os
import pickle
from operator import add

import pytest

from capture_agent.record.query.samples import MAX_SAMPLE, sample
from capture_agent.record.storage.manifest import LineageStore

pytestmark = pytest.mark.spark


@pytest.fixture
def no_unpickling(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a sample unpickled a value")

    monkeypatch.setattr(pickle, "loads", refuse)


def _points(lc):
    run = LineageStore.open(lc.run_dir)
    by_kind: dict[str, list[str]] = {}
    for point in run.by_seq():
        by_kind.setdefault(point.kind, []).append(point.capture_id)
    return run, by_kind


def test_text_input_lines_and_kept_results(lc, write_text, no_unpickling):
    lines = [f"line {i} {'x' * (300 if i == 3 else 1)}" for i in range(40)]
    path = write_text("in.txt", lines)
    counts = lc.textFile(path, 3).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add)
    result = counts.collect()
    run, kinds = _points(lc)
    first = sample(run, kinds["input"][0], 5)
    assert first.kept
    assert [text for _, text in first.records] == lines[:3] + [lines[3][:197] + "...", lines[4]]
    assert first.records[0][0] == 0  # split 0, line 0

    whole = sample(run, kinds["input"][0], 1000)
    assert len(whole.records) == min(MAX_SAMPLE, len(lines))
    assert [text for _, text in whole.records][:40] == [t if len(t) <= 200 else t[:197] + "..." for t in lines]
    ids = [record_id for record_id, _ in whole.records]
    assert ids == sorted(ids) and len({i >> 32 for i in ids}) > 1  # it went on to the next splits

    output = sample(run, kinds["output"][0], 3)
    assert output.kept and [text for _, text in output.records] == [repr(kv) for kv in result[:3]]

    middle = next(kind for kind in kinds if kind not in ("input", "output"))
    shuffled = sample(run, kinds[middle][0])
    assert not shuffled.kept and "trace" in shuffled.note


def test_parallelized_values_and_parquet_rows(lc, spark, tmp_path, no_unpickling):
    data = [(f"k{i % 3}", i) for i in range(12)]
    lc.parallelize(data, 3).reduceByKey(add).collect()
    run, kinds = _points(lc)
    kept = sample(run, kinds["input"][0], 5)
    assert [text for _, text in kept.records] == [repr(kv) for kv in data[:5]]

    folder = str(tmp_path / "rows.parquet")
    spark.createDataFrame([(i, f"n{i}") for i in range(6)], ["id", "name"]).coalesce(1).write.parquet(folder)
    before = set(kinds["input"])
    lc.parquet(folder).map(lambda r: (r.id % 2, 1)).reduceByKey(add).collect()
    run, kinds = _points(lc)
    (rows_point,) = [k for k in kinds["input"] if k not in before]
    rows = sample(run, rows_point, 2)
    assert [text for _, text in rows.records] == ["Row(id=0, name='n0')", "Row(id=1, name='n1')"]


def test_a_changed_input_says_so(lc, write_text):
    path = write_text("in.txt", ["a", "b"])
    lc.textFile(path).map(lambda s: s.upper()).collect()
    with open(path, "a", encoding="utf-8") as f:
        f.write("c\n")
    os.utime(path, (1, 1))
    run, kinds = _points(lc)
    changed = sample(run, kinds["input"][0])
    assert not changed.kept and "changed" in changed.note


def test_dataframe_sources_show_the_rows_their_frames_read(lc, spark, tmp_path, no_unpickling):
    """A JSON and a CSV source's sample is the frame's rows, typed (the JSON ints ints, the CSV's
    inferred ints too), from the lines Spark made rows of (no blank line, no header); a Parquet
    source's the files' rows."""
    import json

    events = tmp_path / "events.json"
    events.write_text("\n".join(json.dumps({"user": i, "kind": "ab"[i % 2]}) + ("\n" if i == 1 else "")
                                for i in range(4)) + "\n")
    people = tmp_path / "people.csv"
    people.write_text("name,age\nann,31\n\nbob,45\n")
    folder = str(tmp_path / "rows.parquet")
    spark.createDataFrame([(i, f"n{i}") for i in range(6)], "id long, name string").coalesce(1).write.parquet(folder)
    lc.read.json(str(events)).collect()
    lc.read.csv(str(people), header=True, inferSchema=True).collect()
    lc.read.parquet(folder).collect()
    run, kinds = _points(lc)
    json_point, csv_point, parquet_point = kinds["input"]
    assert [text for _, text in sample(run, json_point, 3).records] == [
        "Row(kind='a', user=0)", "Row(kind='b', user=1)", "Row(kind='a', user=2)"]
    lines = sample(run, csv_point, 5)
    assert [text for _, text in lines.records] == ["Row(name='ann', age=31)", "Row(name='bob', age=45)"]
    assert [record_id for record_id, _ in lines.records] == [len("name,age\n"), len("name,age\nann,31\n\n")]
    assert [text for _, text in sample(run, parquet_point, 2).records] == ["Row(id=0, name='n0')",
                                                                          "Row(id=1, name='n1')"]
