"""Realistic agent events of one simulated Spark application (docs/ingest-events.md), with what they should create."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any

Event = dict[str, Any]
METRICS = ("executor_run_time_ms", "executor_cpu_time_ns", "input_bytes", "input_records", "shuffle_write_bytes")


@dataclass
class SimulatedApplication:
    """The events of one application run, in the order its agent sends them, and the rows they must give."""

    app_id: str
    events: list[Event] = field(default_factory=list)
    jobs: int = 0
    stages: int = 0
    operators: int = 0
    dataset_ios: int = 0
    python_pipelines: int = 0
    capture_points: int = 0
    finalized: bool = True  # the worker rolls it up once ended (an OpenLineage run is not)

    @property
    def event_ids(self) -> set[str]:
        if self.finalized:
            return {e["event_id"] for e in self.events}
        from _ingest_openlineage import event_id

        return {event_id(e) for e in self.events}


def simulated_application(app_id: str, rng: random.Random, shared_inputs: list[str]) -> SimulatedApplication:
    """An application of 2-4 jobs, each of 1-3 stages of 2-6 operators, reading a shared input and writing its own."""
    app = SimulatedApplication(app_id)
    clock = _Clock()

    def add(type_: str, event_id: str, **fields: Any) -> None:
        app.events.append({"event_id": event_id, "type": type_, "app_id": app_id, "time": clock.tick(), **fields})

    add("application_start", "application_start", name=f"nightly-{app_id[-4:]}", user="bench",
        spark_version="4.3.0", master="spark://127.0.0.1:7077", spark_conf={"spark.executor.cores": "2"})
    stage_id = rdd_id = 0
    for job_id in range(rng.randint(2, 4)):
        stage_ids = list(range(stage_id, stage_id + rng.randint(1, 3)))
        stage_id += len(stage_ids)
        add("job_start", f"job_start:{job_id}", job_id=job_id, stage_ids=stage_ids,
            description=f"collect at job.py:{10 + job_id}", call_site=f"collect at job.py:{10 + job_id}")
        source = rng.choice(shared_inputs)
        add("dataset_io", f"dataset_io:read:job{job_id}:{source}", path=source, direction="read", format="text",
            size_bytes=4096 * (1 + shared_inputs.index(source)), job_id=job_id, rdd_id=rdd_id)
        app.dataset_ios += 1
        parents: list[int] = []
        for sid in stage_ids:
            operators = [_operator(rdd_id + i, i) for i in range(rng.randint(2, 6))]
            rdd_id += len(operators)
            stage = {"stage_id": sid, "attempt": 0, "name": f"reduceByKey at job.py:{20 + sid}",
                     "num_tasks": 4, "parent_stage_ids": parents, "job_id": job_id, "operators": operators}
            add("stage_submitted", f"stage_submitted:{sid}:0", **stage)
            add("python_operators", f"python_operators:{operators[-1]['rdd_id']}", rdd_id=operators[-1]["rdd_id"],
                operators=[{"name": "flatMap", "call_site": "job.py:7"}, {"name": "map", "call_site": "job.py:8"}])
            metrics = {"tasks": 4, **{name: rng.randint(1, 10**6) for name in METRICS}}
            add("stage_completed", f"stage_completed:{sid}:0", **stage, status="succeeded", metrics=metrics)
            app.stages += 1
            app.operators += len(operators)
            app.python_pipelines += 1
            parents = [sid]
        target = f"file:/bench/out/{app_id}/job{job_id}"
        add("dataset_io", f"dataset_io:written:job{job_id}:{target}", path=target, direction="written",
            format="parquet", size_bytes=rng.randint(1, 10**7), job_id=job_id)
        app.dataset_ios += 1
        add("job_end", f"job_end:{job_id}", job_id=job_id, status="succeeded")
        app.jobs += 1
    for n in range(2):
        add("capture_point", f"capture_point:{app_id}:cp-{n}", capture_id=f"cp-{n}", kind="stage", stage_id=n,
            location=f"/bench/lineage/{app_id}/cp-{n}", rows=1000, bytes=8000, parents=[f"cp-{n - 1}"] if n else [])
        app.capture_points += 1
    add("application_end", "application_end")
    return app


def batches(events: list[Event], rng: random.Random, largest: int) -> list[list[Event]]:
    """The events cut into batches of 1..largest, as an agent's flushes cut them."""
    out: list[list[Event]] = []
    start = 0
    while start < len(events):
        size = rng.randint(1, largest)
        out.append(events[start : start + size])
        start += size
    return out


def _operator(rdd_id: int, position: int) -> Event:
    name = "PythonRDD" if position else "MapPartitionsRDD"
    return {"rdd_id": rdd_id, "name": name, "parent_ids": [rdd_id - 1] if position else [], "scope_name": "map",
            "call_site": "map at job.py:8", "num_partitions": 4, "cached": False}


class _Clock:
    """Strictly increasing epoch milliseconds, starting now."""

    def __init__(self) -> None:
        self.now = int(time.time() * 1000)

    def tick(self) -> int:
        self.now += 7
        return self.now
