"""What-ifs asked through the API and run by a real Celery worker, a process that never ran the job:
its Spark session replays the job kept in the run's folder (an RDD job's recipes, a DataFrame
query's plan). Checked against the job's answer recomputed from the input files without the
deleted records; read by fate, downloaded, and listed in the team history beside traces."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from capture_agent.record.query.replay_strategies import FrameQuery, Restricted
from tests.lineage_server.tracing.captured import TOTAL_CUSTOMERS, TOTAL_ORDERS, frame_totals, topic_totals
from tests.lineage_server.tracing.test_traces_through_worker import all_records, wait_for
from tests.lineage_server.worker import celery_worker

pytestmark = [pytest.mark.processes, pytest.mark.django_db(transaction=True), pytest.mark.spark]


@pytest.fixture(scope="module")
def worker(django_db_setup: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Path]]:
    """One worker for the module's what-ifs (none stops it or sets its limits): its Spark session
    starts at the first what-if and replays the others; the worker process and its log file."""
    log = tmp_path_factory.mktemp("whatif-worker") / "worker.log"
    with celery_worker(log, LINEAGE_TRACE_MODE="local", LINEAGE_TRACE_SPARK_AT_START="false") as process:
        yield process, log


def test_a_what_if_run_by_the_worker_gives_old_and_new_totals(captured, client_as, worker):
    analyst = client_as("andy", "analyst")
    viewer = client_as("vera", "viewer")
    points = analyst.get(f"/api/v1/applications/{captured.app_id}/capture-points/?kind=input").json()["results"]
    text = min(points, key=lambda p: p["capture_id"])["capture_id"]
    question = {"application": captured.app_id, "capture_point": text, "name": "without timeouts",
                "selection": {"predicate": {"op": "contains", "value": "timeout"}}}
    assert viewer.post("/api/v1/whatifs/", question, format="json").status_code == 403
    refused = analyst.post("/api/v1/whatifs/", {**question, "capture_point": None}, format="json")
    assert refused.status_code == 400 and "capture_point" in refused.json()
    asked = analyst.post("/api/v1/whatifs/", question, format="json")
    assert asked.status_code == 202, asked.json()
    assert asked.json()["kind"] == "whatif" and "/api/v1/whatifs/" in asked.json()["url"]
    done = wait_for(analyst, asked.json()["url"], *worker)
    assert done["status"] == "succeeded", done["error"]
    assert (done["summary"]["replay"]["done"], done["summary"]["replay"]["how"]) == (True, Restricted.name)
    after = topic_totals([line for line in captured.lines if "timeout" not in line])
    changed = all_records(analyst, done["links"]["records"], fate="changed", page_size=2,
                          capture_id=done["summary"]["target"])
    expected = sorted(([t, n], [t, after[t]]) for t, n in captured.result.items() if after.get(t, n) != n)
    assert sorted((r["value"], r["new_value"]) for r in changed) == expected
    assert all(r["fate"] == "changed" and r["record_id"] is not None for r in changed)
    unchanged = all_records(analyst, done["links"]["records"], fate="unchanged",
                            capture_id=done["summary"]["target"])
    assert sorted(r["value"] for r in unchanged) == sorted([t, n] for t, n in captured.result.items()
                                                            if after.get(t) == n)
    assert analyst.get(done["links"]["records"] + "?fate=gone").status_code == 400

    body = analyst.get(done["links"]["download_csv"])
    rows = list(csv.DictReader(io.StringIO(b"".join(body.streaming_content).decode())))
    assert {r["fate"] for r in rows} >= {"changed"} and len(rows) == done["result_count"]

    history = analyst.get("/api/v1/history/").json()["results"]
    assert [(h["kind"], h["url"]) for h in history] == [("whatif", done["url"])]
    assert analyst.get("/api/v1/traces/").json()["results"] == []  # traces list traces only
    assert analyst.get("/api/v1/history/?kind=trace").json()["results"] == []
    renamed = analyst.patch(done["url"], {"pinned": True}, format="json")
    assert renamed.status_code == 200 and renamed.json()["pinned"] is True
    graph = analyst.get(done["links"]["graph"]).json()
    assert graph["whatif"] == done["id"] and {p["capture_id"] for p in graph["points"]} >= {text}


def test_a_dataframe_what_if_run_by_the_worker_replays_the_kept_plan(frame_job, client_as, worker):
    """The worker, a process with a Spark session of its own, loads the query's kept plan (a
    Python UDF in it) and runs it without the deleted orders."""
    app_id, _ = frame_job
    analyst = client_as("andy", "analyst")
    points = analyst.get(f"/api/v1/applications/{app_id}/capture-points/?kind=input").json()["results"]
    source = next(p["capture_id"] for p in points if p["capture_id"].endswith("read.parquet"))
    question = {"application": app_id, "capture_point": source, "name": "without small orders",
                "selection": {"predicate": {"field": "amount", "op": "in", "value": [6.0, 7.0]}}}
    asked = analyst.post("/api/v1/whatifs/", question, format="json")
    assert asked.status_code == 202, asked.json()
    done = wait_for(analyst, asked.json()["url"], *worker)
    assert done["status"] == "succeeded", done["error"]
    assert (done["summary"]["replay"]["done"], done["summary"]["replay"]["how"]) == (True, FrameQuery.name), \
        done["summary"]["replay"]
    before = frame_totals(TOTAL_ORDERS, TOTAL_CUSTOMERS)
    after = frame_totals([o for o in TOTAL_ORDERS if o[2] not in (6.0, 7.0)], TOTAL_CUSTOMERS)
    changed = all_records(analyst, done["links"]["records"], fate="changed", capture_id=done["summary"]["target"])
    assert sorted((r["value"]["country"], r["value"]["total"], r["new_value"]["total"]) for r in changed) == \
        sorted((c, before[c], after[c]) for c in before if after.get(c) != before[c])
    assert changed and done["summary"]["output"]["changed"] == len(changed)
