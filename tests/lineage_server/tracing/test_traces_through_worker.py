"""Traces asked through the API, run by a real Celery worker on its warm Spark session, followed to
the end, and their answers read page by page and downloaded: checked against the input files."""

from __future__ import annotations

import csv
import io
import json
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from tests.lineage_server.tracing.captured import TOPICS
from tests.lineage_server.worker import celery_worker

pytestmark = [pytest.mark.processes, pytest.mark.django_db(transaction=True), pytest.mark.spark]


def wait_for(client: Any, url: str, worker: Any, log: Path, timeout: float = 240) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body = client.get(url).json()
        if body["status"] not in ("queued", "running"):
            return body
        assert worker.poll() is None, log.read_text()
        time.sleep(0.3)
    raise AssertionError(f"{url} did not finish: {body}\n{log.read_text()[-3000:]}")


def all_records(client: Any, url: str, **params: Any) -> list[dict[str, Any]]:
    """Every record of a result, page after page (``params``: more query parameters)."""
    records: list[dict[str, Any]] = []
    page: str | None = f"{url}?{urlencode({'page_size': 37, **params})}"
    while page:
        body = client.get(page).json()
        records.extend(body["results"])
        page = body["next"]
    return records


@pytest.mark.backends
def test_traces_run_by_the_worker_answer_like_the_input_files_say(captured, client_as, tmp_path):
    analyst = client_as("andy", "analyst")
    log = tmp_path / "worker.log"
    with celery_worker(log, LINEAGE_TRACE_MODE="spark", LINEAGE_TRACE_SPARK_AT_START="true") as worker:
        asked = analyst.post("/api/v1/traces/", {
            "application": captured.app_id, "direction": "backward", "name": "where incidents come from",
            "selection": {"predicate": {"field": 0, "op": "equals", "value": "incident"}},
        }, format="json")
        assert asked.status_code == 202, asked.json()
        assert asked["Location"] == asked.json()["url"]
        back = wait_for(analyst, asked.json()["url"], worker, log)
        assert back["status"] == "succeeded", back["error"]
        words = captured.words_of("incident")
        expected = sorted(captured.lines_with(words) + captured.topic_lines_of("incident"))
        records = all_records(analyst, back["links"]["records"])
        assert sorted(r["value"] for r in records) == expected
        assert all(r["file"] and r["offset"] is not None for r in records)
        for record in records[:5]:  # file and offset point at the record itself
            with open(record["file"].removeprefix("file:"), "rb") as source:
                source.seek(record["offset"])
                assert source.readline().decode().rstrip("\n") == record["value"]
        assert back["summary"]["timings"]["spark_jobs"] > 0  # the warm session ran the steps
        assert back["progress"]["points_done"] == back["progress"]["points_total"] > 0

        download = analyst.get(back["links"]["download_csv"])
        rows = list(csv.DictReader(io.StringIO(b"".join(download.streaming_content).decode())))
        assert sorted(r["value"] for r in rows) == expected
        lines = b"".join(analyst.get(back["links"]["download_jsonl"]).streaming_content).decode().splitlines()
        assert sorted(json.loads(line)["value"] for line in lines) == expected

        # Forward from the lines that hold "disk", then back from that answer (a seeded trace).
        text_point = next(p["capture_id"] for p in back["summary"]["points"]
                          if p["capture_id"].endswith("0001-input-textFile"))
        fwd = wait_for(analyst, analyst.post("/api/v1/traces/", {
            "application": captured.app_id, "direction": "forward", "capture_point": text_point,
            "selection": {"predicate": {"op": "contains", "value": "disk"}},
        }, format="json").json()["url"], worker, log)
        assert fwd["status"] == "succeeded", fwd["error"]
        touched = {w for line in captured.lines if "disk" in line for w in line.split()}
        topics = {t for w, t in TOPICS.items() if w in touched}
        assert {r["value"][0] for r in all_records(analyst, fwd["links"]["records"])} == topics
        seeded = wait_for(analyst, analyst.post("/api/v1/traces/", {
            "application": captured.app_id, "direction": "backward", "selection": {"trace": fwd["id"]},
        }, format="json").json()["url"], worker, log)
        assert seeded["status"] == "succeeded", seeded["error"]
        every = {w for t in topics for w in captured.words_of(t)}
        lines_back = [r["value"] for r in all_records(analyst, seeded["links"]["records"]) if "," not in r["value"]]
        assert sorted(lines_back) == captured.lines_with(every)

        # Cancelling a trace queued behind another: it ends cancelled, without an answer.
        first = analyst.post("/api/v1/traces/", {"application": captured.app_id, "direction": "backward",
                                                 "selection": {"all": True}, "recompute": True}, format="json")
        second = analyst.post("/api/v1/traces/", {"application": captured.app_id, "direction": "backward",
                                                  "selection": {"ids": [0]}, "recompute": True}, format="json")
        cancelled = analyst.post(second.json()["links"]["cancel"])
        assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
        assert wait_for(analyst, first.json()["url"], worker, log)["status"] == "succeeded"
        time.sleep(1)
        final = analyst.get(second.json()["url"]).json()
        assert final["status"] == "cancelled" and final["result_count"] is None
        assert analyst.post(second.json()["links"]["cancel"]).status_code == 409

    # The history: filtered, searched, and another team sees none of it.
    history = analyst.get("/api/v1/traces/", {"application": captured.app_id, "direction": "backward"}).json()
    assert history["count"] == 4
    named = analyst.get("/api/v1/traces/", {"search": "incidents"}).json()["results"]
    assert [t["id"] for t in named] == [back["id"]]
    from lineage_server.accounts.services import create_team

    outsider = client_as("otto", "admin", create_team("other", "Other team"))
    assert outsider.get("/api/v1/traces/").json()["count"] == 0
    assert outsider.get(back["url"]).status_code == 404


