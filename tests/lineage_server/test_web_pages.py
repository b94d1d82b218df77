"""The HTML pages: thin shells pointing at their JSON twins, 404 for unknown applications."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.lineage_server.events import word_count_with_join

pytestmark = pytest.mark.django_db

FRONTEND_FIXTURE = Path(__file__).resolve().parents[2] / "frontend" / "test" / "fixtures" / "wordcount_graph.json"


class _Tags(HTMLParser):
    """Collects the attributes of every start tag, by tag name."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: dict[str, list[dict[str, str | None]]] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.setdefault(tag, []).append(dict(attrs))


def _tags(html: str) -> dict[str, list[dict[str, str | None]]]:
    parser = _Tags()
    parser.feed(html)
    return parser.tags


def _by_id(tags: dict[str, list[dict[str, str | None]]], element_id: str) -> dict[str, str | None]:
    return next(attrs for attrs_list in tags.values() for attrs in attrs_list if attrs.get("id") == element_id)


@pytest.fixture
def word_count(post_events):
    assert post_events(word_count_with_join()).status_code == 200


def test_pages_load_the_bundle_from_static_files_never_a_cdn(viewer_client, word_count):
    from lineage_server.catalog.models import Dataset

    dataset = Dataset.objects.get(path="file:/data/in.txt").pk
    pages = ("/", "/applications/", "/history/", "/applications/local-1/", "/applications/local-1/pipeline/",
             f"/datasets/{dataset}/")
    for url in pages:
        tags = _tags(viewer_client.get(url).content.decode())
        scripts = [s["src"] for s in tags["script"]]
        styles = [link["href"] for link in tags["link"] if link.get("rel") == "stylesheet"]
        assert scripts == ["/static/app.js"] and styles == ["/static/app.css"], url
        assert not any("//" in (src or "") for src in scripts + styles), url


def test_dataset_graph_pages_point_at_their_json_twins_and_hide_other_teams(viewer_client, word_count, post_events):
    from lineage_server.accounts.services import create_agent_token, create_team
    from lineage_server.catalog.models import Dataset
    from tests.lineage_server.events import event

    dataset = Dataset.objects.get(path="file:/data/in.txt").pk
    for url, graph_url, center in (
        (f"/datasets/{dataset}/", f"/api/v1/datasets/{dataset}/graph/", f"dataset:{dataset}"),
        ("/applications/local-1/pipeline/", "/api/v1/applications/local-1/pipeline/", "app:local-1"),
    ):
        response = viewer_client.get(url)
        assert response.status_code == 200, url
        root = _by_id(_tags(response.content.decode()), "pipeline-page")
        assert (root["data-graph-url"], root["data-center"]) == (graph_url, center)
        assert viewer_client.get(graph_url).status_code == 200
    other = create_agent_token(create_team("other", "Other team"), "their agent")[1]
    post_events([event("dataset_io", "local-theirs", 1, path="/secret", direction="read", job_id=0)], token=other)
    secret = Dataset.objects.get(path="/secret").pk
    assert viewer_client.get(f"/datasets/{secret}/").status_code == 404
    assert viewer_client.get("/applications/local-theirs/pipeline/").status_code == 404
    assert viewer_client.get("/datasets/999999/").status_code == 404


def test_home_page_points_at_the_lists_it_draws(viewer_client, word_count):
    root = _by_id(_tags(viewer_client.get("/").content.decode()), "home-page")
    urls = (root["data-applications-url"], root["data-history-url"], root["data-datasets-url"])
    assert urls == ("/api/v1/applications/", "/api/v1/history/", "/api/v1/datasets/")
    assert all(viewer_client.get(url).status_code == 200 for url in urls)


def test_applications_page_points_at_its_json_twin(viewer_client, word_count):
    response = viewer_client.get("/applications/")
    assert response.status_code == 200
    tags = _tags(response.content.decode())
    api_url = _by_id(tags, "applications-page")["data-api-url"]
    assert api_url == "/api/v1/applications/"
    assert {"rel": "alternate", "type": "application/json", "href": api_url} in tags["link"]
    twin = viewer_client.get(api_url)
    assert twin.status_code == 200 and twin.json()["results"][0]["app_id"] == "local-1"


