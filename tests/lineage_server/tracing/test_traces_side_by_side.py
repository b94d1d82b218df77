"""Several traces side by side in one worker process (Celery's threads pool, LINEAGE_TRACE_CONCURRENCY),
their steps in its process (auto mode, no Spark started) or on its one warm Spark session (spark mode):
they overlap in time (from the rows' recorded start and end), each answer equals the one the same
question gets alone, and cancelling one stops that one only.

The job reads 48 lines of 200 kB; a light question selects the lines holding a marker through five RE2
patterns that match nowhere (seconds of work), the heavy one through a hundred slower ones (minutes)."""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from lineage_server.tracing.models import Trace
from lineage_server.tracing.services import run_trace
from tests.lineage_server.tracing.captured import agent_capture, ask_forward, input_point
from tests.lineage_server.tracing.test_traces_through_worker import all_records, wait_for
from tests.lineage_server.worker import celery_worker

pytestmark = [pytest.mark.processes, pytest.mark.django_db(transaction=True), pytest.mark.spark]

LINES, LINE_CHARS, MARKERS = 48, 200_000, 3
SLOW = [{"op": "regex", "value": rf"[a-q][^u-z]{{13}}x{i}"} for i in range(5)]
HEAVY = {"or": [{"op": "regex", "value": rf"[a-q][^u-z]{{60}}x{i}"} for i in range(100)]}
REPLACED = "ending this worker process"


def light(marker: int) -> dict[str, Any]:
    return {"or": [*SLOW, {"op": "contains", "value": f"MARKER{marker}"}]}


@pytest.fixture
def marked_lines(spark: Any, live_server: Any, agent_token: str, tmp_path: Path) -> tuple[str, str]:
    """A captured ``textFile(...).map(len).collect()`` over 48 long lines, line i holding MARKER(i % 3):
    its app id and its text input's capture id."""
    rng = random.Random(7)
    line = "".join(rng.choices("abcdefghijklmnopqrstuvwxyz ", k=LINE_CHARS))
    text = tmp_path / "marked.txt"
    text.write_text("".join(f"{line[i:]}MARKER{i % MARKERS}{line[:i]}\n" for i in range(LINES)))
    with agent_capture(spark, live_server.url, agent_token, tmp_path) as lc:
        assert len(lc.textFile(str(text), 4).map(len).collect()) == LINES
    app_id = spark.sparkContext.applicationId
    return app_id, input_point(app_id)


def _answer(client: Any, trace: dict[str, Any]) -> list[tuple[str, int, Any]]:
    return sorted((r["capture_id"], r["record_id"], r["value"]) for r in all_records(client, trace["links"]["records"]))


@pytest.mark.parametrize("mode", ["auto", "spark"])
def test_traces_run_side_by_side_exactly_and_a_cancelled_one_stops_alone(marked_lines, client_as, tmp_path, mode):
    app_id, point = marked_lines
    analyst = client_as("andy", "analyst")
    alone, alone_ms = [], []  # each light question answered on its own first, in this process, one at a time
    for marker in range(MARKERS):
        asked = ask_forward(analyst, app_id, point, {"predicate": light(marker)})
        assert run_trace(asked["id"]) is not None
        done = analyst.get(asked["url"]).json()
        assert done["status"] == "succeeded" and done["result_count"] == LINES // MARKERS, done
        alone.append(_answer(analyst, done))
        alone_ms.append(done["duration_ms"])

    log = tmp_path / "worker.log"
    at_start = str(mode == "spark").lower()  # auto mode: every step here runs in the worker's process
    with celery_worker(log, LINEAGE_TRACE_MODE=mode, LINEAGE_TRACE_CONCURRENCY=str(MARKERS + 1),
                       LINEAGE_TRACE_SPARK_AT_START=at_start) as worker:
        deadline = time.monotonic() + 180
        while mode == "spark" and "Spark session started" not in log.read_text():  # a trace would wait for it
            assert time.monotonic() < deadline and worker.poll() is None, log.read_text()[-3000:]
            time.sleep(0.2)
        heavy = ask_forward(analyst, app_id, point, {"predicate": HEAVY})
        lights = [ask_forward(analyst, app_id, point, {"predicate": light(marker)}) for marker in range(MARKERS)]
        ids = [heavy["id"]] + [t["id"] for t in lights]
        while Trace.objects.filter(pk__in=ids, status="running").count() < len(ids):
            assert time.monotonic() < deadline and worker.poll() is None, log.read_text()[-3000:]
            time.sleep(0.1)
        cancelled_at = timezone.now()
        assert analyst.post(heavy["links"]["cancel"]).json()["status"] == "cancelled"
        stopped = f"trace {heavy['id']}: cancelled while running"
        watched = time.monotonic()
        while stopped not in log.read_text():
            # Alone, the heavy trace's work takes minutes: seeing it end is seeing it stopped.
            assert time.monotonic() - watched < 60 and worker.poll() is None, log.read_text()[-3000:]
            time.sleep(0.1)
        stop_s = time.monotonic() - watched
        ended = [wait_for(analyst, t["url"], worker, log, timeout=300) for t in lights]
        assert worker.poll() is None
    assert REPLACED not in log.read_text()
    assert ("Spark session started" in log.read_text()) == (mode == "spark")
    for trace, expected in zip(ended, alone, strict=True):
        assert trace["status"] == "succeeded", trace["error"]
        assert _answer(analyst, trace) == expected
    rows = {t.pk: t for t in Trace.objects.filter(pk__in=ids)}
    assert rows[heavy["id"]].status == "cancelled"
    starts = [t.started_at for pk in ids if (t := rows[pk]).started_at is not None]
    ends = [t.finished_at for pk in ids[1:] if (t := rows[pk]).finished_at is not None]
    assert len(starts) == len(ids) and len(ends) == MARKERS
    # All four were running at one moment: the last to start began before the first to end ended.
    assert max(starts) < min(ends), (starts, ends)
    # The cancel stopped the heavy trace only: the light ones were running then, and went on to succeed.
    assert all(end > cancelled_at for end in ends), (cancelled_at, ends)
    spread = (max(starts) - min(starts)).total_seconds()
    print(f"\n[{mode}] 4 traces side by side: started within {spread:.2f} s of each other; the cancelled one "
          f"stopped {stop_s:.1f} s after its cancel; light runs {[t['duration_ms'] for t in ended]} ms "
          f"({[t['summary']['timings'] for t in ended]}), alone "
          f"{alone_ms} ms")
