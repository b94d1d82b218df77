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


def stage_run(
    app_id: str,
    submitted_t: int,
    completed_t: int,
    *,
    operators: list[dict[str, Any]],
    metrics: dict[str, int],
    **fields: Any,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A stage's submitted event (with its operators) and its successful completed event (with metrics)."""
    submitted = event("stage_submitted", app_id, submitted_t, attempt=0, num_tasks=2, operators=operators, **fields)
    completed = event(
        "stage_completed", app_id, completed_t, attempt=0, num_tasks=2, status="succeeded", metrics=metrics, **fields
    )
    return submitted, completed


def word_count_with_join(app_id: str = "local-1") -> list[dict[str, Any]]:
    """The events of an application whose one job is a word count: a map stage and a collect stage."""
    map_submitted, map_completed = stage_run(
        app_id,
        11,
        20,
        stage_id=0,
        name="reduceByKey at wc.py:8",
        parent_stage_ids=[],
        job_id=0,
        operators=[
            operator(0, "data/in.txt", [], "textFile"),
            operator(1, "data/in.txt", [0], "textFile"),
            operator(2, "PairwiseRDD", [1], "reduceByKey"),
        ],
        metrics={"tasks": 2, "input_bytes": 1234, "shuffle_write_bytes": 300, "executor_run_time_ms": 40},
    )
    collect_submitted, collect_completed = stage_run(
        app_id,
        21,
        30,
        stage_id=1,
        name="collect at wc.py:9",
        parent_stage_ids=[0],
        job_id=0,
        operators=[operator(3, "ShuffledRDD", [2], "reduceByKey"), operator(4, "PythonRDD", [3], "collect")],
        metrics={"tasks": 2, "shuffle_read_bytes": 300},
    )
    return [
        event("application_start", app_id, 0, name="wc", user="ana", spark_version="4.3.0", master="local[2]"),
        event("job_start", app_id, 10, job_id=0, stage_ids=[0, 1], call_site="collect at wc.py:9"),
        map_submitted,
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
        map_completed,
        collect_submitted,
        collect_completed,
        event("job_end", app_id, 31, job_id=0, status="succeeded"),
        event("application_end", app_id, 100),
    ]


def capture_point(
    app_id: str,
    t: int,
    capture_id: str,
    *,
    missing: list[dict[str, Any]] | None = None,
    event_id: str | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """A record-level capture point; ``missing`` lists the per-partition tables the agent could not write."""
    body: dict[str, Any] = {
        "capture_id": capture_id,
        "kind": "stage",
        "location": f"/store/{app_id}/{capture_id}",
        "rows": 10,
        "bytes": 100,
        "parents": [],
        **fields,
    }
    if missing is not None:
        body["missing"] = missing
    return event("capture_point", app_id, t, event_id or f"capture_point:{capture_id}:{t}", **body)
