"""The lineage store in an S3 bucket, end to end: a captured job writes its tables there, traces read
them, the server registers the capture points, and deleting the application deletes its folder there
(and nothing else)."""

from __future__ import annotations

from collections.abc import Iterator
from operator import add
from typing import Any

import pytest

import capture_agent
from capture_agent import LineageContext
from capture_agent.record.storage.fs import StoreFS
from lineage_server.catalog.models import Application, CapturePoint
from lineage_server.catalog.services import delete_application
from tests.s3_bucket import local_bucket

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.spark]


@pytest.fixture
def bucket(settings: Any) -> Iterator[str]:
    """A bucket, configured as the server's lineage store."""
    with local_bucket() as url:
        settings.LINEAGE = {**settings.LINEAGE, "STORE": url}
        yield url


def test_capture_trace_register_and_delete_with_the_store_in_a_bucket(spark, sc, live_server, agent_token, bucket,
                                                                      tmp_path):
    store = StoreFS.resolve(bucket)
    store.write_bytes(f"{store.root}/other-app/run.json", b'{"app_id": "other-app"}')
    store.make_dirs(f"{store.root}/other-app/0001-input-textFile")
    store.write_bytes(f"{store.root}/other-app/0001-input-textFile/part-00000.parquet", b"PAR1")
    store.write_bytes("lineage/elsewhere/keep.txt", b"not ours")
    text = tmp_path / "in.txt"
    text.write_text("error a\nb error\nc\n")
    agent = capture_agent.enable(sc, server_url=live_server.url, token=agent_token, spool_dir=str(tmp_path / "spool"))
    try:
        lc = LineageContext(spark, store=bucket)
        counts = lc.textFile(str(text), 2).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add)
        assert sorted(counts.collect()) == [("a", 1), ("b", 1), ("c", 1), ("error", 2)]
        src = counts.getLineage().filter(lambda kv: kv[0] == "error").goBackAll()
        assert sorted(src.collect()) == ["b error", "error a"]
        assert sorted(src.goNextAll().collect()) == [("a", 1), ("b", 1), ("error", 2)]
        agent.flush(30)
    finally:
        capture_agent.disable()
    run_folder = store.path_of(lc.run_dir)
    assert store.is_dir(run_folder)
    app = Application.objects.get(app_id=sc.applicationId)
    locations = list(CapturePoint.objects.filter(application=app).values_list("location", flat=True))
    assert locations and all(loc.startswith(f"s3://lineage/runs/{run_folder.rsplit('/', 1)[1]}/") for loc in locations)
    CapturePoint.objects.filter(pk=CapturePoint.objects.filter(application=app).first().pk).update(
        location="s3://lineage/elsewhere")  # a location outside the store root is left alone
    deletion = delete_application(app, by="retention-test")
    assert [str(p) for p in deletion.removed] == [run_folder]
    assert deletion.refused == ["s3://lineage/elsewhere"]
    assert not store.exists(run_folder)
    assert store.exists(f"{store.root}/other-app/0001-input-textFile/part-00000.parquet")
    assert store.read_bytes("lineage/elsewhere/keep.txt") == b"not ours"
    assert not Application.objects.filter(app_id=sc.applicationId).exists()
