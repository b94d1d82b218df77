"""The lineage store (one folder per run, one Parquet table per capture point), reopening a run
in a process without the job, and capture_point events through the coarse agent's sink."""

from __future__ import annotations

import json
import os
from operator import add

import pytest

from capture_agent.record import LineageContext, LineageRun
from tests.capture_agent.record.oracle import as_local, positions_of

pytestmark = pytest.mark.spark


def word_count(lc, path):
    return lc.textFile(path, 2).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add)


def test_store_layout_one_folder_per_run_one_table_per_capture_point(lc, sc, write_text, tmp_path):
    path = write_text("in.txt", ["a b", "b c", "c a a"])
    counts = word_count(lc, path)
    counts.collect()
    assert os.path.dirname(lc.run_dir) == str(tmp_path / "lineage")
    assert os.path.basename(lc.run_dir).startswith(sc.applicationId)
    manifest = json.load(open(os.path.join(lc.run_dir, "run.json")))
    kinds = {p["capture_id"]: p["kind"] for p in manifest["points"]}
    assert sorted(kinds.values()) == ["combiner", "input", "output", "reducer"]
    for point in manifest["points"]:
        if point["kind"] in ("combiner", "reducer", "output"):
            files = sorted(os.listdir(point["location"]))
            assert "part-00000.parquet" in files and point["rows"] > 0 and point["bytes"] > 0
            assert all(kinds[parent] for parent in point["parents"])
    inp = [p for p in manifest["points"] if p["kind"] == "input"][0]
    [info] = inp["details"]["files"]
    assert info["size"] == os.path.getsize(path) and info["mtime"] > 0
    second = LineageContext(sc, store=str(tmp_path / "lineage"))
    assert second.run_dir != lc.run_dir


def test_reopened_run_traces_like_the_live_context(lc, write_text):
    path = write_text("in.txt", ["x y", "y z", "z x x", "w"])
    counts = word_count(lc, path)
    result = counts.collect()
    live = counts.getLineage().filter(lambda kv: kv[0] == "x").goBackAll()
    run = LineageRun(lc.run_dir)
    [output] = run.outputs()
    lin = run.lineage(output)
    assert sorted(lin.collect()) == sorted(result)  # action results were kept with the table
    x = lin.filter(lambda kv: kv[0] == "x")
    src = x.goBackAll()
    assert src.collect() == live.collect() == ["x y", "z x x"]
    assert as_local(src.positions()) == positions_of(path, lambda s: "x" in s.split())
    assert sorted(src.goNextAll().collect()) == sorted(kv for kv in result if kv[0] in "xyz")


def test_capture_point_events_without_a_server(lc, write_text):
    path = write_text("in.txt", ["a b"])
    word_count(lc, path).collect()
    events = lc.capture_point_events()
    assert [e["kind"] for e in events] == ["input", "combiner", "reducer", "output"]
    # the input names the files it read (the page titles it by them); the other points none
    assert [[f.rsplit("/", 1)[-1] for f in e.get("files", [])] for e in events] == [["in.txt"], [], [], []]
    by_id = {e["capture_id"]: e for e in events}
    for event in events:
        assert event["type"] == "capture_point" and event["app_id"] == lc.app_id
        assert set(event) >= {"event_id", "time", "capture_id", "kind", "location", "rows", "bytes", "parents"}
        assert all(parent in by_id for parent in event["parents"])
        assert len(event["event_id"]) <= 128


def test_capture_points_name_the_spark_stage_their_tasks_ran_in(lc, sc, write_text):
    """Each point's stage is the one Spark ran its tasks in (stamped by the tasks in its tables):
    the input and map side in the shuffle's map stage, the reduce side and the collect in the
    result stage: the two stages of the collect's job."""
    path = write_text("in.txt", ["a b", "b c"])
    sc.setJobGroup("stamped", "stage ids")
    try:
        word_count(lc, path).collect()
    finally:  # the group is the thread's: later tests' jobs (test_call_sites lists those of none) are not in it
        for name in ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel"):
            sc.setLocalProperty(name, None)
    tracker = sc.statusTracker()
    last = max(tracker.getJobIdsForGroup("stamped"))  # (the capture may run a small job before it)
    stages = sorted(tracker.getJobInfo(last).stageIds)
    assert len(stages) == 2
    by_kind = {e["kind"]: e.get("stage_id") for e in lc.capture_point_events()}
    assert by_kind == {"input": stages[0], "combiner": stages[0], "reducer": stages[1], "output": stages[1]}


def test_capture_point_events_go_through_the_running_agent(spark, tmp_path, write_text):
    import capture_agent
    from capture_agent import CollectingSink

    sink = CollectingSink()
    try:
        lc = LineageContext(spark, store=str(tmp_path / "lineage"), sink=sink, dataset_sizes=False)
        agent = capture_agent.current_agent()
        if agent is None or not agent.running:
            pytest.skip("the coarse agent cannot start here")
        word_count(lc, write_text("in.txt", ["a b", "b"])).collect()
        agent.flush(5)
        points = [e for e in sink.events if e["type"] == "capture_point"]
        assert sorted(e["kind"] for e in points) == ["combiner", "input", "output", "reducer"]
        assert lc.events_sent == 4
    finally:
        capture_agent.disable()


def test_traces_run_as_spark_jobs_over_the_needed_partitions(spark, write_text, tmp_path):
    """trace_mode="spark": every step is a Spark job over the partition tables it needs."""
    path = write_text("in.txt", [f"w{i % 7} w{i % 3} x" for i in range(60)])
    local = LineageContext(spark, store=str(tmp_path / "a"), trace_mode="local")
    remote = LineageContext(spark, store=str(tmp_path / "b"), trace_mode="spark")
    results = {}
    for name, ctx in (("local", local), ("spark", remote)):
        counts = ctx.textFile(path, 3).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add)
        counts.collect()
        lin = counts.getLineage().filter(lambda kv: kv[0] in ("w2", "w1"))
        src = lin.goBackAll()
        results[name] = (sorted(src.collect()), sorted(as_local(src.positions())),
                         sorted(src.filter(lambda s: s.startswith("w2 w2")).goNextAll().collect()))
    assert results["spark"] == results["local"]
    assert remote.engine.spark_jobs > 0 and local.engine.spark_jobs == 0
    assert results["local"][2] == [("w2", 29), ("x", 60)]
