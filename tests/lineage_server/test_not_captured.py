"""Outputs of actions that ran without record lineage (the capture refused their query): ingest, the
read API, and traces and what-ifs refused from them."""

from __future__ import annotations

from typing import Any

import pytest

from lineage_server.catalog.models import CapturePoint
from tests.lineage_server.events import capture_point, word_count_with_join

pytestmark = pytest.mark.django_db

APP = "local-1"
POINTS = f"/api/v1/applications/{APP}/capture-points/"
WHY = "DataFrame.collect ran plain: FlatMapGroupsInPandas is not supported"
PLAIN = "run-1/0003-output-collect-not-captured"


def _not_captured(t: int, why: Any = WHY) -> dict[str, Any]:
    return capture_point(APP, t, PLAIN, kind="output", location="/store/run-1", rows=0, bytes=0, not_captured=why)


def _post_app(post_events: Any, *points: dict[str, Any]) -> None:
    response = post_events([*word_count_with_join(APP), *points])
    assert response.status_code == 200, response.content


def test_a_not_captured_output_is_stored_with_why_and_shown(post_events, viewer_client):
    _post_app(post_events, capture_point(APP, 40, "run-1/0001-input-text"), _not_captured(41))
    assert CapturePoint.objects.get(capture_id=PLAIN).not_captured == WHY
    assert CapturePoint.objects.get(capture_id="run-1/0001-input-text").not_captured == ""

    points = {p["capture_id"]: p for p in viewer_client.get(POINTS).json()["results"]}
    assert points[PLAIN]["not_captured"] == WHY and points[PLAIN]["kind"] == "output"
    assert points["run-1/0001-input-text"]["not_captured"] == ""


def test_a_later_event_of_the_point_replaces_its_not_captured(post_events):
    _post_app(post_events, _not_captured(41))
    assert post_events([_not_captured(50, "DataFrame.count ran plain: the capture failed")]).json()["accepted"] == 1
    assert CapturePoint.objects.get(capture_id=PLAIN).not_captured == "DataFrame.count ran plain: the capture failed"


def test_a_malformed_not_captured_is_a_400_naming_the_field(post_events):
    for bad in (["a list"], "x" * 2001, None):
        response = post_events([*word_count_with_join(APP), _not_captured(41, bad)])
        assert response.status_code == 400 and "not_captured" in str(response.json()), (bad, response.json())


@pytest.mark.parametrize("path", ["/api/v1/traces/", "/api/v1/whatifs/"])
def test_a_trace_or_what_if_from_a_not_captured_output_is_refused_saying_why(post_events, client_as, path):
    _post_app(post_events, capture_point(APP, 40, "run-1/0001-input-text"), _not_captured(41))
    analyst = client_as("andy", "analyst")
    question = {"application": APP, "direction": "backward", "capture_point": PLAIN, "selection": {"all": True}}
    refused = analyst.post(path, question, format="json")
    assert refused.status_code == 400, refused.json()
    message = " ".join(refused.json()["capture_point"])
    assert "was not captured" in message and WHY in message

    if path.endswith("whatifs/"):
        return  # a what-if must name its point
    # A trace not naming a point starts from the last output: that one, refused the same way.
    refused = analyst.post(path, {**question, "capture_point": None}, format="json")
    assert refused.status_code == 400 and WHY in str(refused.json()["capture_point"])
