"""Real PySpark jobs with the capture agent, reporting to a live test server.

What the server registers is checked against what Spark itself says the job did (its status
tracker and status store), and against the data the job read and wrote.
"""
from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
from operator import add
from pathlib import Path

import pytest
from django.core.management import call_command

import capture_agent
from lineage_server.catalog.models import Application, DatasetIO, IngestedEvent, Job, Operator, Stage
from lineage_server.tracing.models import Trace
from tests.integration.spark_truth import jobs_of_group, stages_kept, stages_that_ran
from tests.lineage_server.worker import celery_worker

pytestmark = [pytest.mark.processes, pytest.mark.django_db(transaction=True), pytest.mark.spark]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def agent(sc, live_server, agent_token, tmp_path):
    running = capture_agent.enable(sc, server_url=live_server.url, token=agent_token,
                                   spool_dir=str(tmp_path / "spool"))
    assert running.enabled and running.listener_kind
    with stages_kept(sc):  # the tests read the stages of their jobs back from Spark's status store
        yield running
    capture_agent.disable()


def _check_against_spark(sc, app_id: str, group: str) -> dict[int, list[int]]:
    """Jobs, stages, operators and shuffle edges on the server match Spark's own record."""
    jobs = jobs_of_group(sc, group)
    assert jobs, "the job group ran no job"
    app = Application.objects.get(app_id=app_id)
    for job_id, stage_ids in jobs.items():
        job = Job.objects.get(application=app, job_id=job_id)
        assert job.status == "succeeded"
        assert sorted(job.stages.values_list("stage_id", flat=True)) == stage_ids
    truth = stages_that_ran(sc, list(jobs))
    for stage_id, stage_truth in truth.items():
        stage = Stage.objects.get(application=app, stage_id=stage_id)
        assert stage.status == "succeeded"
        assert stage.num_tasks == stage_truth.num_tasks
        assert stage.metrics["tasks"] == stage_truth.num_tasks
        ops = set(Operator.objects.filter(stage=stage).values_list("rdd_id", flat=True))
        assert ops == set(stage_truth.rdd_ids), f"stage {stage_id}"
        assert set(stage.parent_stage_ids) == stage_truth.parents, f"stage {stage_id}"
    return jobs


def test_rdd_job_with_a_shuffle_and_a_join(sc, agent, viewer_client, tmp_path):
    words = tmp_path / "words.txt"
    words.write_text("a b c a\nb a\n\nc c d\n")
    colours = tmp_path / "colours.txt"
    colours.write_text("a red\nc blue\nz green\n")
    out = tmp_path / "joined"

    sc.setJobGroup("rdd-join", "rdd job")
    counts = sc.textFile(str(words), 2).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add)
    colour = sc.textFile(str(colours)).map(lambda line: tuple(line.split()))
    joined = counts.join(colour)
    result = sorted(joined.collect())
    joined.map(lambda kv: f"{kv[0]} {kv[1][0]} {kv[1][1]}").saveAsTextFile(str(out))
    sc.setJobGroup("other", "")
    agent.flush(30)

    assert result == [("a", (3, "red")), ("c", (3, "blue"))]
    _check_against_spark(sc, sc.applicationId, "rdd-join")
    app = Application.objects.get(app_id=sc.applicationId)
    ios = {
        (Path(io.dataset.path.removeprefix("file:")).name, io.direction)
        for io in DatasetIO.objects.filter(application=app)
    }
    assert {("words.txt", "read"), ("colours.txt", "read"), ("joined", "written")} <= ios
    read = DatasetIO.objects.filter(application=app, dataset__path__endswith="words.txt").first()
    assert read.dataset.size_bytes == words.stat().st_size
    # The Python operators fused into PythonRDDs are known, in order.
    pipelines = [p for p in app.python_pipelines.values_list("operators", flat=True)]
    assert any([op["name"] for op in ops][:2] == ["flatMap", "map"] for ops in pipelines), pipelines

    graph = viewer_client.get(f"/api/v1/applications/{sc.applicationId}/graph/").json()
    kinds = {n["kind"] for n in graph["nodes"]}
    assert kinds == {"application", "job", "stage", "operator", "dataset"}  # no record-level capture here
    assert any(e["kind"] == "shuffle" for e in graph["edges"])
    by_id = {n["id"]: n for n in graph["nodes"]}
    assert all(by_id[n["parent"]]["kind"] == "job" for n in graph["nodes"] if n["kind"] == "stage")
    node_ids = {n["id"] for n in graph["nodes"]}
    assert all(e["source"] in node_ids and e["target"] in node_ids for e in graph["edges"])


def test_dataframe_job_reading_and_writing_parquet(spark, sc, agent, tmp_path):
    source = tmp_path / "people.parquet"
    target = tmp_path / "by_city.parquet"
    spark.createDataFrame([("ana", "oslo", 3), ("bo", "lima", 5), ("cy", "oslo", 4)], ["name", "city", "n"]) \
        .write.parquet(str(source))
    sc.setJobGroup("df-job", "dataframe job")
    frame = spark.read.parquet(str(source)).groupBy("city").sum("n")
    frame.write.parquet(str(target))
    rows = sorted(tuple(r) for r in spark.read.parquet(str(target)).collect())
    sc.setJobGroup("other", "")
    agent.flush(30)

    assert rows == [("lima", 5), ("oslo", 7)]
    _check_against_spark(sc, sc.applicationId, "df-job")
    app = Application.objects.get(app_id=sc.applicationId)
    ios = {(io.dataset.path, io.direction, io.dataset.format) for io in DatasetIO.objects.filter(application=app)}
    names = {(Path(p.removeprefix("file:")).name, d, f) for p, d, f in ios}
    assert ("people.parquet", "read", "parquet") in names
    assert ("by_city.parquet", "written", "parquet") in names
    assert ("by_city.parquet", "read", "parquet") in names
    written = DatasetIO.objects.filter(application=app, direction="written", dataset__path__endswith="by_city.parquet")
    # Hadoop's local file system keeps hidden .crc checksum files beside the data: not the dataset's bytes.
    data_files = [f for f in target.rglob("*") if f.is_file() and not f.name.startswith(".")]
    assert written.first().dataset.size_bytes == sum(f.stat().st_size for f in data_files)


