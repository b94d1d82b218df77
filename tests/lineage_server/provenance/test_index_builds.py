"""Index builds on a real local Spark, and lineage queries through the API: run_index_build (what
the worker's task calls) on triples posted through the API, incremental over a second upload; a
captured run's record-level lineage exported as triples; and one build run by a real Celery worker."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from lineage_server.provenance.models import BuildStatus, IndexBuild
from lineage_server.provenance.services import run_index_build
from tests.capture_agent.provenance.paper import COMPONENT_C, c_table
from tests.lineage_server.provenance.conftest import person_jsonl
from tests.lineage_server.tracing.captured import TOPICS, capture_word_topics
from tests.lineage_server.worker import celery_worker

pytestmark = [pytest.mark.processes, pytest.mark.django_db(transaction=True), pytest.mark.spark]

JSONL = "application/x-ndjson"


def c_jsonl() -> bytes:
    return "".join(json.dumps({"src": f"c{s}", "dst": f"c{d}", "op": "-", "src_dataset": c_table(s),
                               "dst_dataset": c_table(d)}) + "\n" for s, d in COMPONENT_C).encode()


def post(client: Any, graph_url: str, body: bytes, query: str = "") -> dict[str, Any]:
    response = client.generic("POST", f"{graph_url}triples/{query}", body, content_type=JSONL)
    assert response.status_code == 201, response.json()
    return dict(response.json())


def build_now(sc: Any) -> IndexBuild:
    build = IndexBuild.objects.get(status=BuildStatus.QUEUED)
    done = run_index_build(build.pk, spark=lambda: sc)
    assert done is not None and done.status == BuildStatus.SUCCEEDED, done.error if done else None
    return done


def test_posted_triples_are_indexed_and_queried_through_the_api(analyst_client, viewer_client, graph_url, sc):
    """The paper's examples through the API: item 23's lineage reads its component; item 8's reads
    S1, S2 and S3 of component C; a second upload extends the index incrementally."""
    assert analyst_client.patch(graph_url, {"splits": [["A"], ["B"], ["C"]]}, format="json").status_code == 200
    post(analyst_client, graph_url, person_jsonl() + c_jsonl())
    first = build_now(sc)
    assert first.meta["counts"]["components"] == 8 and first.meta["counts"]["sets"] == 7 + 4

    answer = viewer_client.get(f"{graph_url}lineage/?item=23").json()
    assert answer["items"] == ["15", "18", "3", "6"] and answer["item_count"] == 4
    assert answer["edges"] == [{"src": "15", "dst": "23", "op": "R2"}, {"src": "18", "dst": "23", "op": "R2"},
                               {"src": "3", "dst": "15", "op": "R1"}, {"src": "6", "dst": "18", "op": "R1"}]
    assert answer["sets_read"] == [answer["component"]] and answer["triples_read"] == 4
    c8 = viewer_client.get(f"{graph_url}lineage/?item=c8").json()
    assert c8["items"] == ["c1", "c2", "c3", "c4", "c5", "c7"]
    assert len(c8["sets_read"]) == 3 and c8["triples_read"] == 9
    limited = viewer_client.get(f"{graph_url}lineage/?item=c8&limit=2").json()
    assert limited["truncated"] and len(limited["items"]) == 2 and limited["item_count"] == 6
    down = viewer_client.get(f"{graph_url}lineage/?item=3&direction=descendants").json()
    assert down["items"] == ["15", "23"]
    missing = viewer_client.get(f"{graph_url}lineage/?item=nowhere")
    assert missing.status_code == 404 and "nowhere" in missing.json()["detail"]

    post(analyst_client, graph_url, b'{"src": 23, "dst": "report", "op": "R3"}\n{"src": "c9", "dst": 23}\n')
    second = build_now(sc)
    assert second.previous_id == first.pk and second.meta["incremental"] is True
    report = viewer_client.get(f"{graph_url}lineage/?item=report").json()
    assert report["items"] == ["15", "18", "23", "3", "6", "c1", "c2", "c3", "c4", "c5", "c7", "c9"]
    assert report["index"] == second.pk
    detail = viewer_client.get(graph_url).json()
    assert detail["index"]["id"] == second.pk and detail["triple_count"] == 15 + 12 + 2


def test_a_captured_runs_lineage_is_exported_as_triples(spark, live_server, agent_token, tmp_path, settings,
                                                         analyst_client, graph_url, sc):
    """The word/topic job's record-level lineage as triples: each topic's output record descends
    from exactly the input lines holding one of its words and from its lines of the topic table."""
    job = capture_word_topics(spark, live_server.url, agent_token, tmp_path / "job")
    settings.LINEAGE = {**settings.LINEAGE, "STORE": str(tmp_path / "job" / "store")}
    exported = analyst_client.post(f"{graph_url}applications/", {"application": job.app_id}, format="json")
    assert exported.status_code == 201, exported.json()
    assert exported.json()["rows"] > 0 and exported.json()["source"] == f"application:{job.app_id}"
    build_now(sc)

    from lineage_server.catalog.models import CapturePoint

    points = CapturePoint.objects.filter(application__app_id=job.app_id)
    output = points.get(kind="output", capture_id__endswith="collect").capture_id
    text_input, topic_input = sorted(p.capture_id for p in points.filter(kind="input"))
    found = []
    for position in range(len(job.result)):
        answer = analyst_client.get(f"{graph_url}lineage/", {"item": f"{output}#{position}", "limit": 100000}).json()
        assert answer["item_count"] == len(answer["items"]), answer
        found.append((sum(i.startswith(f"{text_input}#") for i in answer["items"]),
                      sum(i.startswith(f"{topic_input}#") for i in answer["items"])))
    expected = [(len(job.lines_with(job.words_of(topic))), len(job.topic_lines_of(topic))) for topic in job.result]
    assert sorted(found) == sorted(expected)
    assert set(job.result) <= set(TOPICS.values())
    unknown = analyst_client.post(f"{graph_url}applications/", {"application": "local-nope"}, format="json")
    assert unknown.status_code == 400 and "application" in unknown.json()


def test_a_celery_worker_builds_the_index_on_its_spark_session(analyst_client, graph_url, tmp_path, store_root):
    post(analyst_client, graph_url, person_jsonl())
    log = tmp_path / "worker.log"
    with celery_worker(log, LINEAGE_STORE=str(store_root), LINEAGE_TRACE_SPARK_AT_START="false") as worker:
        deadline = time.monotonic() + 280
        while time.monotonic() < deadline:
            latest = analyst_client.get(graph_url).json()["latest_build"]
            if latest["status"] not in ("queued", "running"):
                break
            assert worker.poll() is None, log.read_text()
            time.sleep(0.5)
    assert latest["status"] == "succeeded", (latest, Path(log).read_text()[-3000:])
    assert latest["meta"]["counts"]["triples"] == 15
    assert analyst_client.get(f"{graph_url}lineage/?item=22").json()["items"] == ["14", "17", "2", "5"]