def test_application_page_points_at_the_graph_endpoint(viewer_client, word_count):
    response = viewer_client.get("/applications/local-1/")
    assert response.status_code == 200
    root = _by_id(_tags(response.content.decode()), "application-page")
    assert root["data-app-id"] == "local-1"
    assert root["data-graph-url"] == "/api/v1/applications/local-1/graph/"
    assert root["data-api-url"] == "/api/v1/applications/local-1/"
    graph = viewer_client.get(root["data-graph-url"]).json()
    assert graph["application"]["web_url"].endswith("/applications/local-1/")
    assert b"<title>wc \xc2\xb7 Spark lineage</title>" in response.content


def _preloads(html: str) -> list[str | None]:
    return [link["href"] for link in _tags(html)["link"] if link.get("rel") == "preload"]


def test_graph_pages_preload_the_json_their_script_fetches_first(viewer_client, word_count):
    from lineage_server.catalog.models import Dataset

    assert _preloads(viewer_client.get("/applications/local-1/").content.decode()) == [
        "/api/v1/applications/local-1/graph/"]
    dataset = Dataset.objects.get(path="file:/data/in.txt").pk
    # the mode and depths of the page's query string, read as pipeline_graph.js's depthsFromUrl does
    for query, preload in (
        ("", f"/api/v1/datasets/{dataset}/graph/?upstream=2&downstream=2"),
        ("?mode=columns&upstream=0&downstream=5", f"/api/v1/datasets/{dataset}/columns/?upstream=0&downstream=5"),
        ("?mode=datasets&upstream=3.0&downstream=11", f"/api/v1/datasets/{dataset}/graph/?upstream=3&downstream=2"),
        ("?upstream=-1&downstream=x", f"/api/v1/datasets/{dataset}/graph/?upstream=2&downstream=2"),
    ):
        assert _preloads(viewer_client.get(f"/datasets/{dataset}/{query}").content.decode()) == [preload], query
        assert viewer_client.get(preload).status_code == 200
    html = viewer_client.get("/applications/local-1/pipeline/?mode=columns&downstream=1").content.decode()
    assert _preloads(html) == ["/api/v1/applications/local-1/columns/?upstream=2&downstream=1"]
    assert _preloads(viewer_client.get("/applications/").content.decode()) == []


def test_unknown_application_page_is_404_with_a_way_back(viewer_client, word_count):
    response = viewer_client.get("/applications/no-such-app/")
    assert response.status_code == 404
    html = response.content.decode()
    assert "No such application" in html and "no-such-app" in html
    assert {"href": "/applications/"} in _tags(html)["a"]


def test_application_page_escapes_the_app_name(viewer_client, post_events):
    from tests.lineage_server.events import event

    post_events([event("application_start", "local-x", 0, name='<script>alert("x")</script>', user="u")])
    html = viewer_client.get("/applications/local-x/").content.decode()
    assert "<script>alert" not in html


@pytest.mark.parametrize("name", ["wordcount_graph.json", "zoom_graph.json"])
def test_frontend_fixture_has_the_keys_the_graph_api_sends(viewer_client, word_count, post_events, name):
    """The UI's unit tests run on fixture JSON; this keeps that fixture shaped like the real answer."""
    from tests.lineage_server.events import capture_point

    post_events([capture_point("local-1", 40, "cp", stage_id=0, rdd_id=2, parents=["cp0"]),
                 capture_point("local-1", 41, "cp0", stage_id=0, rdd_id=0)])
    real = viewer_client.get("/api/v1/applications/local-1/graph/").json()
    fixture = json.loads((FRONTEND_FIXTURE.parent / name).read_text())
    assert set(fixture) == set(real)
    assert set(fixture["application"]) <= set(real["application"])
    kinds = {n["kind"] for n in fixture["nodes"]}
    assert kinds <= {n["kind"] for n in real["nodes"]}
    for kind in kinds:
        real_node = next(n for n in real["nodes"] if n["kind"] == kind)
        fixture_node = next(n for n in fixture["nodes"] if n["kind"] == kind)
        assert set(fixture_node) == set(real_node), kind
        assert set(fixture_node["data"]) == set(real_node["data"]), kind
    assert set(fixture["edges"][0]) == set(real["edges"][0])
    real_edges = {e["kind"]: e for e in real["edges"]}
    assert "capture" in real_edges
    for edge in fixture["edges"]:
        if edge["kind"] in real_edges:
            assert set(edge) == set(real_edges[edge["kind"]]), edge["kind"]
