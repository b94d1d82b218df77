"""The provenance graph API without Spark: making graphs, posting triples (JSON lines, Parquet),
what a malformed upload gets back, who may do what, and the schema."""

from __future__ import annotations

import io
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lineage_server.provenance.models import BuildStatus, IndexBuild, TripleBatch
from tests.lineage_server.provenance.conftest import person_jsonl

pytestmark = pytest.mark.django_db

JSONL = "application/x-ndjson"
PARQUET = "application/vnd.apache.parquet"


def post_triples(client, graph_url, body: bytes, content_type: str = JSONL, query: str = ""):
    return client.generic("POST", f"{graph_url}triples/{query}", body, content_type=content_type)


def test_json_lines_are_kept_as_parquet_and_queue_one_build(analyst_client, graph_url, store_root):
    posted = post_triples(analyst_client, graph_url, person_jsonl())
    assert posted.status_code == 201, posted.json()
    assert posted.json()["rows"] == 15 and posted.json()["source"] == "jsonl"
    batch = TripleBatch.objects.get()
    kept = pq.read_table(Path(store_root) / batch.location)
    assert kept.column_names == ["src", "dst", "op", "src_dataset", "dst_dataset"]
    assert kept.slice(0, 1).to_pylist() == [
        {"src": "1", "dst": "13", "op": "R1", "src_dataset": "Person1", "dst_dataset": "Person2"}]
    # A second upload joins the build still queued.
    parquet = io.BytesIO()
    pq.write_table(pa.table({"src": ["25"], "dst": ["26"]}), parquet)
    again = post_triples(analyst_client, graph_url, parquet.getvalue(), PARQUET)
    assert again.status_code == 201, again.json()
    assert IndexBuild.objects.filter(status=BuildStatus.QUEUED).count() == 1
    detail = analyst_client.get(graph_url).json()
    assert detail["triple_count"] == 16 and detail["index"] is None and detail["latest_build"]["status"] == "queued"
    listed = analyst_client.get(f"{graph_url}triples/").json()
    assert [b["rows"] for b in listed["results"]] == [15, 1]


@pytest.mark.parametrize(("body", "content_type", "status", "says"), [
    (b'{"src": 1, "dst": 2}\n{"src": 3}\n', JSONL, 400, "line 2: 'dst' is missing"),
    (b'{"src": 1, "dst": 2}\n{"src": 1,, }\n', JSONL, 400, "line 2: not JSON"),
    (b'{"src": 1, "dst": 2, "when": 3}\n', JSONL, 400, "unknown field 'when'"),
    (b'{"src": 1.5, "dst": 2}\n', JSONL, 400, "'src' must be a string or an integer"),
    (b'[1, 2]\n', JSONL, 400, "line 1: a triple is a JSON object"),
    (b"PAR1 not really", PARQUET, 400, "not a Parquet file"),
    (b'{"src": 1, "dst": 2}\n', "text/csv", 415, "send triples as one of"),
    (b"", JSONL, 400, "an empty body"),
])
def test_malformed_triples_are_refused_saying_what_is_wrong(analyst_client, graph_url, body, content_type, status,
                                                            says):
    response = post_triples(analyst_client, graph_url, body, content_type)
    assert response.status_code == status
    assert says in str(response.json())
    assert not TripleBatch.objects.exists() and not IndexBuild.objects.exists()


def test_an_upload_over_the_limit_is_413(analyst_client, graph_url, settings):
    settings.LINEAGE = {**settings.LINEAGE, "PROVENANCE_MAX_UPLOAD_BYTES": 100}
    response = post_triples(analyst_client, graph_url, person_jsonl())
    assert response.status_code == 413 and "LINEAGE_PROVENANCE_MAX_UPLOAD_MB" in response.json()["detail"]


def test_build_false_queues_nothing_and_a_build_can_be_asked(analyst_client, graph_url):
    assert post_triples(analyst_client, graph_url, person_jsonl(), query="?build=false").status_code == 201
    assert not IndexBuild.objects.exists()
    asked = analyst_client.post(f"{graph_url}builds/", {"full": True}, format="json")
    assert asked.status_code == 202 and asked.json()["full"] is True and asked.json()["status"] == "queued"
    assert [b["id"] for b in analyst_client.get(f"{graph_url}builds/").json()["results"]] == [asked.json()["id"]]
    assert post_triples(analyst_client, graph_url, b"", query="?build=maybe").status_code == 400


def test_a_query_before_any_index_is_409_and_without_item_400(analyst_client, graph_url):
    assert analyst_client.get(f"{graph_url}lineage/?item=23").status_code == 409
    missing = analyst_client.get(f"{graph_url}lineage/")
    assert missing.status_code == 400 and "item" in missing.json()
    bad = analyst_client.get(f"{graph_url}lineage/?item=1&direction=sideways")
    assert bad.status_code == 400 and "direction" in bad.json()


def test_roles_and_teams(client_as, graph_url, make_member):
    from lineage_server.accounts.services import create_team

    viewer = client_as("vera", "viewer")
    assert viewer.get(graph_url).status_code == 200
    assert post_triples(viewer, graph_url, person_jsonl()).status_code == 403
    made = viewer.post("/api/v1/provenance/graphs/", {"team": "test-team", "name": "x"}, format="json")
    assert made.status_code == 403
    assert viewer.delete(graph_url).status_code == 403
    other = create_team("other", "Other")
    outsider = client_as("otto", "admin", other)
    assert outsider.get(graph_url).status_code == 404
    assert outsider.get("/api/v1/provenance/graphs/").json()["results"] == []
    admin = client_as("ada", "admin")
    assert admin.delete(graph_url).status_code == 204
    assert admin.get(graph_url).status_code == 404


def test_graphs_are_checked_when_made(analyst_client, graph_url):
    again = analyst_client.post("/api/v1/provenance/graphs/", {"team": "test-team", "name": "curation"}, format="json")
    assert again.status_code == 400 and "name" in again.json()
    splits = analyst_client.post("/api/v1/provenance/graphs/", {"team": "test-team", "name": "y",
                                                                 "splits": [["A"], ["A", "B"]]}, format="json")
    assert splits.status_code == 400 and "two splits" in str(splits.json()["splits"])
    team = analyst_client.post("/api/v1/provenance/graphs/", {"team": "nope", "name": "z"}, format="json")
    assert team.status_code == 400 and "team" in team.json()
    changed = analyst_client.patch(graph_url, {"set_threshold": 10, "splits": [["Person1"]]}, format="json")
    assert changed.status_code == 200 and changed.json()["set_threshold"] == 10


def test_the_schema_documents_the_provenance_endpoints(viewer_client):
    paths = viewer_client.get("/api/schema/?format=json").json()["paths"]
    upload = paths["/api/v1/provenance/graphs/{id}/triples/"]["post"]
    assert {"application/x-ndjson", "application/vnd.apache.parquet"} <= set(upload["requestBody"]["content"])
    lineage = paths["/api/v1/provenance/graphs/{id}/lineage/"]["get"]
    assert {p["name"] for p in lineage["parameters"]} >= {"item", "direction", "limit"}
    assert "/api/v1/provenance/graphs/{id}/builds/" in paths and "/api/v1/provenance/graphs/{id}/applications/" in paths
