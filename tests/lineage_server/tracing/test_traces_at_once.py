"""Twenty traces posted at once over HTTP by four users of two teams, run by a real Celery worker:
all finish, every answer is the one the input files give, and no one sees the other team's traces."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from typing import Any

import pytest

from lineage_server.accounts.services import create_agent_token, create_personal_token, create_team
from lineage_server.catalog.models import CapturePoint
from lineage_server.tracing.models import Trace
from tests.lineage_server.tracing.captured import (
    TOPICS,
    CapturedJob,
    capture_in_own_application,
    register_events,
)
from tests.lineage_server.worker import celery_worker

pytestmark = [pytest.mark.processes, pytest.mark.django_db(transaction=True), pytest.mark.spark]

@pytest.fixture(scope="module")
def blue_job(tmp_path_factory: pytest.TempPathFactory) -> CapturedJob:
    """The job on other data, captured once for the module by a PySpark driver of its own (another
    application: an application belongs to one team), its agent's events kept for each test to
    register with the blue team's token."""
    return capture_in_own_application(None, None, tmp_path_factory.mktemp("blue") / "blue-job", seed=11)


FORWARD_WORDS = ["error", "warning", "timeout", "retry", "disk", "cache", "auth"]


class Http:
    """One user's requests to the live server, with a personal token (as a script would)."""

    def __init__(self, base: str, token: str) -> None:
        self.base, self.token = base, token

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
        url = path if path.startswith("http") else self.base + path
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(url, data=data, method=method, headers={
            "Authorization": f"Bearer {self.token}", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, json.load(response)
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"null")


def questions(job: CapturedJob) -> list[tuple[dict[str, Any], list[str]]]:
    """Ten questions on ``job`` with the answers its files give: back from each topic, forward from
    the lines holding a word."""
    text_point = CapturePoint.objects.get(application__app_id=job.app_id,
                                          capture_id__endswith="0001-input-textFile").capture_id
    asked = []
    for topic in sorted(set(TOPICS.values())):
        expected = job.lines_with(job.words_of(topic)) + job.topic_lines_of(topic)
        asked.append(({"application": job.app_id, "direction": "backward", "name": f"back from {topic}",
                       "selection": {"predicate": {"field": 0, "op": "equals", "value": topic}}}, sorted(expected)))
    for word in FORWARD_WORDS:
        touched = {w for line in job.lines if word in line.split() for w in line.split()}
        topics = {t for w, t in TOPICS.items() if w in touched}
        expected = [json.dumps([t, job.result[t]]) for t in topics]
        asked.append(({"application": job.app_id, "direction": "forward", "capture_point": text_point,
                       "name": f"forward from {word}",
                       "selection": {"predicate": {"op": "regex", "value": rf"\b{word}\b"}}}, sorted(expected)))
    return asked


def values(user: Http, trace: dict[str, Any]) -> list[str]:
    found: list[str] = []
    page: str | None = trace["links"]["records"] + "?page_size=100"
    while page:
        status, body = user.call("GET", page)
        assert status == 200, body
        found.extend(r["value"] if isinstance(r["value"], str) else json.dumps(r["value"]) for r in body["results"])
        page = body["next"]
    return sorted(found)


def test_twenty_traces_at_once_by_four_users_of_two_teams(captured, blue_job, team, make_member, live_server,
                                                          tmp_path):
    blue = create_team("blue", "Blue team")
    register_events(live_server.url, create_agent_token(blue, "blue agent")[1], blue_job)
    users = {}
    for name, in_team in (("ada", team), ("alan", team), ("bea", blue), ("bob", blue)):
        users[name] = Http(live_server.url, create_personal_token(make_member(name, "analyst", in_team), "cli")[1])
    work = [(names[i % 2], question, expected)
            for job, names in ((captured, ("ada", "alan")), (blue_job, ("bea", "bob")))
            for i, (question, expected) in enumerate(questions(job))]
    assert len(work) == 20

    posted: list[tuple[str, int, Any, list[str]]] = []
    start = threading.Barrier(len(work))

    def post(name: str, question: dict[str, Any], expected: list[str]) -> None:
        start.wait(30)
        status, body = users[name].call("POST", "/api/v1/traces/", question)
        posted.append((name, status, body, expected))

    log = tmp_path / "worker.log"
    with celery_worker(log) as worker:
        threads = [threading.Thread(target=post, args=item) for item in work]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(90)
        assert len(posted) == 20 and all(status == 202 for _, status, _, _ in posted), posted
        deadline = time.monotonic() + 240
        finished: dict[int, dict[str, Any]] = {}
        while len(finished) < 20:
            assert time.monotonic() < deadline, f"unfinished: {len(finished)} of 20\n{log.read_text()[-3000:]}"
            assert worker.poll() is None, log.read_text()[-3000:]
            for name, _, body, _ in posted:
                if body["id"] not in finished:
                    trace = users[name].call("GET", body["url"])[1]
                    if trace["status"] not in ("queued", "running"):
                        finished[body["id"]] = trace
            time.sleep(0.5)

    for name, _, body, expected in posted:
        trace = finished[body["id"]]
        assert trace["status"] == "succeeded", (trace["name"], trace["error"])
        assert values(users[name], trace) == expected, trace["name"]

    teams = {"ada": "red", "alan": "red", "bea": "blue", "bob": "blue"}
    for name, user in users.items():
        status, history = user.call("GET", "/api/v1/traces/?page_size=50")
        assert status == 200 and history["count"] == 10
        mine = {body["id"] for other, _, body, _ in posted if teams[other] == teams[name]}
        assert {t["id"] for t in history["results"]} == mine
        for other, _, body, _ in posted:
            if teams[other] != teams[name]:
                assert user.call("GET", body["url"])[0] == 404
                assert user.call("GET", body["links"]["records"])[0] == 404


def test_one_teams_burst_of_traces_does_not_hold_back_another_teams_single_trace(captured, blue_job, team,
                                                                                 make_member, live_server, tmp_path):
    """Red asks 30 traces, then blue one, all queued before the worker starts: blue's runs second
    (after the one red trace the worker took first), not 31st; every answer is exact."""
    blue = create_team("blue", "Blue team")
    register_events(live_server.url, create_agent_token(blue, "blue agent")[1], blue_job)
    red_user = Http(live_server.url, create_personal_token(make_member("ada", "analyst", team), "cli")[1])
    blue_user = Http(live_server.url, create_personal_token(make_member("bea", "analyst", blue), "cli")[1])
    burst = [(question, expected) for question, expected in questions(captured) * 3]
    posted = []
    for question, expected in burst:
        status, body = red_user.call("POST", "/api/v1/traces/", {**question, "recompute": True})
        assert status == 202, body
        posted.append((red_user, body, expected))
    question, expected = questions(blue_job)[0]
    status, single = blue_user.call("POST", "/api/v1/traces/", question)
    assert status == 202, single

    log = tmp_path / "worker.log"
    with celery_worker(log) as worker:
        deadline = time.monotonic() + 600
        while Trace.objects.filter(status__in=["queued", "running"]).exists():
            assert time.monotonic() < deadline and worker.poll() is None, log.read_text()[-3000:]
            time.sleep(0.5)
    order = list(Trace.objects.order_by("started_at", "id").values_list("id", flat=True))
    assert order.index(single["id"]) <= 1, order
    for user, body, wanted in [*posted, (blue_user, single, expected)]:
        trace = user.call("GET", body["url"])[1]
        assert trace["status"] == "succeeded" and values(user, trace) == wanted, trace["name"]
    rows = list(Trace.objects.order_by("started_at"))
    runs = sorted(t.duration_ms or 0 for t in rows)
    blue_row = next(t for t in rows if t.pk == single["id"])
    first, last = rows[0].started_at, rows[-1].finished_at
    assert blue_row.finished_at is not None and first is not None and last is not None
    waited = (blue_row.finished_at - first).total_seconds()
    print(f"\n31 traces (30 red, then 1 blue): blue's finished {waited:.1f} s after the worker began, run "
          f"{blue_row.duration_ms} ms; p50 run {runs[len(runs) // 2]} ms; all done "
          f"{(last - first).total_seconds():.1f} s")