def test_example_job_end_to_end(live_server, agent_token, make_member, tmp_path):
    """The job `make run` runs, in its own process, reporting to the live server; then `make run`'s
    trace of its "incident" output, through a real worker, reaches exactly the lines behind it."""
    env = {**os.environ, "LINEAGE_SERVER_URL": live_server.url, "LINEAGE_TOKEN": agent_token,
           "LINEAGE_SPOOL_DIR": str(tmp_path / "spool"), "PYSPARK_PYTHON": sys.executable, "SPARK_MASTER": "local[2]",
           "LINEAGE_STORE": str(tmp_path / "store")}
    run = subprocess.run([sys.executable, "examples/word_count_join.py", "--out", str(tmp_path / "example")],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stderr[-3000:]
    url_line = next(line for line in run.stdout.splitlines() if line.startswith("Lineage of this run:"))
    app_id = url_line.rstrip("/").rsplit("/", 1)[1]
    app = Application.objects.get(app_id=app_id)
    assert app.status == "succeeded" and app.name == "word-count-join" and app.ended_at is not None
    assert app.jobs.count() >= 3 and not app.jobs.exclude(status="succeeded").exists()
    ios = {(Path(io.dataset.path.removeprefix("file:")).name, io.direction) for io in app.dataset_ios.all()}
    assert {("events.txt", "read"), ("topics.csv", "read"), ("counts_by_topic", "written"),
            ("topic_totals.parquet", "written")} <= ios
    assert not list((tmp_path / "spool").glob("*.json*")), "everything was delivered, nothing spooled"
    assert {"input", "combiner", "reducer", "join", "output"} <= set(app.capture_points.values_list("kind", flat=True))

    make_member("ana", "analyst")
    out = io.StringIO()
    with celery_worker(tmp_path / "worker.log", LINEAGE_TRACE_SPARK_AT_START="false") as worker:
        call_command("trace", app_id, user="ana", predicate='{"field": 0, "op": "equals", "value": "incident"}',
                     wait=120, stdout=out)
        assert worker.poll() is None
    assert "succeeded" in out.getvalue() and "Trace URL: /api/v1/traces/" in out.getvalue()
    assert "Trace page: /traces/" in out.getvalue()
    trace = Trace.objects.get(application=app)
    lines = (tmp_path / "example" / "input" / "events.txt").read_text().splitlines()
    behind = [line for line in lines if {"error", "warning"} & set(line.split())]
    topics = [line for line in (tmp_path / "example" / "input" / "topics.csv").read_text().splitlines()
              if line.endswith(",incident")]
    assert trace.result_count == len(behind) + len(topics)
    assert sorted(trace.summary["result_points"].values()) == sorted([len(behind), len(topics)])


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_server_down_job_completes_spools_and_delivers_later_without_duplicates(sc, live_server, agent_token, tmp_path):
    spool = tmp_path / "spool"
    data = sc.parallelize(range(1000), 4)
    plain = data.map(lambda x: (x % 7, x)).reduceByKey(add).collect()

    down = capture_agent.enable(sc, server_url=f"http://127.0.0.1:{_closed_port()}", token=agent_token,
                                spool_dir=str(spool), max_retries=1)
    assert down.enabled, "an unreachable server does not stop the agent from starting"
    try:
        sc.setJobGroup("while-down", "server down")
        captured = data.map(lambda x: (x % 7, x)).reduceByKey(add).collect()
        sc.setJobGroup("other", "")
    finally:
        capture_agent.disable()
    assert sorted(captured) == sorted(plain)
    spooled = [json.loads(line) for f in sorted(spool.glob("*.json*")) for line in _events_lines(f)]
    assert spooled, "events were spooled while the server was down"
    spooled_ids = {e["event_id"] for e in spooled}
    assert Application.objects.count() == 0

    def flush() -> str:
        result = subprocess.run(
            [sys.executable, "-m", "capture_agent", "flush-spool", "--server", live_server.url, "--token", agent_token,
             "--spool-dir", str(spool)], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        return result.stdout

    assert f"delivered {len(spooled)} events" in flush()
    assert "delivered 0 events" in flush()
    app = Application.objects.get(app_id=sc.applicationId)
    assert IngestedEvent.objects.filter(application=app).count() == len(spooled_ids)
    jobs = jobs_of_group(sc, "while-down")
    assert sorted(app.jobs.values_list("job_id", flat=True)) == sorted(jobs)


def _events_lines(path: Path) -> list[str]:
    text = path.read_text()
    try:
        body = json.loads(text)
    except json.JSONDecodeError:
        return [line for line in text.splitlines() if line.strip()]
    events = body["events"] if isinstance(body, dict) else body
    return [json.dumps(e) for e in events]
