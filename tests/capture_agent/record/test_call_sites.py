"""Jobs and stages of a captured job are named after the user's lines, as PySpark names a plain
job's ("reduceByKey at job.py:12"), never after the agent's own frames."""

from __future__ import annotations

import os
from operator import add

import pytest

from capture_agent.record.query.call_site import AGENT_DIR

pytestmark = pytest.mark.spark

HERE = os.path.abspath(__file__)


def _jobs(sc):
    """The ids of the jobs of this thread's job group (none, unless a test left one set), once the
    listener bus has passed every event posted so far to the status tracker (which it updates
    asynchronously: behind a busy bus, the jobs just run are not there yet)."""
    sc._jsc.sc().listenerBus().waitUntilEmpty()
    return set(sc.statusTracker().getJobIdsForGroup(sc.getLocalProperty("spark.jobGroup.id")))


def _stage_names(sc, jobs):
    tracker = sc.statusTracker()
    return {tracker.getStageInfo(stage).name for job in jobs for stage in tracker.getJobInfo(job).stageIds
            if tracker.getStageInfo(stage) is not None}


def test_stages_are_named_by_the_line_that_made_them_and_the_action(lc, sc, write_text):
    path = write_text("words.txt", ["a b", "b c", "c a b"])
    before = _jobs(sc)
    counts = lc.textFile(path, 2).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add)
    made = _line_of("reduceByKey(add)")
    assert sorted(counts.collect()) == [("a", 2), ("b", 3), ("c", 2)]
    collected = _line_of("counts.collect()")
    names = _stage_names(sc, _jobs(sc) - before)
    assert f"reduceByKey at {HERE}:{made}" in names, names
    assert f"collect at {HERE}:{collected}" in names, names
    assert f"textFile at {HERE}:{made}" in names, names
    assert not [n for n in names if AGENT_DIR in n], names


def _line_of(text):
    """The line of this file holding ``text`` (once)."""
    with open(HERE, encoding="utf-8") as source:
        [line] = [n for n, content in enumerate(source, 1) if text in content and "_line_of" not in content]
    return line


def test_a_constructor_is_named_by_its_class(spark, tmp_path):
    from capture_agent.record import LineageContext
    from capture_agent.record.query import executors

    sc = spark.sparkContext
    executors._CHECKED.discard(str(sc.applicationId))  # its executors' check runs again, as a job
    before = _jobs(sc)
    LineageContext(spark, store=str(tmp_path / "lineage"))
    made = _line_of("LineageContext(spark, store=")
    names = _stage_names(sc, _jobs(sc) - before)
    assert names == {f"LineageContext at {HERE}:{made}"}, names



def test_dataframe_stages_of_an_unmodified_job_are_named_by_its_lines(spark, tmp_path):
    """Records on by configuration: every job of a captured action and a captured write (the
    agent's copy of local rows, the rewritten query's shuffles), and of a read (its schema's
    inference), is named after the user's line and the method called there, not ``parquet at
    NativeMethodAccessorImpl.java:0``."""
    from pyspark.sql import functions as F

    from capture_agent.record.capture import implicit

    sc = spark.sparkContext
    spark.createDataFrame([(i, i % 3, float(i)) for i in range(30)], "id long, k long, x double") \
        .write.parquet(str(tmp_path / "facts"))
    (tmp_path / "names.json").write_text('{"k": 0, "name": "zero"}\n')
    implicit.enable_records(spark, str(tmp_path / "lineage"))
    try:
        before = _jobs(sc)
        assert spark.read.json(str(tmp_path / "names.json")).columns == ["k", "name"]  # its schema inferred by a job
        inferred = _line_of("spark.read.json(str(tmp_path")
        assert _stage_names(sc, _jobs(sc) - before) == {f"json at {HERE}:{inferred}"}
        facts = spark.read.parquet(str(tmp_path / "facts"))
        names = spark.createDataFrame([(0, "zero"), (1, "one"), (2, "two")], "k long, name string")
        totals = facts.join(names, "k").groupBy("name").agg(F.sum("x").alias("total"))
        before = _jobs(sc)
        assert len(totals.collect()) == 3
        collected = _line_of("len(totals.collect()) == 3")
        totals.write.parquet(str(tmp_path / "totals"))
        wrote = _line_of("totals.write.parquet(")
        names_seen = _stage_names(sc, _jobs(sc) - before)
    finally:
        implicit.disable_records(spark)
    assert f"collect at {HERE}:{collected}" in names_seen and f"parquet at {HERE}:{wrote}" in names_seen, names_seen
    assert names_seen <= {f"collect at {HERE}:{collected}", f"parquet at {HERE}:{wrote}"}, names_seen


def test_dataframe_stages_of_a_lineage_context_are_named_by_the_users_lines(lc, sc, tmp_path):
    from pyspark.sql import functions as F

    lc.spark.createDataFrame([(i, i % 3) for i in range(20)], "id long, k long").write.parquet(str(tmp_path / "f"))
    frame = lc.read.parquet(str(tmp_path / "f")).groupBy("k").agg(F.count("*").alias("n"))
    before = _jobs(sc)
    assert frame.count() == 3
    counted = _line_of("assert frame.count() == 3")
    names = _stage_names(sc, _jobs(sc) - before)
    assert names == {f"count at {HERE}:{counted}"}, names
