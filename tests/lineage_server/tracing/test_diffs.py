"""Diffs of two runs of one job through the API and ``run_trace`` (what the worker's task calls):
the previous run found by application name and capture points, every output's fate and one
output's explanation against oracles from the two runs' input lines, the additive check,
downloads, permissions (another team's diffs are 404) and bad fields (400 naming them)."""

from __future__ import annotations

from typing import Any

import pytest

from lineage_server.tracing.models import Trace
from lineage_server.tracing.services import run_trace
from tests.lineage_server.tracing.captured import (
    capture_runs_in_own_driver,
    lineage_of,
    register_events,
    topic_totals,
)

pytestmark = [pytest.mark.processes, pytest.mark.django_db(transaction=True), pytest.mark.spark]


@pytest.fixture(scope="module")
def captured_runs(tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    """The word/topic job run twice by a driver of its own (one application name), on other lines,
    once for the module: its agent's events kept in files."""
    folder = tmp_path_factory.mktemp("diff-runs")
    return capture_runs_in_own_driver(None, None, [(folder / "old", 3), (folder / "new", 4)])


@pytest.fixture
def two_runs(captured_runs: list[Any], live_server: Any, agent_token: str) -> tuple[Any, Any]:
    """The two runs registered with this test's server, as their agent would have."""
    for run in captured_runs:
        register_events(live_server.url, agent_token, run)
    old, new = captured_runs
    return old, new


def _ask(client: Any, body: dict[str, Any], sc: Any) -> Trace:
    asked = client.post("/api/v1/diffs/", body, format="json")
    assert asked.status_code == 202, asked.json()
    done = run_trace(asked.json()["id"], spark=lambda: sc)
    assert done is not None and done.status == "succeeded", done and done.error
    return done


def test_a_diff_against_the_previous_run_equals_the_oracle(two_runs, client_as, sc):
    old, new = two_runs
    client = client_as("andy", "analyst")
    diff = _ask(client, {"application": new.app_id}, sc)
    assert diff.compared_with is not None and diff.compared_with.app_id == old.app_id
    before, after = topic_totals(old.lines), topic_totals(new.lines)
    fates = {o["key"]: o["fate"] for o in diff.summary["outputs"]}
    assert fates == {t: "added" if t not in before else "removed" if t not in after else
                     "unchanged" if before[t] == after[t] else "changed" for t in set(before) | set(after)}
    for output in diff.summary["outputs"]:
        assert output["old_value"] == ([[output["key"], before[output["key"]]]] if output["key"] in before else [])
        assert output["new_value"] == ([[output["key"], after[output["key"]]]] if output["key"] in after else [])

    one = _ask(client, {"application": new.app_id, "compared_with": old.app_id, "key": "incident"}, sc)
    why = one.summary["explained"]
    was, now = lineage_of("incident", old.lines, old.topic_lines), lineage_of("incident", new.lines, new.topic_lines)
    assert (why["added"], why["removed"], why["common"]) == (sum((now - was).values()), sum((was - now).values()),
                                                            sum((was & now).values()))
    assert why["check"]["holds"] and why["check"]["old"] == {"value": before["incident"]}
    assert why["check"]["new"] == {"value": after["incident"]}
    assert set(one.summary["timings"]) == {"queued_ms", "open_ms", "open_old_ms", "compare_ms", "explain_ms",
                                           "store_ms"}
    got = client.get(f"/api/v1/diffs/{one.pk}/")
    assert got.status_code == 200 and got.json()["summary"]["explained"]["key"] == "incident"
    csv = client.get(f"/api/v1/diffs/{one.pk}/download/csv/")
    assert csv.status_code == 200
    lines = b"".join(csv.streaming_content).decode().splitlines()
    assert len(lines) == 1 + (one.result_count or 0)
    rows = client.get(f"/api/v1/diffs/{one.pk}/records/?page_size=500").json()["results"]
    assert sorted(r["value"] for r in rows if r["row"] == "input" and r["side"] == "added") == \
        sorted((now - was).elements())


def test_permissions_and_bad_fields(two_runs, client_as, make_member, sc):
    from lineage_server.accounts.services import create_team

    old, new = two_runs
    client = client_as("andy", "analyst")
    for body, field in (({"application": new.app_id, "compared_with": "nope"}, "compared_with"),
                        ({"application": new.app_id, "compared_with": new.app_id}, "compared_with"),
                        ({"application": new.app_id, "capture_point": "x/0001"}, "capture_point"),
                        ({"application": "nope"}, "application"), ({}, "application")):
        bad = client.post("/api/v1/diffs/", body, format="json")
        assert bad.status_code == 400 and field in bad.json(), (body, bad.json())
    diff = _ask(client, {"application": new.app_id, "compared_with": old.app_id}, sc)
    other = create_team("others", "Other team")
    outsider = client_as("olga", "analyst", other)
    assert outsider.get(f"/api/v1/diffs/{diff.pk}/").status_code == 404
    assert outsider.get(f"/api/v1/diffs/{diff.pk}/download/jsonl/").status_code == 404
    assert outsider.post("/api/v1/diffs/", {"application": new.app_id}, format="json").status_code == 400
    viewer = client_as("vera", "viewer")
    assert viewer.post("/api/v1/diffs/", {"application": new.app_id}, format="json").status_code == 403


def test_the_command_asks_a_diff_and_the_worker_answers_it(two_runs, make_member, tmp_path):
    import io

    from django.core.management import call_command

    from tests.lineage_server.worker import celery_worker

    old, new = two_runs
    make_member("ana", "analyst")
    out = io.StringIO()
    with celery_worker(tmp_path / "worker.log", LINEAGE_TRACE_SPARK_AT_START="false"):
        call_command("diff", new.app_id, user="ana", key='"incident"', wait=180, stdout=out)
    text = out.getvalue()
    before, after = topic_totals(old.lines), topic_totals(new.lines)
    changed = sum(1 for t in set(before) | set(after) if before.get(t) != after.get(t))
    assert f"against {old.app_id}: " in text and f"{changed} changed" in text, text
    was, now = lineage_of("incident", old.lines, old.topic_lines), lineage_of("incident", new.lines, new.topic_lines)
    assert f'"incident": {sum((now - was).values())} input records added, {sum((was - now).values())} removed' in text
    assert "the change adds up" in text
