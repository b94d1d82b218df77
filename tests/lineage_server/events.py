"""Builders of agent events (docs/ingest-events.md) for server tests."""

from __future__ import annotations

from typing import Any

T0 = 1_763_731_200_000  # 2025-11-21T13:20:00Z in epoch ms


def event(
    type_: str, app_id: str = "local-1", t: int = 0, event_id: str | None = None, **fields: Any
) -> dict[str, Any]:
    key = ":".join(str(fields[k]) for k in ("job_id", "stage_id", "attempt", "path", "rdd_id") if k in fields)
    return {"event_id": event_id or f"{type_}:{key}", "type": type_, "app_id": app_id, "time": T0 + t, **fields}


def operator(rdd_id: int, name: str, parents: list[int], scope: str = "", **extra: Any) -> dict[str, Any]:
    return {"rdd_id": rdd_id, "name": name, "parent_ids": parents, "scope_name": scope, "num_partitions": 2, **extra}


def word_count_with_join(app_id: str = "local-1") -> list[dict[str, Any]]:
    """The events of a two-job application: a word count (2 stages) and a join (3 stages)."""
    return [
        event("application_start", app_id, 0, name="wc", user="ana", spark_version="4.3.0", master="local[2]"),
        event("job_start", app_id, 10, job_id=0, stage_ids=[0, 1], call_site="collect at wc.py:9"),
        event(
            "stage_submitted",
            app_id,
            11,
            stage_id=0,
            attempt=0,
            name="reduceByKey at wc.py:8",
            num_tasks=2,
            parent_stage_ids=[],
            job_id=0,
            operators=[
                operator(0, "data/in.txt", [], "textFile"),
                operator(1, "data/in.txt", [0], "textFile"),
                operator(2, "PairwiseRDD", [1], "reduceByKey"),
            ],
        ),
        event(
            "python_operators",
            app_id,
            12,
            rdd_id=2,
            operators=[{"name": "flatMap", "call_site": "wc.py:7"}, {"name": "map", "call_site": "wc.py:7"}],
        ),
        event(
            "dataset_io",
            app_id,
            12,
            path="file:/data/in.txt",
            direction="read",
            format="text",
            size_bytes=1234,
            job_id=0,
            rdd_id=0,
        ),
        event(
            "stage_completed",
            app_id,
            20,
            stage_id=0,
            attempt=0,
            name="reduceByKey at wc.py:8",
            num_tasks=2,
            parent_stage_ids=[],
            job_id=0,
            status="succeeded",
            metrics={"tasks": 2, "input_bytes": 1234, "shuffle_write_bytes": 300, "executor_run_time_ms": 40},
        ),
        event(
            "stage_submitted",
            app_id,
            21,
            stage_id=1,
            attempt=0,
            name="collect at wc.py:9",
            num_tasks=2,
            parent_stage_ids=[0],
            job_id=0,
            operators=[
                operator(3, "ShuffledRDD", [2], "reduceByKey"),
                operator(4, "PythonRDD", [3], "collect"),
            ],
        ),
        event(
            "stage_completed",
            app_id,
            30,
            stage_id=1,
            attempt=0,
            name="collect at wc.py:9",
            num_tasks=2,
            parent_stage_ids=[0],
            job_id=0,
            status="succeeded",
            metrics={"tasks": 2, "shuffle_read_bytes": 300},
        ),
        event("job_end", app_id, 31, job_id=0, status="succeeded"),
        event("application_end", app_id, 100),
    ]
