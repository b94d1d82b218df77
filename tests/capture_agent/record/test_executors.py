"""What executors need: pyarrow and pyroaring, never this package (its task code travels by value);
and a clear error at LineageContext creation when they lack them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import venv
from pathlib import Path

import pytest

from capture_agent.record import LineageContext, LineageError
from capture_agent.record.query import executors as executors_module

pytestmark = [pytest.mark.processes, pytest.mark.spark]
ROOT = Path(__file__).resolve().parents[3]

JOB = textwrap.dedent("""
    import importlib.util, json, sys
    sys.path.insert(0, sys.argv[1])        # the driver sees the agent; executors start in this folder
    from operator import add
    from pyspark.sql import SparkSession
    from capture_agent import LineageContext

    spark = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").getOrCreate()
    sc = spark.sparkContext
    sc.setLogLevel("ERROR")
    agent_on_executors = sc.parallelize([0], 1).map(lambda _: importlib.util.find_spec("capture_agent")).collect()
    lc = LineageContext(spark, store="lineage", trace_mode="spark")
    words = lc.textFile(sys.argv[2], 2).flatMap(str.split)
    counts = words.map(lambda w: (w, 1)).reduceByKey(add)
    lengths = words.map(lambda w: (w, len(w))).distinct()
    joined = counts.join(lengths).sortByKey(numPartitions=2).collect()
    by_value = words.countByValue()
    first = words.take(2)
    total = words.count()
    counts.collect()
    src = counts.getLineage().filter(lambda kv: kv[0] == "b").goBackAll()
    print(json.dumps({"executors_have_agent": agent_on_executors != [None], "joined": joined,
                      "by_value": dict(by_value), "first": first, "total": total,
                      "lines": sorted(src.collect()), "spark_jobs": lc.engine.spark_jobs,
                      "forward": sorted(map(list, src.goNextAll().collect()))}))
    spark.stop()
""")


def test_executors_run_captured_jobs_and_traces_without_the_agent_installed(tmp_path):
    (tmp_path / "job.py").write_text(JOB)
    (tmp_path / "in.txt").write_text("a b\nb c c\nd\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYSPARK_PYTHON"] = sys.executable
    done = subprocess.run([sys.executable, "job.py", str(ROOT), str(tmp_path / "in.txt")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["executors_have_agent"] is False  # the check is real: tasks cannot import capture_agent
    assert out["joined"] == [["a", [1, 1]], ["b", [2, 1]], ["c", [2, 1]], ["d", [1, 1]]]
    assert out["by_value"] == {"a": 1, "b": 2, "c": 2, "d": 1} and out["total"] == 6 and out["first"] == ["a", "b"]
    assert out["lines"] == ["a b", "b c c"] and out["spark_jobs"] > 0
    assert out["forward"] == [["a", 1], ["b", 2], ["c", 2]]


def test_executors_without_pyarrow_or_pyroaring_get_an_error_saying_how_to_fix_it(spark, tmp_path):
    bare = tmp_path / "bare"
    venv.create(bare, with_pip=False)
    sc = spark.sparkContext
    previous = sc.pythonExec
    executors_module._CHECKED.discard(sc.applicationId)
    sc.pythonExec = str(bare / "bin" / "python")
    try:
        with pytest.raises(LineageError) as raised:
            LineageContext(spark, store=str(tmp_path / "lineage"))
    finally:
        sc.pythonExec = previous
    message = str(raised.value)
    assert "pyroaring missing" in message and "pyarrow missing" in message
    assert "PYSPARK_PYTHON" in message and "spark.archives" in message
    assert "Running a captured job on a cluster" in message
    LineageContext(spark, store=str(tmp_path / "lineage"))  # the real executors pass the check again
