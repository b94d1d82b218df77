"""Traces across applications: a run whose text input reads another run's saveAsTextFile output
goes on into that run, backward and forward, as one trace (``storage.chains``), against oracles
computed from the input file."""

from __future__ import annotations

from operator import add

import pytest

from tests.capture_agent.record.oracle import as_local, positions_of

pytestmark = pytest.mark.spark

LINES = ["error disk full", "ok", "warning disk slow", "error auth", "ok ok", "info disk", "error timeout"]


def test_a_trace_crosses_from_the_reading_run_into_the_saving_run_and_back(spark, tmp_path, write_text):
    from capture_agent.record import LineageContext, LineageRun

    store = str(tmp_path / "store")
    events = write_text("events.txt", LINES)
    saved = str(tmp_path / "problems")
    first = LineageContext(spark, store=store)  # the cleaning job: keeps the lines that are not "ok"
    first.textFile(events, 2).filter(lambda line: not line.startswith("ok")).map(str.upper).saveAsTextFile(saved)
    second = LineageContext(spark, store=store)  # another run of the store: counts words of the saved lines
    counts = second.textFile(saved).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add)
    result = dict(counts.collect())
    assert result["DISK"] == 3 and "OK" not in result
    run_dirs = sorted(str(p) for p in (tmp_path / "store").iterdir())
    assert len(run_dirs) == 2

    alone = LineageRun(second.run_dir)
    chained = LineageRun(second.run_dir, chain=True)
    assert set(chained.chained_apps) == {p.rsplit("/", 1)[-1] for p in run_dirs}
    out = chained.outputs()[-1]
    disk = chained.lineage(out).filter(lambda kv: kv[0] == "DISK")
    # alone, the trace stops at the saved part files; chained, it reaches the first job's input lines
    assert all("part-" in source for source, _ in alone.lineage(out).filter(lambda kv: kv[0] == "DISK")
               .goBackAll().positions())
    assert as_local(disk.goBackAll().positions()) == positions_of(events, lambda s: "disk" in s.split())
    assert sorted(disk.goBackAll().collect()) == sorted(line for line in LINES if "disk" in line.split())

    # forward from the first run's input: into the second run's counts
    upstream = LineageRun(first.run_dir, chain=True)
    [source] = [p for p in upstream.capture_points() if p.kind == "input" and "/" not in p.capture_id]
    reached = upstream.lineage(source).filter(lambda line: line.startswith("warning")).goNextAll()
    assert sorted(reached.collect()) == sorted((w, result[w]) for w in "WARNING DISK SLOW".split())


def test_runs_not_allowed_are_not_crossed(spark, tmp_path, write_text):
    from capture_agent.record import LineageContext, LineageRun

    store = str(tmp_path / "store")
    events = write_text("events.txt", LINES)
    saved = str(tmp_path / "saved")
    LineageContext(spark, store=store).textFile(events, 2).saveAsTextFile(saved)
    second = LineageContext(spark, store=store)
    words = second.textFile(saved).flatMap(str.split)
    assert words.count() == sum(len(line.split()) for line in LINES)
    run = LineageRun(second.run_dir, chain=True, allow=lambda run_id: False)
    assert list(run.chained_apps) == [run.store.run_id]
    assert all("/" not in p.capture_id for p in run.capture_points())


def test_a_what_if_goes_through_saved_text_in_one_run(lc, tmp_path, write_text):
    """Deleting input lines of the saving job: the words of the reading job that only those lines
    held die, the others they held change (before, the chained input stopped the propagation)."""
    events = write_text("events.txt", LINES)
    saved = str(tmp_path / "kept")
    source = lc.textFile(events, 2)
    source.filter(lambda line: not line.startswith("ok")).map(str.upper).saveAsTextFile(saved)
    counts = lc.textFile(saved).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add)
    counts.collect()
    impact = source.getLineage().filter(lambda line: "disk" in line.split()).whatIfDeleted(counts)
    held = {w.upper() for line in LINES if "disk" in line.split() for w in line.split()}
    others = {w.upper() for line in LINES if "disk" not in line.split() and not line.startswith("ok")
              for w in line.split()}
    assert sorted(w for w, _ in impact.dead()) == sorted(held - others) == ["DISK", "FULL", "INFO", "SLOW", "WARNING"]
    assert sorted(w for w, _ in impact.reached()) == sorted(held & others) == ["ERROR"]
