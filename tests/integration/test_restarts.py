"""Restarting the worker or the web server while work is under way loses nothing.

Everything here runs as real processes: Celery workers, gunicorn, and a PySpark job with the
capture agent. Processes are killed with SIGKILL, the way a crash or an OOM kill ends them.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from django.db import connection, transaction

from lineage_server.catalog.models import Application, IngestedEvent, Job, Operator, Stage
from tests.lineage_server.events import event
from tests.lineage_server.worker import celery_worker
from tests.lineage_server.worker import test_database_url as database_url_of_the_tests

pytestmark = [pytest.mark.processes, pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[2]


def _wait_for(check: Callable[[], object], timeout: float, what: str, log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            detail = f"\n--- {log.name} ---\n{log.read_text()[-4000:]}" if log is not None and log.exists() else ""
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}{detail}")
        time.sleep(0.1)


@contextmanager
def _row_locked(app_pk: int) -> Iterator[None]:
    """Hold the application's row lock from another connection until the block exits.

    On PostgreSQL it is a row lock (SELECT ... FOR UPDATE); on SQLite the settings begin every
    transaction IMMEDIATE, so the open transaction holds the database's write lock. Either way
    finalize, which starts by locking the row, waits.
    """
    locked, release = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def hold() -> None:
        try:
            with transaction.atomic():
                Application.objects.select_for_update().get(pk=app_pk)
                locked.set()
                release.wait(60)
        except BaseException as exc:  # noqa: BLE001 - reported by the test thread
            errors.append(exc)
            locked.set()
        finally:
            connection.close()

    holder = threading.Thread(target=hold, name="row-lock")
    holder.start()
    try:
        assert locked.wait(30) and not errors, errors
        yield
    finally:
        release.set()
        holder.join(30)
    assert not errors, errors


def test_worker_killed_during_finalize_the_next_worker_finishes_it(post_events, tmp_path):
    """A worker SIGKILLed inside finalize loses its task message; the next worker to start re-queues it."""
    events = [
        event("application_start", "local-crash", 0, name="worker crash"),
        event("job_start", "local-crash", 1, job_id=0, stage_ids=[0, 1]),
        event("stage_completed", "local-crash", 2, stage_id=0, attempt=0, status="succeeded",
              parent_stage_ids=[], job_id=0, metrics={"tasks": 3, "input_bytes": 70}),
        event("stage_submitted", "local-crash", 3, stage_id=1, attempt=0, parent_stage_ids=[0], job_id=0),
        event("application_end", "local-crash", 10),
    ]
    assert post_events(events).status_code == 200  # no worker yet: the finalize task waits in the broker
    app = Application.objects.get(app_id="local-crash")
    first_log, second_log = tmp_path / "worker-1.log", tmp_path / "worker-2.log"

    with _row_locked(app.pk):
        with celery_worker(first_log, LINEAGE_TRACE_SPARK_AT_START="false") as first:
            _wait_for(lambda: "] received" in first_log.read_text(), 30,
                      "the first worker to receive the finalize task", first_log)
            time.sleep(1.0)  # let it reach the lock and wait there
            first.kill()
            first.wait(10)
        app.refresh_from_db()
        assert not app.totals and app.status != "failed", "finalize must not have run while the row was locked"

    with celery_worker(second_log, LINEAGE_TRACE_SPARK_AT_START="false") as second:
        def finalized() -> bool:
            assert second.poll() is None, second_log.read_text()
            return bool(Application.objects.get(pk=app.pk).totals)

        _wait_for(finalized, 30, "the second worker to finalize the application", second_log)
    app.refresh_from_db()
    assert (app.totals["tasks"], app.totals["input_bytes"], app.totals["jobs"]) == (3, 70, 1)
    assert app.status == "failed" and not app.finalize_pending
    assert Job.objects.get(application=app, job_id=0).status == "failed"  # cut off by the end
    assert dict(Stage.objects.filter(application=app).values_list("stage_id", "status")) == {
        0: "succeeded",
        1: "failed",
    }


def _purge_broker_queue() -> int:
    """Empty the default Celery queue of the test broker (filesystem or Redis); returns how many it held."""
    from lineage_server.celery import app as celery_app

    with celery_app.connection_for_write() as conn:
        channel: Any = conn.default_channel  # kombu's virtual channels have queue_purge; its stubs do not say so
        return int(channel.queue_purge(celery_app.conf.task_default_queue) or 0)


def test_requeue_pending_command_queues_what_a_lost_broker_dropped(post_events):
    """After the broker lost its messages, `manage.py requeue_pending` queues the finalize still owed."""
    assert post_events([event("application_start", "local-lost", 0, name="lost"),
                        event("application_end", "local-lost", 10)]).status_code == 200
    assert post_events([event("application_start", "local-open", 0, name="open")]).status_code == 200  # owes nothing
    _purge_broker_queue()  # the broker loses the finalize message
    env = {**os.environ, "DATABASE_URL": database_url_of_the_tests()}
    run = subprocess.run([sys.executable, "manage.py", "requeue_pending"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "queued finalize for 1 applications"
    assert _purge_broker_queue() == 1


JOB = textwrap.dedent(
    """
    import json
    import os
    import sys
    import time
    from operator import add

    from pyspark.sql import SparkSession

    import capture_agent
    from capture_agent import FileSink, Sink, load_settings
    from capture_agent.sinks import HttpSink
    from tests.integration.spark_truth import jobs_of_group, stages_that_ran

    folder = sys.argv[1]


    class Tee(Sink):
        \"\"\"The agent's HTTP sink, plus a file of every event it was given.\"\"\"

        def __init__(self, *sinks):
            self.sinks = sinks

        def emit(self, events):
            for sink in self.sinks:
                sink.emit(events)

        def flush(self, timeout):
            for sink in self.sinks:
                sink.flush(timeout)

        def close(self, timeout=10.0):
            for sink in self.sinks:
                sink.close(timeout)


    def gate(name):
        open(os.path.join(folder, name + ".done"), "w").close()
        deadline = time.monotonic() + 90
        while not os.path.exists(os.path.join(folder, name + ".go")):
            if time.monotonic() > deadline:
                sys.exit(f"nobody opened gate {name}")
            time.sleep(0.05)


    def word_counts(n):
        data = sc.parallelize([f"w{i % 17} w{i % 5}" for i in range(2000)], 3)
        counts = data.flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add, 2)
        counts.saveAsTextFile(os.path.join(folder, f"counts-{n}"))
        return sorted(counts.join(counts.mapValues(lambda c: c * 2)).collect())


    spark = (
        SparkSession.builder.master("local[2]").appName("restarts")
        .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false").getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    sc = spark.sparkContext
    agent = capture_agent.enable(
        spark, sink=Tee(HttpSink(load_settings({})), FileSink(os.path.join(folder, "events.jsonl")))
    )
    sc.setJobGroup("restarts", "jobs across a web server restart")
    word_counts(0)
    agent.flush(30)
    gate("up")  # the test kills the web server here
    word_counts(1)
    gate("down")  # the test starts the web server again here
    word_counts(2)
    jobs = jobs_of_group(sc, "restarts")
    stages = stages_that_ran(sc, list(jobs))
    truth = {
        "app_id": sc.applicationId,
        "jobs": jobs,
        "stages": {sid: {"num_tasks": s.num_tasks, "rdd_ids": sorted(s.rdd_ids), "parents": sorted(s.parents)}
                   for sid, s in stages.items()},
    }
    with open(os.path.join(folder, "truth.json"), "w") as out:
        json.dump(truth, out)
    spark.stop()
    """
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_web_server(port: int, log: Path) -> subprocess.Popen[bytes]:
    """gunicorn serving the project against the test database, in its own process group."""
    env = {**os.environ, "DATABASE_URL": database_url_of_the_tests()}
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "lineage_server.wsgi", "--bind", f"127.0.0.1:{port}",
             "--workers", "2", "--threads", "4", "--no-control-socket"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )


def _crash(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the process and its whole group (gunicorn's master and workers at once)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(10)


def _answers(url: str) -> bool:
    try:
        urllib.request.urlopen(url, timeout=2)
    except urllib.error.HTTPError:
        return True  # any HTTP answer: the server is up
    except OSError:
        return False
    return True


@pytest.mark.spark
@pytest.mark.backends
def test_web_server_killed_during_a_job_loses_no_event(agent_token, tmp_path):
    """gunicorn SIGKILLed mid-application and started again: every job, stage and event reaches the server once."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    web_log, job_log = tmp_path / "web.log", tmp_path / "job.log"
    folder, spool = tmp_path / "job", tmp_path / "spool"
    folder.mkdir()
    script = tmp_path / "job.py"
    script.write_text(JOB)
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYTHONPATH": str(ROOT), "LINEAGE_SERVER_URL": url,
           "LINEAGE_TOKEN": agent_token, "LINEAGE_SPOOL_DIR": str(spool), "LINEAGE_MAX_RETRIES": "1"}
    web = _start_web_server(port, web_log)
    job: subprocess.Popen[bytes] | None = None
    try:
        _wait_for(lambda: _answers(url + "/api/v1/ingest/events/"), 30, "gunicorn to answer", web_log)
        with job_log.open("wb") as out:
            job = subprocess.Popen([sys.executable, str(script), str(folder)], cwd=tmp_path, env=env,
                                   stdout=out, stderr=subprocess.STDOUT)

        def at_gate(name: str) -> bool:
            assert job is not None and job.poll() is None, job_log.read_text()[-4000:]
            return (folder / f"{name}.done").exists()

        _wait_for(lambda: at_gate("up"), 90, "the first Spark job", job_log)
        assert IngestedEvent.objects.exists(), "events of the first job reached the server before the crash"
        _crash(web)
        (folder / "up.go").touch()
        _wait_for(lambda: at_gate("down"), 60, "the Spark job run while the server is down", job_log)
        time.sleep(2)
        web = _start_web_server(port, web_log)
        _wait_for(lambda: _answers(url + "/api/v1/ingest/events/"), 30, "gunicorn to answer again", web_log)
        (folder / "down.go").touch()
        assert job.wait(90) == 0, job_log.read_text()[-4000:]
        flush = subprocess.run(
            [sys.executable, "-m", "capture_agent", "flush-spool", "--server", url, "--token", agent_token,
             "--spool-dir", str(spool)], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert flush.returncode == 0, flush.stdout + flush.stderr
    finally:
        if job is not None and job.poll() is None:
            job.kill()
            job.wait(10)
        _crash(web)

    assert not list(spool.glob("*.json")) and not list(spool.glob("rejected/*")), "everything delivered"
    produced = [json.loads(line) for line in (folder / "events.jsonl").read_text().splitlines()]
    truth = json.loads((folder / "truth.json").read_text())
    app = Application.objects.get(app_id=truth["app_id"])
    stored = list(IngestedEvent.objects.filter(application=app).values_list("event_id", flat=True))
    assert sorted(stored) == sorted({e["event_id"] for e in produced})
    assert app.ended_at is not None and app.status == "succeeded"
    assert len(truth["jobs"]) == 6
    for job_id, stage_ids in truth["jobs"].items():
        stored_job = Job.objects.get(application=app, job_id=int(job_id))
        assert stored_job.status == "succeeded"
        assert sorted(stored_job.stages.values_list("stage_id", flat=True)) == stage_ids
    for stage_id, stage_truth in truth["stages"].items():
        stage = Stage.objects.get(application=app, stage_id=int(stage_id))
        assert (stage.status, stage.num_tasks, stage.metrics["tasks"]) == (
            "succeeded", stage_truth["num_tasks"], stage_truth["num_tasks"])
        assert sorted(Operator.objects.filter(stage=stage).values_list("rdd_id", flat=True)) == stage_truth["rdd_ids"]
        assert sorted(stage.parent_stage_ids) == stage_truth["parents"]
