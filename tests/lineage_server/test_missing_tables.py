"""Capture points whose per-partition lineage tables could not be written: ingest, storage and the read API."""

from __future__ import annotations

import json
from typing import Any

import pytest

from lineage_server.catalog.models import CapturePoint
from tests.lineage_server.events import capture_point, word_count_with_join

pytestmark = pytest.mark.django_db

APP = "local-1"
POINTS = f"/api/v1/applications/{APP}/capture-points/"
DISK_FULL = "OSError: [Errno 28] No space left on device"


def _post_app(post_events: Any, *points: dict[str, Any]) -> None:
    response = post_events([*word_count_with_join(APP), *points])
    assert response.status_code == 200, response.content


def test_missing_tables_are_stored_by_partition_and_shown_on_the_capture_point(post_events, viewer_client):
    missing: list[dict[str, Any]] = [
        {"partition": 3, "reason": DISK_FULL},
        {"partition": 0, "reason": "PermissionError: /store"},
    ]
    _post_app(post_events, capture_point(APP, 40, "cp-reduce", missing=missing), capture_point(APP, 41, "cp-map"))
    point = CapturePoint.objects.get(capture_id="cp-reduce")
    assert point.missing_tables == sorted(missing, key=lambda m: m["partition"])
    assert point.missing_table_count == 2

    body = viewer_client.get(f"{POINTS}cp-reduce/").json()
    assert body["lineage_complete"] is False and body["missing_table_count"] == 2
    assert body["missing_tables"] == [
        {"partition": 0, "reason": "PermissionError: /store"},
        {"partition": 3, "reason": DISK_FULL},
    ]
    complete = viewer_client.get(f"{POINTS}cp-map/").json()
    assert (complete["lineage_complete"], complete["missing_table_count"], complete["missing_tables"]) == (True, 0, [])


def test_the_application_says_whether_its_record_level_lineage_is_complete(post_events, viewer_client):
    _post_app(
        post_events,
        capture_point(APP, 40, "cp-a", missing=[{"partition": 1, "reason": DISK_FULL}]),
        capture_point(APP, 41, "cp-b", missing=[{"partition": 0, "reason": DISK_FULL}, {"partition": 2, "reason": ""}]),
        capture_point(APP, 42, "cp-c", missing=[]),
    )
    post_events(word_count_with_join("local-2"))  # no capture point at all: complete
    listed = {a["app_id"]: a for a in viewer_client.get("/api/v1/applications/").json()["results"]}
    assert (listed[APP]["lineage_complete"], listed[APP]["missing_table_count"]) == (False, 3)
    assert (listed["local-2"]["lineage_complete"], listed["local-2"]["missing_table_count"]) == (True, 0)
    # The counts the list already shows are not multiplied by the capture points.
    assert (listed[APP]["job_count"], listed[APP]["stage_count"]) == (1, 2)

    detail = viewer_client.get(f"/api/v1/applications/{APP}/").json()
    assert (detail["lineage_complete"], detail["missing_table_count"]) == (False, 3)
    graph = viewer_client.get(f"/api/v1/applications/{APP}/graph/").json()
    assert (graph["application"]["lineage_complete"], graph["application"]["missing_table_count"]) == (False, 3)

    incomplete = viewer_client.get(f"{POINTS}?lineage_complete=false").json()["results"]
    assert [p["capture_id"] for p in incomplete] == ["cp-a", "cp-b"]
    assert [p["capture_id"] for p in viewer_client.get(f"{POINTS}?lineage_complete=true").json()["results"]] == [
        "cp-c"
    ]


def test_a_later_event_of_the_point_replaces_its_missing_tables(post_events, viewer_client):
    first = [{"partition": p, "reason": DISK_FULL} for p in range(4)]
    _post_app(post_events, capture_point(APP, 40, "cp-reduce", missing=first))
    later = capture_point(APP, 50, "cp-reduce", missing=[{"partition": 2, "reason": "store gone"}])
    assert post_events([later]).json()["accepted"] == 1
    body = viewer_client.get(f"{POINTS}cp-reduce/").json()
    assert body["missing_tables"] == [{"partition": 2, "reason": "store gone"}]
    assert viewer_client.get(f"/api/v1/applications/{APP}/").json()["missing_table_count"] == 1

    post_events([capture_point(APP, 60, "cp-reduce")])  # re-sent without `missing`: every table is there now
    body = viewer_client.get(f"{POINTS}cp-reduce/").json()
    assert (body["lineage_complete"], body["missing_tables"]) == (True, [])
    assert viewer_client.get(f"/api/v1/applications/{APP}/").json()["lineage_complete"] is True


def test_a_repeated_event_changes_nothing(post_events):
    point = capture_point(APP, 40, "cp-reduce", missing=[{"partition": 0, "reason": DISK_FULL}])
    _post_app(post_events, point)
    assert post_events([point]).json() == {"accepted": 0, "duplicates": 1}
    assert CapturePoint.objects.get(capture_id="cp-reduce").missing_table_count == 1


@pytest.mark.parametrize(
    ("missing", "field"),
    [
        ("partition 3", "missing"),
        ({"partition": 3, "reason": "x"}, "missing"),
        (None, "missing"),
        ([3], "missing"),
        ([{"reason": "x"}], "partition"),
        ([{"partition": -1, "reason": "x"}], "partition"),
        ([{"partition": "three", "reason": "x"}], "partition"),
        ([{"partition": 1.5, "reason": "x"}], "partition"),
        ([{"partition": 3}], "reason"),
        ([{"partition": 3, "reason": ["disk", "full"]}], "reason"),
        ([{"partition": 3, "reason": "x" * 1001}], "reason"),
        ([{"partition": 3, "reason": "a"}, {"partition": 3, "reason": "b"}], "missing"),
        ([{"partition": p, "reason": ""} for p in range(10_001)], "missing"),
    ],
    ids=[
        "text",
        "object",
        "null",
        "number-entry",
        "no-partition",
        "negative-partition",
        "text-partition",
        "fractional-partition",
        "no-reason",
        "list-reason",
        "long-reason",
        "duplicate-partition",
        "too-many",
    ],
)
def test_a_bad_missing_list_is_a_400_naming_the_field_and_stores_nothing(post_events, missing, field):
    bad = capture_point(APP, 40, "cp-bad")
    bad["missing"] = missing
    response = post_events([bad])
    assert response.status_code == 400
    errors = response.json()["events"]["0"]
    assert "missing" in errors, errors
    assert field in json.dumps(errors)
    assert not CapturePoint.objects.exists()


def test_the_longest_reason_and_the_most_entries_are_accepted(post_events):
    most = [{"partition": p, "reason": "x" * 1000 if p == 0 else ""} for p in range(10_000)]
    _post_app(post_events, capture_point(APP, 40, "cp-big", missing=most))
    assert CapturePoint.objects.get(capture_id="cp-big").missing_table_count == 10_000
