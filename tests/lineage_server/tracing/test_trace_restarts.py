"""A worker killed mid-trace and a broker restarted lose no trace: real Celery workers, a real Redis
of the test's own (restarted without its data, as Redis without persistence comes back), SIGKILL."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import kombu.pools
import pytest

from lineage_server.celery import app as celery_app
from lineage_server.tracing.models import Trace
from tests.integration.standalone_cluster import free_port
from tests.lineage_server.tracing.test_traces_through_worker import all_records
from tests.lineage_server.worker import celery_worker

pytestmark = [pytest.mark.processes, pytest.mark.django_db(transaction=True), pytest.mark.spark]


def _wait(check: Callable[[], bool], timeout: float, what: str, log: Path) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}\n{log.read_text()[-4000:]}"
        time.sleep(0.1)


def _status(pk: int) -> str:
    return str(Trace.objects.values_list("status", flat=True).get(pk=pk))


def _ask(client: Any, app_id: str, topic: str) -> int:
    asked = client.post("/api/v1/traces/", {
        "application": app_id, "direction": "backward", "recompute": True,
        "selection": {"predicate": {"field": 0, "op": "equals", "value": topic}},
    }, format="json")
    assert asked.status_code == 202, asked.json()
    return int(asked.json()["id"])


def _answered_right(client: Any, captured: Any, pk: int, topic: str) -> None:
    trace = client.get(f"/api/v1/traces/{pk}/").json()
    assert trace["status"] == "succeeded", trace["error"]
    expected = sorted(captured.lines_with(captured.words_of(topic)) + captured.topic_lines_of(topic))
    assert sorted(r["value"] for r in all_records(client, trace["links"]["records"])) == expected


@pytest.mark.backends
def test_a_worker_killed_mid_trace_leaves_it_to_the_next_worker(captured, client_as, tmp_path):
    analyst = client_as("andy", "analyst")
    first_log, second_log = tmp_path / "worker-1.log", tmp_path / "worker-2.log"
    # The first worker starts Spark only once it holds the trace: the trace is running for the
    # seconds a JVM takes to start, and the worker is killed then.
    with celery_worker(first_log, LINEAGE_TRACE_MODE="spark", LINEAGE_TRACE_SPARK_AT_START="false") as first:
        pk = _ask(analyst, captured.app_id, "network")
        _wait(lambda: _status(pk) == "running", 120, "the first worker to start the trace", first_log)
        first.kill()
        first.wait(10)
    trace = Trace.objects.get(pk=pk)
    assert (trace.status, trace.attempts) == ("running", 1) and trace.finished_at is None

    with celery_worker(second_log, LINEAGE_TRACE_MODE="spark") as second:
        def done() -> bool:
            assert second.poll() is None, second_log.read_text()[-3000:]
            return _status(pk) not in ("queued", "running")

        _wait(done, 180, "the next worker to take the trace back and finish it", second_log)
    assert Trace.objects.get(pk=pk).attempts == 2
    _answered_right(analyst, captured, pk, "network")


class Redis:
    """A redis-server of the test's own on a free port, keeping nothing on disk (as the deployment's)."""

    def __init__(self, folder: Path) -> None:
        self.port, self.folder = free_port(), folder
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                                      "--appendonly", "no", "--dir", str(self.folder)], stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                assert time.monotonic() < deadline, "redis-server did not start"
                time.sleep(0.1)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()  # as a crash: whatever it held is gone
            self.proc.wait(10)
            self.proc = None


@contextmanager
def _sending_to(url: str) -> Iterator[None]:
    """This process (the web server's side) sends its tasks to ``url`` for the block. Celery keeps
    its connection pools on the app and kombu in a registry by broker URL: both are emptied (as
    Celery does after a fork), or the old broker's pool would be found closed afterwards."""
    app: Any = celery_app  # the pools are private attributes the stubs do not name

    def reconnect() -> None:
        kombu.pools.reset()
        app._pool = None
        app.amqp._producer_pool = None

    old = app.conf.broker_url
    app.conf.broker_url = url
    reconnect()
    try:
        yield
    finally:
        app.conf.broker_url = old
        reconnect()


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server (Debian's redis-server)")
def test_traces_survive_the_broker_restarting(captured, client_as, tmp_path):
    analyst = client_as("andy", "analyst")
    redis = Redis(tmp_path)
    redis.start()
    log = tmp_path / "worker.log"
    quick = {"CELERY_BROKER_URL": redis.url, "LINEAGE_TRACE_MODE": "local", "LINEAGE_TRACE_STALE_SECONDS": "5",
             "LINEAGE_TRACE_SWEEP_SECONDS": "1"}
    try:
        with _sending_to(redis.url):
            lost = _ask(analyst, captured.app_id, "incident")  # queued in the broker, no worker yet
            redis.stop()
            redis.start()  # came back empty: the message is gone, the database still owes the trace
            with celery_worker(log, **quick) as worker:
                _wait(lambda: "ready." in log.read_text(), 60, "the worker to start", log)
                redis.stop()
                while_down = _ask(analyst, captured.app_id, "storage")  # still 202: the send is owed
                time.sleep(2)
                redis.start()
                after = _ask(analyst, captured.app_id, "network")

                def done() -> bool:
                    assert worker.poll() is None, log.read_text()[-3000:]
                    return all(_status(pk) not in ("queued", "running") for pk in (lost, while_down, after))

                _wait(done, 120, "every trace to finish after the broker came back", log)
    finally:
        redis.stop()
    for pk, topic in ((lost, "incident"), (while_down, "storage"), (after, "network")):
        _answered_right(analyst, captured, pk, topic)
