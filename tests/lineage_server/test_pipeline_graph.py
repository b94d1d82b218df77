"""The dataset graph across applications (``/datasets/{id}/graph/``, ``/applications/{app_id}/pipeline/``)."""

from __future__ import annotations

from typing import Any

import pytest

from lineage_server.catalog.models import Dataset
from tests.lineage_server.events import event

pytestmark = pytest.mark.django_db


def _app(app_id: str, reads: list[str], writes: list[str]) -> list[dict[str, Any]]:
    events = [event("application_start", app_id, 0, name=app_id)]
    for t, path in enumerate(reads, 1):
        events.append(event("dataset_io", app_id, t, path=path, direction="read", format="text", job_id=0))
    for t, path in enumerate(writes, 10):
        events.append(event("dataset_io", app_id, t, path=path, direction="written", format="text", job_id=0))
    return events


# raw -> clean -> (daily, weekly) ; daily -> report ; lookup -> report ; weekly -> unrelated consumer
PIPELINE = {
    "local-clean": (["/raw"], ["/clean"]),
    "local-daily": (["/clean"], ["/daily"]),
    "local-weekly": (["/clean"], ["/weekly"]),
    "local-report": (["/daily", "/lookup"], ["/report"]),
    "local-archive": (["/weekly"], ["/archive"]),
}


@pytest.fixture
def pipeline(post_events: Any) -> None:
    for app_id, (reads, writes) in PIPELINE.items():
        assert post_events(_app(app_id, reads, writes)).status_code == 200


def _dataset(path: str) -> int:
    return Dataset.objects.get(path=path).pk


def _labels(answer: dict[str, Any]) -> dict[str, int]:
    return {n["label"]: n["depth"] for n in answer["nodes"]}


def test_a_dataset_graph_reaches_upstream_and_downstream_as_deep_as_asked(viewer_client, pipeline):
    answer = viewer_client.get(f"/api/v1/datasets/{_dataset('/daily')}/graph/").json()
    assert answer["center"] == f"dataset:{_dataset('/daily')}" and answer["truncated"] is False
    # two edges each way: writer and its input upstream, reader and its output downstream
    assert _labels(answer) == {"/daily": 0, "local-daily": -1, "/clean": -2, "local-report": 1, "/report": 2}
    edges = {(e["source"], e["target"], e["kind"]) for e in answer["edges"]}
    assert (f"dataset:{_dataset('/clean')}", "app:local-daily", "read") in edges
    assert ("app:local-daily", f"dataset:{_dataset('/daily')}", "write") in edges
    assert ("app:local-report", f"dataset:{_dataset('/report')}", "write") in edges
    ids = {n["id"] for n in answer["nodes"]}
    assert all(e["source"] in ids and e["target"] in ids for e in answer["edges"])

    deeper = viewer_client.get(f"/api/v1/datasets/{_dataset('/daily')}/graph/?upstream=4&downstream=0").json()
    assert _labels(deeper) == {"/daily": 0, "local-daily": -1, "/clean": -2, "local-clean": -3, "/raw": -4}
    # a sibling branch (weekly) is not upstream of daily: never reached going up
    assert "local-weekly" not in _labels(deeper)


def test_an_application_pipeline_shows_its_inputs_outputs_and_neighbours(viewer_client, pipeline):
    answer = viewer_client.get("/api/v1/applications/local-report/pipeline/?upstream=3&downstream=1").json()
    assert answer["center"] == "app:local-report"
    assert _labels(answer) == {"local-report": 0, "/daily": -1, "/lookup": -1, "local-daily": -2, "/clean": -3,
                               "/report": 1}
    kinds = {n["label"]: n["kind"] for n in answer["nodes"]}
    assert kinds["local-report"] == "application" and kinds["/report"] == "dataset"
    app = next(n for n in answer["nodes"] if n["id"] == "app:local-report")
    assert app["data"]["app_id"] == "local-report"


def test_the_graph_shows_only_the_callers_teams(viewer_client, pipeline, post_events):
    from lineage_server.accounts.services import create_agent_token, create_team

    other = create_agent_token(create_team("other", "Other team"), "their agent")[1]
    assert post_events(_app("local-theirs", ["/report"], ["/secret"]), token=other).status_code == 200
    answer = viewer_client.get(f"/api/v1/datasets/{_dataset('/report')}/graph/?downstream=5").json()
    assert "local-theirs" not in _labels(answer) and "/secret" not in _labels(answer)
    # a dataset only another team's applications touch is not there at all
    assert viewer_client.get(f"/api/v1/datasets/{_dataset('/secret')}/graph/").status_code == 404


@pytest.mark.parametrize("query, field", [("upstream=-1", "upstream"), ("downstream=11", "downstream"),
                                          ("upstream=two", "upstream")])
def test_a_bad_depth_is_a_400_naming_the_field(viewer_client, pipeline, query, field):
    response = viewer_client.get(f"/api/v1/datasets/{_dataset('/daily')}/graph/?{query}")
    assert response.status_code == 400
    assert list(response.json()) == [field]


def test_the_walk_stops_at_its_node_limit(pipeline):
    from lineage_server.catalog.models import Application
    from lineage_server.catalog.selectors.pipeline import pipeline_graph

    graph = pipeline_graph(Application.objects.all(), dataset=Dataset.objects.get(path="/clean"),
                           upstream=10, downstream=10, max_nodes=4)
    assert graph.truncated and len(graph.nodes) == 4
    # every edge kept joins nodes kept
    assert all(e["source"] in graph.nodes and e["target"] in graph.nodes for e in graph.edges.values())
