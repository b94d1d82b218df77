"""A store that fails: the job still finishes with its results, and everybody learns at once which
lineage tables are missing and why (the manifest, the capture_point events, a trace before it starts)."""

from __future__ import annotations

import json
import subprocess
import uuid
from operator import add
from pathlib import Path

import pytest

from capture_agent.record import IncompleteLineage, LineageContext, LineageError, LineageRun

pytestmark = pytest.mark.spark


def word_count(lc, path):
    return lc.textFile(path, 2).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add)


def test_a_table_its_task_cannot_write_is_recorded_and_stops_traces(lc, sc, write_text):
    path = write_text("in.txt", ["a b", "b c", "c a a", "d"])
    blocker = Path(lc.store.run_dir) / "0002-combiner-reduceByKey"
    blocker.write_text("a file where the capture point's folder should be")
    counts = word_count(lc, path)
    assert sorted(counts.collect()) == sorted(sc.textFile(path, 2).flatMap(str.split).map(lambda w: (w, 1))
                                              .reduceByKey(add).collect())
    missing = lc.missing_tables()
    assert list(missing) == ["0002-combiner-reduceByKey"] and sorted(missing["0002-combiner-reduceByKey"]) == [0, 1]
    manifest = json.loads((Path(lc.store.run_dir) / "run.json").read_text())
    combiner = next(p for p in manifest["points"] if p["capture_id"] == "0002-combiner-reduceByKey")
    assert sorted(combiner["missing"]) == ["0", "1"] and all("Error" in r for r in combiner["missing"].values())
    events = {e["capture_id"].split("/")[1]: e for e in lc.capture_point_events()}
    assert [m["partition"] for m in events["0002-combiner-reduceByKey"]["missing"]] == [0, 1]
    assert "missing" not in events["0001-input-textFile"]
    with pytest.raises(IncompleteLineage, match="0002-combiner-reduceByKey: 2 table"):
        counts.getLineage().goBackAll().collect()
    run = LineageRun(lc.run_dir)
    with pytest.raises(IncompleteLineage):
        run.lineage(run.outputs()[0]).goBackAll().ids()
    # the input's own lines are still traceable forward as far as the complete tables go
    assert lc.lineage(lc.capture_points()[0]).count() == 4


@pytest.fixture
def tiny_store(tmp_path):
    """A 200 KB file system (tmpfs), as a user with a nearly full disk would have."""
    mount = tmp_path / f"tiny-{uuid.uuid4().hex[:6]}"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=200k", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_leaves_the_job_whole_and_the_lineage_marked_incomplete(spark, sc, tiny_store, write_text):
    lines = [" ".join(f"w{(i * 7 + j) % 5000}" for j in range(12)) for i in range(40000)]
    path = write_text("big.txt", lines)
    lc = LineageContext(spark, store=str(tiny_store))
    counts = word_count(lc, path)
    assert sorted(counts.collect()) == sorted(sc.textFile(path).flatMap(str.split).map(lambda w: (w, 1))
                                              .reduceByKey(add).collect())
    missing = lc.missing_tables()
    assert missing, "a 200 KB store cannot hold this word count's lineage"
    assert any("No space left on device" in reason for tables in missing.values() for reason in tables.values())
    with pytest.raises(IncompleteLineage, match="No space left on device"):
        counts.getLineage().goBackAll().ids()


def test_a_store_that_cannot_be_written_is_a_clear_error_naming_the_setting(spark, tmp_path):
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("x")
    with pytest.raises(LineageError, match="LINEAGE_STORE=.*cannot be written"):
        LineageContext(spark, store=str(not_a_folder / "lineage"))
    with pytest.raises(LineageError, match="LINEAGE_STORE='ftp://host/x'"):
        LineageContext(spark, store="ftp://host/x")
