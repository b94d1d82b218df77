"""A trace whose answer is millions of records streams it to its result file: the worker's peak memory
grows by a small part of the answer's size, measured on a real Celery worker process (its peak RSS,
VmHWM, reset by /proc/<pid>/clear_refs before the trace).

The answer is made cheaply: 30 parallelized records, one a partition, fan out to 100,000 each by a
flatMap, so a forward trace from them answers three million collected records. (The walk reads one
partition's lineage table at a time: its memory follows the largest partition, not the answer.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from capture_agent.record.storage.fs import StoreFS
from capture_agent.record.storage.tables import parquet_file
from lineage_server.tracing.models import Trace
from tests.lineage_server.tracing.captured import agent_capture, ask_forward, input_point
from tests.lineage_server.tracing.test_traces_through_worker import wait_for
from tests.lineage_server.worker import celery_worker

pytestmark = [pytest.mark.processes, pytest.mark.django_db(transaction=True), pytest.mark.spark]

PARTITIONS, FAN_OUT = 30, 100_000
RECORDS = PARTITIONS * FAN_OUT


@pytest.fixture
def fan_out(spark: Any, live_server: Any, agent_token: str, tmp_path: Path) -> tuple[str, str]:
    """``parallelize(range(30), 30).flatMap(x -> 100,000 numbers).collect()`` captured: its app id and the
    capture id of its parallelized input."""
    with agent_capture(spark, live_server.url, agent_token, tmp_path) as lc:
        numbers = lc.parallelize(range(PARTITIONS), PARTITIONS).flatMap(lambda x: range(x * FAN_OUT, (x + 1) * FAN_OUT))
        out = numbers.collect()
        assert len(out) == RECORDS
        del out
    app_id = spark.sparkContext.applicationId
    return app_id, input_point(app_id, "-input-")


def _status(pid: int) -> dict[str, int]:
    """The process's memory lines of /proc/<pid>/status, in kB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(("VmRSS", "VmHWM")):
            name, value = line.split(":")
            fields[name] = int(value.split()[0])
    return fields


def test_a_trace_of_millions_of_records_is_written_in_bounded_memory(fan_out, client_as, tmp_path):
    app_id, point = fan_out
    analyst = client_as("andy", "analyst")
    log = tmp_path / "worker.log"

    with celery_worker(log, LINEAGE_TRACE_MODE="local", LINEAGE_TRACE_CONCURRENCY="1") as worker:
        # A first, small trace (back from one output record) loads what a trace uses; then the peak is reset.
        back = analyst.post("/api/v1/traces/", {"application": app_id, "direction": "backward",
                                                "selection": {"ids": [0]}}, format="json")
        warm = wait_for(analyst, back.json()["url"], worker, log, 600)
        assert warm["status"] == "succeeded" and warm["result_count"] == 1, warm
        Path(f"/proc/{worker.pid}/clear_refs").write_text("5")  # resets VmHWM to the current RSS
        before = _status(worker.pid)
        every = [part << 32 for part in range(PARTITIONS)]  # each partition's one record: the whole answer
        asked = ask_forward(analyst, app_id, point, {"ids": every})
        huge = wait_for(analyst, asked["url"], worker, log, 600)
        after = _status(worker.pid)
    row = Trace.objects.get(pk=huge["id"])
    store = StoreFS.resolve(row.result_location)
    answer_kb = parquet_file(store, store.path_of(row.result_location)).read().nbytes // 1024  # as one Arrow table
    growth_kb = after["VmHWM"] - before["VmRSS"]
    print(f"\n{RECORDS:,} records: answer {answer_kb / 1024:.0f} MB as an Arrow table; the worker's peak RSS "
          f"grew {growth_kb / 1024:.1f} MB (RSS {before['VmRSS'] / 1024:.0f} MB before); took {huge['duration_ms']} ms")
    assert huge["status"] == "succeeded" and huge["result_count"] == RECORDS, huge
    # Held whole the answer would take all of answer_kb (as Python rows, several times more). What grows is
    # the walk's reading of one partition's table at a time and the allocators' slack (about 47 MB measured).
    assert growth_kb < answer_kb / 2, (growth_kb, answer_kb)
