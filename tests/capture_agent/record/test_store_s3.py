"""The lineage store in an S3 bucket (moto's server on loopback): executors write their tables
there, and traces read them, in the job's process and from the run folder alone."""

from __future__ import annotations

from collections.abc import Iterator
from operator import add

import pytest

from capture_agent.record import LineageContext, LineageRun
from capture_agent.record.storage.fs import StoreFS
from tests.capture_agent.record.oracle import as_local, positions_of
from tests.s3_bucket import local_bucket

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def bucket() -> Iterator[str]:
    with local_bucket() as url:
        yield url


def test_capture_and_trace_with_the_store_in_a_bucket(spark, bucket, write_text):
    path = write_text("in.txt", ["x y", "y z", "z x x", "w"])
    lc = LineageContext(spark, store=bucket)
    assert lc.run_dir.startswith("s3://lineage/runs/")
    counts = lc.textFile(path, 2).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add)
    result = counts.collect()
    assert sorted(result) == [("w", 1), ("x", 3), ("y", 2), ("z", 2)]
    assert lc.missing_tables() == {} and lc.lineage_bytes() > 0
    store = StoreFS.resolve(bucket)
    tables = [name for point in lc.capture_points() for name, _ in store.list_files(point.location)]
    assert "part-00000.parquet" in tables and "part-00001.parquet" in tables
    src = counts.getLineage().filter(lambda kv: kv[0] == "x").goBackAll()
    assert src.collect() == ["x y", "z x x"]
    assert as_local(src.positions()) == positions_of(path, lambda s: "x" in s.split())
    assert sorted(src.goNextAll().collect()) == [("x", 3), ("y", 2), ("z", 2)]
    # the server's trace worker opens the run from the store alone
    run = LineageRun(lc.run_dir, store=store)
    [output] = run.outputs()
    again = run.lineage(output).filter(lambda kv: kv[0] == "y").goBackAll()
    assert again.collect() == ["x y", "y z"]
    assert sorted(again.goNextAll().collect()) == [("x", 3), ("y", 2), ("z", 2)]
