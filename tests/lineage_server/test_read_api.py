"""The read API: lists, details, filters, the application graph, 404s, and pinned query counts."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.lineage_server.events import capture_point, event, operator, word_count_with_join

pytestmark = pytest.mark.django_db


@pytest.fixture
def word_count(post_events):
    assert post_events(word_count_with_join()).status_code == 200


def test_applications_list_shows_counts_and_links(viewer_client, word_count):
    body = viewer_client.get("/api/v1/applications/").json()
    assert body["count"] == 1
    app = body["results"][0]
    assert app["app_id"] == "local-1" and app["status"] == "succeeded"
    assert (app["job_count"], app["stage_count"], app["failed_job_count"]) == (1, 2, 0)
    assert app["duration_ms"] == 100
    assert app["url"].endswith("/api/v1/applications/local-1/")
    assert app["web_url"].endswith("/applications/local-1/")


def test_applications_filter_by_status_and_search(viewer_client, post_events, word_count):
    post_events([event("application_start", "local-2", 0, name="nightly etl", user="bo")])
    assert [a["app_id"] for a in viewer_client.get("/api/v1/applications/?status=running").json()["results"]] == [
        "local-2"
    ]
    assert [a["app_id"] for a in viewer_client.get("/api/v1/applications/?search=NIGHTLY").json()["results"]] == [
        "local-2"
    ]
    assert [a["app_id"] for a in viewer_client.get("/api/v1/applications/?user=ana").json()["results"]] == ["local-1"]
    bad = viewer_client.get("/api/v1/applications/?status=sleeping")
    assert bad.status_code == 400 and "status" in bad.json()


def test_list_pagination(viewer_client, post_events):
    post_events([event("application_start", f"local-{i}", i, name=f"app {i}") for i in range(7)])
    page = viewer_client.get("/api/v1/applications/?page_size=3&page=3").json()
    assert page["count"] == 7 and len(page["results"]) == 1 and page["next"] is None
    assert viewer_client.get("/api/v1/applications/?page=99").status_code == 404


def test_application_list_query_count_does_not_grow_with_rows(
    viewer_client, post_events, django_assert_max_num_queries
):
    post_events([event("application_start", f"local-{i}", i, name=f"a{i}") for i in range(20)])
    with django_assert_max_num_queries(4):  # the session, its user, the count, the page
        viewer_client.get("/api/v1/applications/")


def test_unknown_application_is_404_everywhere(viewer_client, word_count):
    for url in (
        "/api/v1/applications/nope/",
        "/api/v1/applications/nope/graph/",
        "/api/v1/applications/nope/jobs/",
        "/api/v1/applications/nope/stages/",
        "/api/v1/applications/local-1/stages/99/",
        "/api/v1/applications/local-1/jobs/99/",
        "/api/v1/datasets/999/",
    ):
        assert viewer_client.get(url).status_code == 404, url


def test_jobs_stages_and_operators(viewer_client, word_count):
    jobs = viewer_client.get("/api/v1/applications/local-1/jobs/").json()["results"]
    assert [(j["job_id"], j["stage_ids"], j["status"]) for j in jobs] == [(0, [0, 1], "succeeded")]
    stage = viewer_client.get("/api/v1/applications/local-1/stages/0/").json()
    assert stage["metrics"]["shuffle_write_bytes"] == 300
    assert [op["rdd_id"] for op in stage["operators"]] == [0, 1, 2]
    ops = viewer_client.get("/api/v1/applications/local-1/operators/?stage=1").json()["results"]
    assert [op["rdd_id"] for op in ops] == [3, 4]
    by_job = viewer_client.get("/api/v1/applications/local-1/stages/?job=0").json()
    assert by_job["count"] == 2


def test_datasets_and_their_applications(viewer_client, word_count):
    ios = viewer_client.get("/api/v1/applications/local-1/datasets/").json()["results"]
    assert [(io["dataset"]["path"], io["direction"]) for io in ios] == [("file:/data/in.txt", "read")]
    dataset_id = ios[0]["dataset"]["id"]
    readers = viewer_client.get(f"/api/v1/datasets/{dataset_id}/applications/").json()["results"]
    assert [r["app_id"] for r in readers] == ["local-1"]
    assert viewer_client.get("/api/v1/datasets/?path=in.txt").json()["count"] == 1


def test_graph_has_compound_stages_operator_edges_and_datasets(viewer_client, word_count):
    graph = viewer_client.get("/api/v1/applications/local-1/graph/").json()
    nodes = {n["id"]: n for n in graph["nodes"]}
    assert {n["id"] for n in graph["nodes"] if n["kind"] == "stage"} == {"stage:0", "stage:1"}
    assert nodes["op:0:2"]["parent"] == "stage:0"
    # the zoom levels: application -> jobs -> stages -> operators (capture points: test_graph_zoom_levels)
    assert nodes["stage:0"]["parent"] == nodes["stage:1"]["parent"] == "job:0"
    assert nodes["job:0"]["parent"] == "application" and nodes["application"]["parent"] is None
    assert nodes["application"]["data"]["app_id"] == "local-1"
    assert nodes["op:0:2"]["label"] == "flatMap → map [2]"
    assert nodes["op:0:2"]["data"]["python_operators"][0] == {"name": "flatMap", "call_site": "wc.py:7"}
    edges = {(e["source"], e["target"], e["kind"]) for e in graph["edges"]}
    assert ("op:0:0", "op:0:1", "narrow") in edges
    assert ("op:0:2", "op:1:3", "shuffle") in edges
    dataset = next(n for n in graph["nodes"] if n["kind"] == "dataset")
    assert dataset["data"]["directions"] == ["read"]
    assert (dataset["id"], "op:0:0", "read") in edges
    # Every edge joins nodes that exist.
    assert all(e["source"] in nodes and e["target"] in nodes for e in graph["edges"])


def test_graph_zoom_levels_nest_capture_points_in_their_operators(viewer_client, post_events, word_count):
    post_events([
        capture_point("local-1", 40, "cp-map", kind="combiner", stage_id=0, rdd_id=2),
        capture_point("local-1", 41, "cp-out", kind="reducer", stage_id=1, parents=["cp-map"]),
        capture_point("local-1", 42, "cp-lost", kind="output", stage_id=9, rdd_id=9, parents=["cp-gone"]),
        # what the record-level agent reports: the RDD, not the Spark stage
        capture_point("local-1", 43, "cp-rdd", kind="reducer", rdd_id=3),
        capture_point("local-1", 44, "cp-nowhere", kind="reducer", rdd_id=99),
    ])
    graph = viewer_client.get("/api/v1/applications/local-1/graph/").json()
    nodes = {n["id"]: n for n in graph["nodes"]}
    # in its operator, in its stage when the operator is unknown, in the application when both are
    assert nodes["capture:cp-map"]["parent"] == "op:0:2"
    assert nodes["capture:cp-out"]["parent"] == "stage:1"
    assert nodes["capture:cp-lost"]["parent"] == "application"
    assert nodes["capture:cp-rdd"]["parent"] == "op:1:3"  # the first stage running RDD 3
    assert nodes["capture:cp-nowhere"]["parent"] == "application"
    assert nodes["capture:cp-map"]["data"]["capture_kind"] == "combiner"
    assert nodes["capture:cp-map"]["data"]["rows"] == 10
    capture_edges = [(e["source"], e["target"]) for e in graph["edges"] if e["kind"] == "capture"]
    assert capture_edges == [("capture:cp-map", "capture:cp-out")]  # a parent never reported draws nothing
    # every parent is a node, and following parents ends at the application
    for node in graph["nodes"]:
        seen, parent = set(), node["parent"]
        while parent is not None:
            assert parent in nodes and parent not in seen
            seen.add(parent)
            parent = nodes[parent]["parent"]
        assert node["kind"] == "dataset" or node["id"] == "application" or "application" in seen


def test_stages_without_operators_are_linked_stage_to_stage(viewer_client, post_events):
    post_events(
        [
            event("stage_completed", stage_id=0, attempt=0, status="succeeded", parent_stage_ids=[], job_id=0),
            event("stage_completed", stage_id=1, attempt=0, status="succeeded", parent_stage_ids=[0], job_id=0),
        ]
    )
    graph = viewer_client.get("/api/v1/applications/local-1/graph/").json()
    assert [(e["source"], e["target"], e["kind"]) for e in graph["edges"]] == [("stage:0", "stage:1", "stage")]


def test_written_dataset_attaches_to_the_jobs_last_stage(viewer_client, post_events, word_count):
    post_events([event("dataset_io", path="file:/out", direction="written", format="text", job_id=0)])
    graph = viewer_client.get("/api/v1/applications/local-1/graph/").json()
    out = next(n for n in graph["nodes"] if n["label"] == "file:/out")
    assert {(e["source"], e["kind"]) for e in graph["edges"] if e["target"] == out["id"]} == {("stage:1", "write")}


def _big_app(post_events, stages: int) -> None:
    events = [event("application_start", "local-big", 0, name="big")]
    for sid in range(stages):
        events.append(
            event(
                "stage_completed",
                "local-big",
                sid,
                stage_id=sid,
                attempt=0,
                status="succeeded",
                parent_stage_ids=[sid - 1] if sid else [],
                job_id=sid // 3,
                operators=[operator(2 * sid, "a", [2 * sid - 1] if sid else []), operator(2 * sid + 1, "b", [2 * sid])],
            )
        )
        events.append(event("dataset_io", "local-big", sid, path=f"/d/{sid}", direction="read", job_id=sid // 3))
    assert post_events(events).status_code == 200


@pytest.mark.parametrize("stages", [3, 30])
def test_graph_query_count_is_fixed(viewer_client, post_events, stages):
    _big_app(post_events, stages)
    with CaptureQueriesContext(connection) as queries:
        response = viewer_client.get("/api/v1/applications/local-big/graph/")
    assert response.status_code == 200
    # the application, a job per 3 stages, and per stage: itself, two operators, one dataset
    assert len(response.json()["nodes"]) == 1 + stages // 3 + 4 * stages
    assert len(queries) == 10, [q["sql"] for q in queries]  # 8 + the session and its user


def test_openapi_schema_and_docs_are_served(viewer_client):
    schema = viewer_client.get("/api/schema/?format=json")
    assert schema.status_code == 200
    paths = schema.json()["paths"]
    assert "/api/v1/ingest/events/" in paths and "/api/v1/applications/{app_id}/graph/" in paths
    docs = viewer_client.get("/api/docs/")
    assert docs.status_code == 200 and b"swagger-ui" in docs.content
    assert b"cdn" not in docs.content.lower()


@pytest.mark.parametrize(
    ("url", "status"),
    [
        ("/api/v1/applications/local-1/stages/abc/", 404),
        ("/api/v1/applications/local-1/stages/99999999999999999999/", 404),
        ("/api/v1/applications/local-1/jobs/1.5/", 404),
        ("/api/v1/datasets/abc/", 404),
        ("/api/v1/datasets/abc/applications/", 404),
        ("/api/v1/applications/local-1/capture-points/nope/", 404),
        ("/api/v1/applications/%00/", 404),
        ("/api/v1/applications/?page=abc", 404),
        ("/api/v1/applications/?started_after=garbage", 400),
        ("/api/v1/applications/local-1/operators/?stage=x", 400),
        ("/api/v1/applications/local-1/stages/?job=zz", 400),
        ("/api/v1/applications/local-1/jobs/?sql_execution_id=q", 400),
        ("/api/v1/applications/?page_size=-1", 200),
    ],
)
def test_bad_ids_and_filters_are_4xx_not_500(viewer_client, word_count, url, status):
    response = viewer_client.get(url)
    assert response.status_code == status
    if status == 400:
        assert response.json(), "a 400 says what is wrong"


def test_sql_dataset_of_execution_zero_attaches_to_its_jobs_stages(viewer_client, post_events):
    """SQL execution ids start at 0; a write by execution 0 still links to the stage that wrote it."""
    post_events([
        event("job_start", job_id=0, stage_ids=[0], sql_execution_id=0),
        event("stage_completed", stage_id=0, attempt=0, status="succeeded", parent_stage_ids=[], job_id=0),
        event("dataset_io", path="file:/t.parquet", direction="written", format="parquet", sql_execution_id=0),
    ])
    graph = viewer_client.get("/api/v1/applications/local-1/graph/").json()
    out = next(n for n in graph["nodes"] if n["kind"] == "dataset")
    assert [(e["source"], e["target"], e["kind"]) for e in graph["edges"]] == [("stage:0", out["id"], "write")]
