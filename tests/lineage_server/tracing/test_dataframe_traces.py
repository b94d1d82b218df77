"""Traces and what-ifs of a captured DataFrame job through the server (run_trace, as the worker's
task runs it): registered capture points, answers equal to oracles from the tables, both
directions; a what-if's new totals from the query's plan kept in the run's folder."""

from __future__ import annotations

from typing import Any

import pytest

from capture_agent.record.query.replay_strategies import FrameQuery
from capture_agent.record.query.whatif_results import iter_whatif
from capture_agent.record.storage.fs import StoreFS
from lineage_server.catalog.models import Application, CapturePoint
from lineage_server.tracing.models import Trace
from lineage_server.tracing.services import ask_trace, ask_whatif, run_trace
from tests.lineage_server.tracing.captured import TOTAL_CUSTOMERS as CUSTOMERS
from tests.lineage_server.tracing.captured import TOTAL_ORDERS as ORDERS
from tests.lineage_server.tracing.captured import frame_totals

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.spark]

def _records(trace: Trace) -> list[dict[str, Any]]:
    """Every record of a trace's answer as the server reads it (values left for later read now)."""
    from lineage_server.tracing.selectors import result_file, trace_records

    return list(trace_records(trace, result_file(trace)))


def test_backward_and_forward_through_the_server(frame_job: tuple[str, list[Any]], make_member: Any) -> None:
    app_id, result = frame_job
    analyst = make_member("andy", "analyst")
    app = Application.objects.get(app_id=app_id)
    points = {p.capture_id: p for p in CapturePoint.objects.filter(application=app)}
    output = next(p for p in points.values() if p.kind == "output" and p.capture_id.endswith("-collect"))
    # the explicit capture's aggregate has its map side as a capture point of its own, registered
    # with its parents; the unmodified job's rewritten query carries the sets to the output itself
    between = [points[c].kind for c in output.parent_capture_ids]
    assert between in (["combiner"], ["input", "input"])
    combiner = points[output.parent_capture_ids[0]] if between == ["combiner"] else output
    assert sorted(points[c].kind for c in combiner.parent_capture_ids) == ["input", "input"]
    assert [r.country for r in result] and {r.country for r in result} == {"JP", "FR"}

    trace = ask_trace(app, by=analyst, direction="backward", capture_point=output.capture_id,
                      selection={"predicate": {"field": "country", "op": "equals", "value": "JP"}},
                      seeds=Trace.objects.all())
    done = run_trace(trace.pk)
    assert done is not None and done.status == "succeeded", done and done.error
    japanese = {c[0] for c in CUSTOMERS if c[1] == "jp"}
    expected_orders = [o for o in ORDERS if o[1] in japanese and o[2] > 5]
    expected_customers = [c for c in CUSTOMERS if c[0] in japanese]
    assert done.result_count == len(expected_orders) + len(expected_customers)
    values = sorted((tuple(r["value"].values()) for r in _records(done)), key=repr)
    assert values == sorted([*expected_orders, *expected_customers], key=repr)
    on_the_way = ["combiner"] if combiner is not output else []
    assert sorted(p["kind"] for p in done.summary["points"]) == [*on_the_way, "input", "input", "output"]

    source = next(c for c in combiner.parent_capture_ids if points[c].capture_id.endswith("read.parquet"))
    forward = ask_trace(app, by=analyst, direction="forward", capture_point=source,
                        selection={"predicate": {"field": "order_id", "op": "in", "value": [6, 7]}},
                        seeds=Trace.objects.all())
    done = run_trace(forward.pk)
    assert done is not None and done.status == "succeeded", done and done.error
    countries = {next(c[1] for c in CUSTOMERS if c[0] == ORDERS[i][1]).upper() for i in (6, 7)}
    assert sorted(r["value"]["country"] for r in _records(done)) == sorted(countries)


def test_a_what_if_replays_the_kept_query_for_new_totals(frame_job: tuple[str, list[Any]], make_member: Any,
                                                          sc: Any) -> None:
    app_id, result = frame_job
    analyst = make_member("andy", "analyst")
    app = Application.objects.get(app_id=app_id)
    source = CapturePoint.objects.get(application=app, capture_id__endswith="read.parquet")
    whatif = ask_whatif(app, by=analyst, capture_point=source.capture_id,
                        selection={"predicate": {"field": "customer_id", "op": "in", "value": ["c0", "c3"]}})
    done = run_trace(whatif.pk, spark=lambda: sc)
    assert done is not None and done.status == "succeeded", done and done.error
    replay = done.summary["replay"]
    assert (replay["done"], replay["reason"], replay["how"]) == (True, None, FrameQuery.name)
    before = frame_totals(ORDERS, CUSTOMERS)
    after = frame_totals([o for o in ORDERS if o[1] not in ("c0", "c3")], CUSTOMERS)
    assert {r.country: r.total for r in result} == before
    store = StoreFS.resolve(done.result_location)
    target = done.summary["target"].split("/", 1)[1]
    rows = [r for r in iter_whatif(store, store.root) if r["capture_id"] == target]
    changed = [r for r in rows if r["fate"] == "changed"]
    assert sorted((r["value"]["country"], r["value"]["total"], r["new_value"]["total"]) for r in changed) == \
        sorted((c, before[c], after[c]) for c in before if after.get(c) != before[c])
    assert len(changed) == 2 and not [r for r in rows if r["fate"] in ("deleted", "appeared")]
    assert done.summary["deleted_at"] == {source.capture_id: sum(1 for o in ORDERS if o[1] in ("c0", "c3"))}