def test_a_worker_on_a_standalone_cluster_runs_traces_there(captured, client_as, tmp_path):
    from tests.integration.standalone_cluster import standalone_cluster

    analyst = client_as("andy", "analyst")
    log = tmp_path / "worker.log"
    with standalone_cluster(tmp_path / "cluster") as cluster, celery_worker(
        log, LINEAGE_SPARK_MASTER=cluster.url, LINEAGE_TRACE_MODE="spark", SPARK_LOCAL_IP="127.0.0.1"
    ) as worker:
        asked = analyst.post("/api/v1/traces/", {
            "application": captured.app_id, "direction": "backward", "recompute": True,
            "selection": {"predicate": {"field": 0, "op": "in", "value": ["network", "storage"]}},
        }, format="json")
        trace = wait_for(analyst, asked.json()["url"], worker, log)
        assert trace["status"] == "succeeded", trace["error"]
        assert trace["summary"]["timings"]["spark_jobs"] > 0
        # The steps ran on the cluster: the worker's session is one of the master's applications.
        assert [app["name"] for app in cluster.status()["activeapps"]] == ["lineage-trace-worker"]
    words = captured.words_of("network") | captured.words_of("storage")
    expected = captured.lines_with(words) + captured.topic_lines_of("network") + captured.topic_lines_of("storage")
    assert sorted(r["value"] for r in all_records(analyst, trace["links"]["records"])) == sorted(expected)


def test_cancelling_a_running_trace_stops_it_and_the_worker_goes_on(captured, client_as, tmp_path):
    from lineage_server.tracing.models import Trace

    analyst = client_as("andy", "analyst")
    log = tmp_path / "worker.log"
    # Spark starts once the worker holds the trace: it is running for the seconds a JVM takes to start.
    with celery_worker(log, LINEAGE_TRACE_MODE="spark", LINEAGE_TRACE_SPARK_AT_START="false") as worker:
        asked = analyst.post("/api/v1/traces/", {"application": captured.app_id, "direction": "backward",
                                                 "selection": {"all": True}, "recompute": True}, format="json")
        pk = asked.json()["id"]
        deadline = time.monotonic() + 120
        while Trace.objects.get(pk=pk).status != "running":
            assert time.monotonic() < deadline and worker.poll() is None, log.read_text()[-3000:]
            time.sleep(0.05)
        cancelled = analyst.post(asked.json()["links"]["cancel"])
        assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
        after = analyst.post("/api/v1/traces/", {
            "application": captured.app_id, "direction": "backward", "recompute": True,
            "selection": {"predicate": {"field": 0, "op": "equals", "value": "storage"}}}, format="json")
        assert wait_for(analyst, after.json()["url"], worker, log)["status"] == "succeeded"
    stopped = Trace.objects.get(pk=pk)
    assert stopped.status == "cancelled" and stopped.result_location == "" and stopped.result_count is None
    assert f"trace {pk}: cancelled while running" in log.read_text()  # stopped by the walk, not run to its end
    results = list((captured.text.parent / "store").rglob(f"trace-{pk}-*.parquet"))
    assert results == [], "a cancelled trace keeps no answer"
