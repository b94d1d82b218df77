"""The cluster path: a captured job on a Spark standalone master and worker reports its lineage.

The job runs in its own process (this test session may already hold a local SparkContext, and a
JVM holds only one); its executors run on the worker, which does not have the capture agent.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from lineage_server.catalog.models import Application
from lineage_server.catalog.services import finalize_application
from tests.integration.standalone_cluster import StandaloneCluster, standalone_cluster

pytestmark = [pytest.mark.processes, pytest.mark.django_db(transaction=True), pytest.mark.spark]
ROOT = Path(__file__).resolve().parents[2]

JOB = textwrap.dedent(
    """
    import os
    import sys
    from operator import add

    from pyspark.sql import SparkSession

    import capture_agent

    folder = sys.argv[1]
    with open(os.path.join(folder, "words.txt"), "w") as out:
        out.write("a b c a\\nb a\\n\\nc c d\\n" * 50)
    spark = (
        SparkSession.builder.master(os.environ["SPARK_MASTER"]).appName("cluster-word-count")
        .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
        .config("spark.executor.memory", "512m").getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    capture_agent.enable(spark)
    sc = spark.sparkContext
    counts = sc.textFile(os.path.join(folder, "words.txt"), 2).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add)
    counts.saveAsTextFile(os.path.join(folder, "counts"))
    spark.createDataFrame(counts, ["word", "n"]).write.parquet(os.path.join(folder, "counts.parquet"))
    print("APP_ID", sc.applicationId, flush=True)
    spark.stop()
    """
)


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[StandaloneCluster]:
    with standalone_cluster(tmp_path / "cluster") as running:
        yield running


def test_captured_job_on_a_standalone_cluster_reaches_the_server(cluster, live_server, agent_token, tmp_path):
    script = tmp_path / "job.py"
    script.write_text(JOB)
    data = tmp_path / "data"
    data.mkdir()
    env = {
        **os.environ,
        "SPARK_MASTER": cluster.url,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": sys.executable,
        "PYTHONPATH": str(ROOT),  # the driver imports capture_agent from this checkout
        "LINEAGE_SERVER_URL": live_server.url,
        "LINEAGE_TOKEN": agent_token,
        "LINEAGE_SPOOL_DIR": str(tmp_path / "spool"),
    }
    run = subprocess.run(
        [sys.executable, str(script), str(data)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=150
    )
    assert run.returncode == 0, run.stderr[-3000:]
    app_id = next(line.split()[1] for line in run.stdout.splitlines() if line.startswith("APP_ID "))

    # The master ran it: the application is one of its completed applications.
    assert app_id in {app["id"] for app in cluster.status()["completedapps"]}
    app = Application.objects.get(app_id=app_id)
    assert app.master == cluster.url
    assert (app.name, app.status) == ("cluster-word-count", "succeeded") and app.ended_at is not None
    assert app.jobs.count() >= 2 and not app.jobs.exclude(status="succeeded").exists()
    finalized = finalize_application(app.pk)  # what the Celery worker does once the application ended
    assert finalized is not None and finalized.status == "succeeded"
    app = finalized
    ran = app.stages.exclude(status="skipped")
    assert ran.exists() and not ran.exclude(status="succeeded").exists()
    assert all(stage.metrics.get("tasks") == stage.num_tasks for stage in ran)
    assert app.totals["stages"] == ran.count() and app.totals["input_bytes"] > 0
    ios = {(Path(io.dataset.path.removeprefix("file:")).name, io.direction) for io in app.dataset_ios.all()}
    assert {("words.txt", "read"), ("counts", "written"), ("counts.parquet", "written")} <= ios
    words = app.dataset_ios.filter(direction="read", dataset__path__endswith="words.txt").first().dataset
    assert words.size_bytes == (data / "words.txt").stat().st_size
    assert not list((tmp_path / "spool").glob("*.json*")), "everything was delivered, nothing spooled"
