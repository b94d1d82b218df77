"""Record-level capture points reach the live server as capture points of the application."""
from __future__ import annotations

from operator import add

import pytest

import capture_agent
from capture_agent import LineageContext
from lineage_server.catalog.models import Application, CapturePoint

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.spark]


def test_word_count_capture_points_are_registered(spark, sc, live_server, agent_token, tmp_path, monkeypatch):
    monkeypatch.setenv("LINEAGE_STORE", str(tmp_path / "store"))
    text = tmp_path / "in.txt"
    text.write_text("error a\nb error\nc\n")
    agent = capture_agent.enable(sc, server_url=live_server.url, token=agent_token, spool_dir=str(tmp_path / "spool"))
    try:
        lc = LineageContext(spark)
        counts = lc.textFile(str(text), 2).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add)
        assert sorted(counts.collect()) == [("a", 1), ("b", 1), ("c", 1), ("error", 2)]
        lines = counts.getLineage().filter(lambda kv: kv[0] == "error").goBackAll().collect()
        assert sorted(lines) == ["b error", "error a"]
        agent.flush(30)
        local = {p.capture_id: p for p in lc.capture_points()}
    finally:
        capture_agent.disable()
    app = Application.objects.get(app_id=sc.applicationId)
    prefix = f"{app.app_id}/"  # the events name a point within its run
    registered = {cp.capture_id.removeprefix(prefix): cp for cp in CapturePoint.objects.filter(application=app)}
    assert set(registered) == set(local)
    kinds = {cp.kind for cp in registered.values()}
    assert {"input", "combiner", "reducer", "output"} <= kinds
    for capture_id, point in local.items():
        cp = registered[capture_id]
        parents = [parent.removeprefix(prefix) for parent in cp.parent_capture_ids]
        assert (cp.kind, parents) == (point.kind, list(point.parents))
        assert cp.location.removeprefix("file:").endswith(point.location.removeprefix("file:").lstrip("/"))
        assert cp.location.startswith(str(tmp_path / "store")) or cp.location.startswith("file:" + str(tmp_path))
    assert sum(cp.rows for cp in registered.values()) > 0
