"""A trace step stuck in one long call of native code cannot be interrupted: past its time limit, the
worker process ends itself with exit code 75 (watch.EXIT_STUCK), the trace has failed naming the
limit, and a fresh worker (what scripts/run.sh's loop or the compose restart policy starts) runs the
next trace.

The stuck step is real: RE2 runs the pattern below without its DFA (out of its memory budget) at
seconds a megabyte, in one call per line; the one line is 16 MB, a call of a minute or more on the
development machine, so it is still in that call when the limit (4 s) and the grace (5 s) pass."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from lineage_server.tracing.models import Trace
from lineage_server.tracing.services.watch import EXIT_STUCK
from tests.lineage_server.tracing.captured import agent_capture, ask_forward, input_point
from tests.lineage_server.tracing.test_traces_through_worker import wait_for
from tests.lineage_server.worker import celery_worker

pytestmark = [pytest.mark.processes, pytest.mark.django_db(transaction=True), pytest.mark.spark]

SLOW_NFA = {"op": "regex", "value": "[a-z].{20}[a-z].{20}[a-z].{20}[a-z].{20}Q"}
LINE_CHARS = 16_000_000
LIMIT = 4


@pytest.fixture
def one_long_line(spark: Any, live_server: Any, agent_token: str, tmp_path: Path) -> tuple[str, str]:
    rng = random.Random(3)
    text = tmp_path / "one.txt"
    text.write_text("".join(rng.choices("abcdefghijklmnopqrstuvwxyz ", k=LINE_CHARS)) + "\nshort line\n")
    with agent_capture(spark, live_server.url, agent_token, tmp_path) as lc:
        assert lc.textFile(str(text), 1).map(len).collect() == [LINE_CHARS, 10]
    app_id = spark.sparkContext.applicationId
    return app_id, input_point(app_id)


def test_a_step_stuck_in_native_code_past_its_time_limit_replaces_the_worker_process(one_long_line, client_as,
                                                                                       tmp_path):
    app_id, point = one_long_line
    analyst = client_as("andy", "analyst")
    log = tmp_path / "worker.log"
    with celery_worker(log, LINEAGE_TRACE_MODE="local", LINEAGE_TRACE_TIME_LIMIT_SECONDS=str(LIMIT)) as worker:
        stuck = ask_forward(analyst, app_id, point, {"predicate": SLOW_NFA})
        code = worker.wait(timeout=180)
    text = log.read_text()
    assert code == EXIT_STUCK, text[-3000:]
    assert f"trace {stuck['id']}: its step did not stop" in text and "ending this worker process" in text
    row = Trace.objects.get(pk=stuck["id"])
    assert row.status == "failed" and f"time limit of {LIMIT} s" in row.error, row.error
    log = tmp_path / "worker2.log"
    with celery_worker(log, LINEAGE_TRACE_MODE="local") as fresh:
        nxt = wait_for(analyst, ask_forward(analyst, app_id, point, {"ids": [0]})["url"], fresh, log)
        assert nxt["status"] == "succeeded" and nxt["result_count"] == 1, nxt
        assert fresh.poll() is None
