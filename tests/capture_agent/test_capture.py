"""The agent inside a real local Spark session: what it records for RDD and DataFrame jobs."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from pyspark.core.rdd import PipelinedRDD

import capture_agent
from capture_agent import CollectingSink, ConfigError
from tests.capture_agent.http_server import IngestRecorder
from tests.capture_agent.test_http_sink import closed_port_url
from tests.ingest_schema import assert_valid_events

pytestmark = pytest.mark.spark


def read_events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def of_type(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


def test_rdd_job_stages_operators_and_datasets_match_spark(spark: Any, sc: Any, tmp_path: Path) -> None:
    text = tmp_path / "in.txt"
    text.write_text("a b c\nb c\nc d\n")
    out = tmp_path / "out"
    sink_path = tmp_path / "events.jsonl"
    agent = capture_agent.enable(spark, sink="file", file_sink_path=str(sink_path))
    assert agent.listener_kind == "jvm"
    try:
        sc.setJobGroup("rdd-test", "shuffle and join")
        words = sc.textFile(str(text), 2).flatMap(lambda line: line.split()).filter(lambda w: w != "d")
        counts = words.map(lambda w: (w, 1)).reduceByKey(lambda a, b: a + b, 2)
        joined = counts.join(sc.parallelize([("a", "x"), ("b", "y")], 2), 2)
        joined.saveAsTextFile(str(out))
        agent.flush()
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
        capture_agent.disable()
    events = read_events(sink_path)
    assert len({e["event_id"] for e in events}) == len(events)
    assert_valid_events(events)

    tracker = sc.statusTracker()
    (job_id,) = tracker.getJobIdsForGroup("rdd-test")
    (job,) = [e for e in of_type(events, "job_start") if e["job_id"] == job_id]
    assert sorted(job["stage_ids"]) == sorted(tracker.getJobInfo(job_id).stageIds)
    assert job["job_group"] == "rdd-test"
    stages = {e["stage_id"]: e for e in of_type(events, "stage_completed") if e.get("job_id") == job_id}
    assert set(stages) == set(job["stage_ids"])
    for stage_id, stage in stages.items():
        spark_stage = tracker.getStageInfo(stage_id)
        assert (stage["name"], stage["num_tasks"]) == (spark_stage.name, spark_stage.numTasks)
        assert stage["status"] == "succeeded" and stage["metrics"]["tasks"] == spark_stage.numTasks
    # Each shuffle dependency in Spark's own RDD lineage is exactly one parent-stage edge.
    shuffles = joined._jrdd.toDebugString().count("ShuffledRDD")
    assert len(stages) == shuffles + 1
    assert sum(len(s["parent_stage_ids"]) for s in stages.values()) == shuffles
    final = stages[max(stages)]
    reached, frontier = set(), [final["stage_id"]]
    while frontier:
        current = frontier.pop()
        reached.add(current)
        frontier.extend(stages[current]["parent_stage_ids"])
    assert reached == set(stages)

    reads = [e for e in of_type(events, "dataset_io") if e["direction"] == "read"]
    assert [(e["path"], e["format"], e["job_id"]) for e in reads] == [(f"file:{text}", "text", job_id)]
    first_stage_rdds = {op["rdd_id"] for op in stages[min(stages)]["operators"]}
    assert reads[0]["rdd_id"] in first_stage_rdds
    (written,) = [e for e in of_type(events, "dataset_io") if e["direction"] == "written"]
    assert (written["path"], written["format"], written["job_id"]) == (f"file:{out}", "text", job_id)
    assert written["size_bytes"] > 0

    chains = [[op["name"] for op in e["operators"]] for e in of_type(events, "python_operators")]
    assert ["flatMap", "filter", "map", "reduceByKey:combineLocally", "reduceByKey:add_shuffle_key"] in chains
    (python_step,) = [e for e in of_type(events, "python_operators") if e["operators"][0]["name"] == "flatMap"]
    assert python_step["operators"][0]["call_site"].startswith(__file__ + ":")
    all_rdds = {op["rdd_id"] for s in stages.values() for op in s["operators"]}
    assert python_step["rdd_id"] in all_rdds


def test_dataframe_parquet_read_and_write_are_datasets(spark: Any, tmp_path: Path) -> None:
    source, target = tmp_path / "source.parquet", tmp_path / "target.parquet"
    sink = CollectingSink()
    agent = capture_agent.enable(spark, sink=sink)
    try:
        spark.createDataFrame([(i, f"n{i}") for i in range(10)], ["id", "name"]).write.parquet(str(source))
        spark.read.parquet(str(source)).where("id > 3").write.parquet(str(target))
        agent.flush()
    finally:
        capture_agent.disable()
    assert_valid_events(sink.events)
    datasets = of_type(sink.events, "dataset_io")
    seen = {(e["direction"], e["path"], e["format"]) for e in datasets}
    assert seen == {("written", f"file:{source}", "parquet"), ("read", f"file:{source}", "parquet"),
                    ("written", f"file:{target}", "parquet")}
    copy_exec = {e["sql_execution_id"] for e in datasets if e["path"] == f"file:{target}"}
    read_exec = {e["sql_execution_id"] for e in datasets if e["direction"] == "read"}
    assert copy_exec == read_exec
    assert read_exec <= {e.get("sql_execution_id") for e in of_type(sink.events, "job_start")}
    assert all(e["size_bytes"] > 0 for e in datasets)


def test_server_down_job_unchanged_then_spool_delivered_once(
    spark: Any, sc: Any, tmp_path: Path, ingest_server: IngestRecorder
) -> None:
    def job() -> list[tuple[int, int]]:
        return sorted(sc.parallelize(range(100), 4).map(lambda x: (x % 7, x)).reduceByKey(max).collect())

    expected = job()
    spool_dir = tmp_path / "spool"
    capture_agent.enable(spark, sink="http", server_url=closed_port_url(), spool_dir=str(spool_dir))
    try:
        assert job() == expected
        sc._jsc.sc().listenerBus().waitUntilEmpty()  # the job's end reaches the agent (the bus may be behind)
    finally:
        start = time.monotonic()
        capture_agent.disable()
        assert time.monotonic() - start < 5
    spooled = [p for p in spool_dir.iterdir() if p.suffix == ".json"]
    spooled_ids = [e["event_id"] for p in spooled for e in json.loads(p.read_text())["events"]]
    assert "application_start" in spooled_ids and any(i.startswith("job_end:") for i in spooled_ids)

    from capture_agent.cli import main as cli_main

    assert cli_main(["flush-spool", "--server", ingest_server.url, "--spool-dir", str(spool_dir)]) == 0
    delivered = [e["event_id"] for e in ingest_server.events()]
    assert sorted(delivered) == sorted(spooled_ids) and len(set(delivered)) == len(delivered)
    assert not any(p.suffix == ".json" for p in spool_dir.iterdir())

    # A batch spooled by one run goes first when the next run reaches the server.
    ingest_server.bodies.clear()
    capture_agent.enable(spark, sink="http", server_url=closed_port_url(), spool_dir=str(spool_dir))
    job()
    capture_agent.disable()
    capture_agent.enable(spark, sink="http", server_url=ingest_server.url, spool_dir=str(spool_dir))
    capture_agent.disable()
    assert ingest_server.bodies[0]["events"][0]["event_id"] == "application_start"
    assert len(ingest_server.bodies) >= 2


def test_disabled_agent_is_a_no_op(spark: Any, sc: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LINEAGE_DISABLED", "true")
    original_init = PipelinedRDD.__init__
    sink = CollectingSink()
    agent = capture_agent.enable(spark, sink=sink)
    assert not agent.enabled and capture_agent.current_agent() is None
    assert sc.parallelize(range(10), 2).map(lambda x: x * 2).sum() == 90
    agent.flush()
    capture_agent.disable()
    assert PipelinedRDD.__init__ is original_init and sink.events == []


def test_bad_setting_fails_enable_with_a_clear_message(spark: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LINEAGE_FLUSH_INTERVAL", "soon")
    with pytest.raises(ConfigError, match="LINEAGE_FLUSH_INTERVAL='soon': expected a number of seconds"):
        capture_agent.enable(spark)
    assert capture_agent.current_agent() is None


def test_enable_is_idempotent_per_spark_context(spark: Any) -> None:
    first = capture_agent.enable(spark, sink=CollectingSink())
    try:
        assert capture_agent.enable(spark.sparkContext, sink="noop") is first
    finally:
        capture_agent.disable()
    assert not first.running and PipelinedRDD.__init__.__module__ == "pyspark.core.rdd"


def test_python_listener_fallback_without_jar(spark: Any, sc: Any, tmp_path: Path) -> None:
    sink = CollectingSink()
    agent = capture_agent.enable(spark, sink=sink, jar=str(tmp_path / "missing.jar"))
    try:
        assert agent.listener_kind == "python"
        assert sc.parallelize(range(6), 3).map(lambda x: x + 1).count() == 6
        agent.flush()
    finally:
        capture_agent.disable()
    kinds = {e["type"] for e in sink.events}
    assert {"application_start", "job_start", "stage_completed", "job_end"} <= kinds
    assert_valid_events(sink.events)


def test_lineage_enabled_captures_the_active_context(sc: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from pyspark import SparkContext

    from capture_agent import autoenable

    monkeypatch.setenv("LINEAGE_ENABLED", "true")
    monkeypatch.setenv("LINEAGE_SINK", "noop")
    monkeypatch.setattr(autoenable, "_installed", False)
    monkeypatch.setattr(SparkContext, "__init__", SparkContext.__init__)  # restored afterwards
    try:
        assert autoenable.install_auto_enable()
        agent = capture_agent.current_agent()
        assert agent is not None and agent.sc is sc and agent.running
    finally:
        capture_agent.disable()


def test_config_file_enabled_true_captures_the_active_context(
    sc: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pyspark import SparkContext

    from capture_agent import autoenable

    config = tmp_path / "lineage.toml"
    config.write_text('[lineage]\nenabled = true\nsink = "noop"\n')
    monkeypatch.setenv("LINEAGE_CONFIG", str(config))
    monkeypatch.delenv("LINEAGE_ENABLED", raising=False)
    monkeypatch.setattr(autoenable, "_installed", False)
    monkeypatch.setattr(SparkContext, "__init__", SparkContext.__init__)  # restored afterwards
    try:
        assert autoenable.install_auto_enable()
        agent = capture_agent.current_agent()
        assert agent is not None and agent.sc is sc and agent.running
    finally:
        capture_agent.disable()


def test_config_file_enabled_false_beats_the_environment_and_stops_enable(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from capture_agent import autoenable

    config = tmp_path / "lineage.json"
    config.write_text(json.dumps({"enabled": False}))
    monkeypatch.setenv("LINEAGE_CONFIG", str(config))
    monkeypatch.setenv("LINEAGE_ENABLED", "true")
    monkeypatch.setattr(autoenable, "_installed", False)
    assert not autoenable.install_auto_enable()
    agent = capture_agent.enable(spark, sink=CollectingSink())
    assert not agent.enabled and capture_agent.current_agent() is None


def test_the_agents_jar_is_built_once_a_process() -> None:
    """A Java source newer than the jar does not rebuild it once this process has checked it: a
    job that runs while a source is edited keeps the classes it loaded (a second build had the
    next captured step load them through a second class loader, and fail)."""
    import os

    from capture_agent.build_jar import DEFAULT_JAR, java_sources
    from capture_agent.config import Settings
    from capture_agent.listener import ensure_jar

    settings = Settings(jar=str(DEFAULT_JAR))
    jar = ensure_jar(settings)
    assert jar is not None
    built = jar.stat().st_mtime_ns
    source = java_sources()[0]
    stat = source.stat()
    os.utime(source, ns=(stat.st_atime_ns, built + 60 * 10**9))
    try:
        assert ensure_jar(settings) == jar
        assert jar.stat().st_mtime_ns == built
    finally:
        os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))
