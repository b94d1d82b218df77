"""The job kept in a run's folder (``capture.kept``) and its replay elsewhere (``query.stored_job``):
what is kept, the bound, and each reason a replay from the folder gives when it cannot run."""

from __future__ import annotations

import json
import sys
import types
from operator import add

import pytest

from capture_agent.record import LineageContext, LineageRun, ReplayNotPossible
from capture_agent.record.query.stored_job import FOLDER, JOB_FILE
from capture_agent.record.worker.stored import OutsideTask, StoredFunction
from tests.capture_agent.record.whatif_data import TEXT

pytestmark = pytest.mark.spark


def job_of(lc):
    return json.loads(open(f"{lc.run_dir}/{FOLDER}/{JOB_FILE}").read())


def folder_impact(lc, sc, lineage, doomed):
    run = LineageRun(lc.run_dir, sc)
    [cid] = lineage.points()
    return run.lineage(cid, list(lineage.frontier()[cid])).goBackAll().filter(doomed).whatIfDeleted()


def test_a_kept_function_refuses_to_run_outside_a_spark_task():
    from pyspark import cloudpickle

    kept = StoredFunction("d" * 64, cloudpickle.dumps(lambda x: x + 1))
    with pytest.raises(OutsideTask, match="outside a Spark task"):
        kept(1)


def test_the_job_keeps_named_functions_by_name_and_lambdas_pickled(lc, write_text):
    path = write_text("words.txt", TEXT)
    counts = lc.textFile(path, 2).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add, 2)
    counts.collect()
    job = job_of(lc)
    [output] = job["outputs"].values()
    recipes = [n["recipe"] for n in job["nodes"].values()]
    reduce_step = next(r for r in recipes if r["method"] == "reduceByKey")
    assert reduce_step["args"][0] == {"name": "_operator:add"}
    assert reduce_step["args"][2] == {"name": "pyspark.core.rdd:portable_hash"}
    source = next(n for n in job["nodes"].values() if "input" in n)
    assert source["recipe"]["method"] == "textFile" and source["recipe"]["args"][0] == {"value": path}
    lam = next(r for r in recipes if r["method"] == "map")["args"][0]
    assert set(lam) == {"pickled"} and lam["pickled"] in job["functions"]
    assert output["redo"]["method"] == "collect"


def test_sort_by_replays_but_a_custom_sort_key_would_run_on_the_driver(lc, sc, write_text):
    path = write_text("words.txt", TEXT)

    def ranked(ctx, p):
        return ctx.textFile(p, 2).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add, 2) \
            .sortBy(lambda kv: (-kv[1], kv[0]), numPartitions=2)

    doomed = lambda line: "dog" in line  # noqa: E731
    job = ranked(lc, path)
    original = job.collect()
    impact = folder_impact(lc, sc, job.getLineage(), doomed)
    kept_lines = [line for line in TEXT if not doomed(line)]
    new = impact.unchanged() + [n for _, n in impact.changed()] + impact.appeared()
    assert sorted(new) == sorted(ranked(sc, write_text("rest.txt", kept_lines)).collect())
    assert len(impact.deleted()) + len(impact.changed()) + len(impact.unchanged()) == len(original)

    by_length = lc.textFile(path, 2).map(lambda line: (line, 1)).sortByKey(True, 2, keyfunc=lambda k: k[::-1])
    by_length.collect()
    impact = folder_impact(lc, sc, by_length.getLineage(), doomed)
    with pytest.raises(ReplayNotPossible, match="outside a Spark task"):
        impact.changed()


def test_nothing_is_kept_at_zero_and_a_job_over_the_bound_says_so(spark, sc, tmp_path, monkeypatch):
    monkeypatch.setenv("LINEAGE_KEEP_FUNCTIONS_MB", "0")
    lc = LineageContext(spark, store=str(tmp_path / "off"))
    numbers = lc.parallelize(range(100), 2)
    numbers.map(lambda n: (n % 3, n)).reduceByKey(add).collect()
    impact = folder_impact(lc, sc, numbers.getLineage(), lambda n: n < 10)
    with pytest.raises(ReplayNotPossible, match="cannot be replayed here"):
        impact.changed()

    monkeypatch.setenv("LINEAGE_KEEP_FUNCTIONS_MB", "1")
    lc = LineageContext(spark, store=str(tmp_path / "bounded"))
    blobs = lc.parallelize([f"{i:08d}" * 40 for i in range(5000)], 2)  # about 1.6 MB pickled
    blobs.map(lambda s: (s[:2], 1)).reduceByKey(add).collect()
    assert list(job_of(lc)["not_kept"].values())[0].endswith("over LINEAGE_KEEP_FUNCTIONS_MB=1")
    impact = folder_impact(lc, sc, blobs.getLineage(), lambda s: s.startswith("00000"))
    assert impact.dead() == []  # lineage still decides what it can
    with pytest.raises(ReplayNotPossible, match="over LINEAGE_KEEP_FUNCTIONS_MB=1"):
        impact.changed()


def test_side_effects_are_not_replayed_from_the_folder(lc, sc, write_text):
    path = write_text("words.txt", TEXT)
    lines = lc.textFile(path, 2)
    lines.foreach(lambda line: None)
    impact = folder_impact(lc, sc, lines.getLineage(), lambda line: "dog" in line)
    with pytest.raises(ReplayNotPossible, match="side effects"):
        impact.changed()


def test_a_function_whose_library_is_missing_on_the_cluster_is_reported(lc, sc, write_text):
    from pyspark import cloudpickle

    path = write_text("words.txt", TEXT)
    counts = lc.textFile(path, 2).map(lambda line: (len(line), 1)).reduceByKey(add, 2)
    counts.collect()
    job = job_of(lc)
    lam = next(n["recipe"] for n in job["nodes"].values() if n["recipe"]["method"] == "map")["args"][0]
    # the kept map function now refers to a module the executors do not have
    module = types.ModuleType("lineage_missing_library")
    exec("def length_pair(line):\n    return (len(line), 1)\n", module.__dict__)
    sys.modules[module.__name__] = module
    try:
        data = cloudpickle.dumps(module.length_pair)
    finally:
        del sys.modules[module.__name__]
    with open(f"{lc.run_dir}/{FOLDER}/{lam['pickled']}.pkl", "wb") as out:
        out.write(data)
    impact = folder_impact(lc, sc, counts.getLineage(), lambda line: "dog" in line)
    with pytest.raises(ReplayNotPossible, match="No module named 'lineage_missing_library'"):
        impact.changed()
