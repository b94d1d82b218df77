"""Spark event-log JSON -> v1 events: deterministic ids and field mapping."""

from __future__ import annotations

import json
from typing import Any

from capture_agent.events import EventConverter
from capture_agent.protocol import event_id
from tests.ingest_schema import assert_valid_events

JOB_START: dict[str, Any] = {
    "Event": "SparkListenerJobStart", "Job ID": 4, "Submission Time": 1000, "Stage IDs": [7, 8],
    "Stage Infos": [{"Stage ID": 7, "Stage Name": "reduceByKey at job.py:3", "RDD Info": [
        {"RDD ID": 0, "Name": "data/in.txt", "Scope": '{"id":"0","name":"textFile"}', "Parent IDs": []},
        {"RDD ID": 1, "Name": "data/in.txt", "Scope": '{"id":"0","name":"textFile"}', "Parent IDs": [0]},
    ]}],
    "Properties": {"callSite.short": "collect at job.py:4", "spark.jobGroup.id": "g",
                   "lineage.output.path": "/out", "lineage.output.format": "text"},
}
STAGE_COMPLETED: dict[str, Any] = {
    "Event": "SparkListenerStageCompleted",
    "Stage Info": {
        "Stage ID": 7, "Stage Attempt ID": 1, "Stage Name": "reduceByKey", "Number of Tasks": 2,
        "Parent IDs": [], "Completion Time": 2000, "RDD Info": [],
        "Accumulables": [
            {"Name": "internal.metrics.shuffle.read.remoteBytesRead", "Value": 5},
            {"Name": "internal.metrics.shuffle.read.localBytesRead", "Value": 7},
            {"Name": "internal.metrics.executorRunTime", "Value": 30},
            {"Name": "my.own.accumulator", "Value": 99},
        ],
    },
    "Lineage Task Counts": {"Tasks": 3, "Failed": 1, "Duration": 40},
}


def convert(*events: dict) -> list[dict]:
    """The converter's events, each checked against docs/ingest-events.schema.json."""
    converter = EventConverter("local-1", qualify=lambda p: "file:/work/" + p.lstrip("/"))
    converted = converter.convert_lines(json.dumps(e) for e in events)
    assert_valid_events(converted)
    return converted


def test_same_spark_event_gives_same_ids_on_every_conversion() -> None:
    first = convert(JOB_START, STAGE_COMPLETED)
    second = convert(JOB_START, STAGE_COMPLETED)
    assert [e["event_id"] for e in first] == [e["event_id"] for e in second]
    assert [e["event_id"] for e in first] == [
        "job_start:4", "dataset_io:read:job4:file:/work/data/in.txt", "stage_completed:7:1"]


def test_job_start_fields_and_rdd_input() -> None:
    job, read = convert(JOB_START)
    assert job["stage_ids"] == [7, 8] and job["call_site"] == "collect at job.py:4" and job["job_group"] == "g"
    assert (read["direction"], read["format"], read["rdd_id"], read["job_id"]) == ("read", "text", 0, 4)


def test_rdd_output_is_written_when_its_job_succeeds() -> None:
    end = {"Event": "SparkListenerJobEnd", "Job ID": 4, "Completion Time": 3000,
           "Job Result": {"Result": "JobSucceeded"}}
    events = convert(JOB_START, end)
    written = [e for e in events if e.get("direction") == "written"]
    assert written == [{"event_id": "dataset_io:written:job4:file:/work/out", "type": "dataset_io",
                        "app_id": "local-1", "time": 3000, "path": "file:/work/out",
                        "direction": "written", "job_id": 4, "format": "text"}]


def test_stage_metrics_sum_shuffle_reads_and_carry_task_counts() -> None:
    (stage,) = convert(STAGE_COMPLETED)
    assert stage["status"] == "succeeded" and stage["attempt"] == 1
    assert stage["metrics"] == {"shuffle_read_bytes": 12, "executor_run_time_ms": 30,
                                "tasks": 3, "failed_tasks": 1, "duration_ms": 40}


def test_long_paths_keep_event_ids_within_128_characters() -> None:
    long_id = event_id("dataset_io", "read", "job1", "/x" * 200)
    assert len(long_id) <= 128 and long_id == event_id("dataset_io", "read", "job1", "/x" * 200)
    assert long_id != event_id("dataset_io", "read", "job1", "/y" * 200)


def test_failed_job_and_stage_carry_their_reasons() -> None:
    job_end = {"Event": "SparkListenerJobEnd", "Job ID": 4, "Completion Time": 3000,
               "Job Result": {"Result": "JobFailed", "Exception": {"Message": "boom"}}}
    stage = json.loads(json.dumps(STAGE_COMPLETED))
    stage["Stage Info"]["Failure Reason"] = "Task 1 failed 4 times"
    events = convert(JOB_START, job_end, stage)
    assert [e for e in events if e["type"] == "job_end"][0]["error"] == "boom"
    assert not [e for e in events if e.get("direction") == "written"]  # a failed save wrote nothing
    (failed_stage,) = [e for e in events if e["type"] == "stage_completed"]
    assert (failed_stage["status"], failed_stage["failure_reason"]) == ("failed", "Task 1 failed 4 times")


def test_every_kind_of_converted_event_fits_the_schema_even_with_oversized_text() -> None:
    """Text past the server's limits is cut by the converter, so no batch is refused for it."""
    huge = "x" * 70_000
    converter = EventConverter("local-1", qualify=lambda p: p)
    spark_events = [
        {**JOB_START, "Properties": {**JOB_START["Properties"], "spark.job.description": huge,
                                     "spark.jobGroup.id": huge, "lineage.output.path": "/o" * 2000}},
        {"Event": "SparkListenerStageSubmitted", "Stage Info": {
            "Stage ID": 7, "Stage Attempt ID": 0, "Stage Name": huge, "Number of Tasks": 2, "Parent IDs": [3],
            "Submission Time": 1500, "Details": huge, "RDD Info": [
                {"RDD ID": 2, "Name": huge, "Parent IDs": [1], "Number of Partitions": 2, "Callsite": huge,
                 "Scope": json.dumps({"id": huge, "name": huge}), "Storage Level": {"Use Memory": True}}]}},
        STAGE_COMPLETED,
        {"Event": "SparkListenerJobEnd", "Job ID": 4, "Completion Time": 3000,
         "Job Result": {"Result": "JobFailed", "Exception": {"Message": huge}}},
        {"Event": "lineage.SqlIo", "Execution ID": 2, "Time": 2500,
         "Reads": [{"Path": "/r" * 3000, "Format": huge}], "Writes": [{"Path": "s3://b/t", "Format": "parquet"}]},
        {"Event": "SparkListenerApplicationEnd", "Timestamp": 9000},
    ]
    events = converter.convert_lines(json.dumps(e) for e in spark_events)
    events.append(converter.application_start(name=huge, user=huge, spark_version=huge, master=huge,
                                              start_time=100, attempt_id=huge, spark_conf={"k": huge}))
    events.append(converter.python_operators(5, ((huge, huge), ("map", "job.py:3")), 200))
    assert {e["type"] for e in events} == {"application_start", "application_end", "job_start", "job_end",
                                           "stage_submitted", "stage_completed", "dataset_io", "python_operators"}
    assert_valid_events(events)
    assert all(len(e["event_id"]) <= 128 for e in events)
