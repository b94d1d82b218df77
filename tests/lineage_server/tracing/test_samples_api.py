"""GET .../capture-points/sample/: a captured job's records as the node panel shows them, read by the
web process from the server's lineage store, checked against the job's own input lines and result."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.spark]


@pytest.fixture
def viewer(make_member: Any) -> APIClient:
    client = APIClient()
    client.force_login(make_member("vera", "viewer"))
    return client


def _points(client: APIClient, app_id: str) -> dict[str, list[dict[str, Any]]]:
    rows = client.get(f"/api/v1/applications/{app_id}/capture-points/?page_size=100").json()["results"]
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for row in sorted(rows, key=lambda r: r["capture_id"]):
        by_kind.setdefault(row["kind"], []).append(row)
    return by_kind


def test_samples_of_inputs_and_results_and_of_points_keeping_ids(captured, viewer, settings, tmp_path):
    settings.LINEAGE = {**settings.LINEAGE, "STORE": str(tmp_path / "job" / "store")}
    url = f"/api/v1/applications/{captured.app_id}/capture-points/sample/"
    points = _points(viewer, captured.app_id)
    text_input = points["input"][0]
    assert viewer.get(f"{url}{text_input['capture_id']}/").status_code == 404  # the detail route, not this one
    assert viewer.get(f"/api/v1/applications/{captured.app_id}/capture-points/{text_input['capture_id']}/"
                      ).json()["kind"] == "input"  # the agent's ids hold a slash

    lines = viewer.get(url, {"capture_id": text_input["capture_id"], "limit": 4}).json()
    assert lines["kept"] is True
    assert [r["text"] for r in lines["records"]] == captured.lines[:4]
    assert lines["records"][0]["record_id"] == 0

    output = viewer.get(url, {"capture_id": points["output"][-1]["capture_id"], "limit": 50}).json()
    assert output["kept"] is True
    assert sorted(r["text"] for r in output["records"]) == sorted(repr(kv) for kv in captured.result.items())

    shuffled = next(p for kind, rows in points.items() if kind not in ("input", "output") for p in rows)
    ids_only = viewer.get(url, {"capture_id": shuffled["capture_id"]}).json()
    assert ids_only["kept"] is False and ids_only["records"] == [] and "trace" in ids_only["note"]


def test_bad_requests_and_a_store_the_server_does_not_own(captured, viewer, settings, tmp_path):
    url = f"/api/v1/applications/{captured.app_id}/capture-points/sample/"
    missing = viewer.get(url)
    assert missing.status_code == 400 and "capture_id" in missing.json()
    too_many = viewer.get(url, {"capture_id": "x", "limit": 500})
    assert too_many.status_code == 400 and "limit" in too_many.json()
    assert viewer.get(url, {"capture_id": "no/such-point"}).status_code == 404

    settings.LINEAGE = {**settings.LINEAGE, "STORE": str(tmp_path / "elsewhere")}
    point = _points(viewer, captured.app_id)["input"][0]
    outside = viewer.get(url, {"capture_id": point["capture_id"]}).json()
    assert outside["kept"] is False and "LINEAGE_STORE" in outside["note"]
