"""Traces across applications (issue 14, section 2): one application saves text (or writes Parquet
from a captured DataFrame) that another reads; a trace from the reader's output goes on into the
writer's input, as one trace whose summary names both applications, and the dataset graph shows
the two applications chained; an application of another team is never entered."""

from __future__ import annotations

from typing import Any

import pytest

from lineage_server.catalog.models import Application
from lineage_server.tracing.models import Trace
from lineage_server.tracing.services import ask_trace, run_trace
from tests.lineage_server.tracing.captured import FRAME_ORDERS, TOPICS, capture_chain, capture_frame_chain

pytestmark = [pytest.mark.processes, pytest.mark.django_db(transaction=True), pytest.mark.spark]


def _backward(app_id: str, by: Any, word: str) -> Trace:
    app = Application.objects.get(app_id=app_id)
    trace = ask_trace(app, by=by, direction="backward", seeds=Trace.objects.all(),
                      selection={"predicate": {"field": 0, "op": "equals", "value": word}})
    done = run_trace(trace.pk)
    assert done is not None and done.status == "succeeded", done and done.error
    return done


def _values(trace: Trace) -> list[Any]:
    return sorted(r["value"] for r in _records(trace))


def test_a_backward_trace_goes_on_into_the_application_that_saved_its_input(spark, live_server, agent_token,
                                                                            make_member, tmp_path):
    analyst = make_member("andy", "analyst")
    first, reader, counts = capture_chain(spark, live_server.url, agent_token, tmp_path / "job")
    assert counts["disk"] == sum(line.split().count("disk") for line in first.lines)
    done = _backward(reader, analyst, "disk")
    # the writer's input lines holding "disk" (every kept line holds a TOPICS word), not the part files
    assert _values(done) == first.lines_with({"disk"})
    assert done.summary["applications"] == [reader, first.app_id]
    files = {r["file"].rsplit("/", 1)[-1] for r in done.summary["first_page"]}
    assert files == {"events.txt"}
    kinds = [p["kind"] for p in done.summary["points"]]
    assert kinds.count("input") == 2 and "output" in kinds  # the reader's input, the writer's save and input
    assert any(p["capture_id"].split("/", 1)[0] != done.summary["run_id"] for p in done.summary["points"])
    assert "disk" in TOPICS


def test_another_teams_application_is_not_entered(spark, live_server, agent_token, make_member, tmp_path):
    from lineage_server.accounts.models import Team
    from lineage_server.accounts.services import create_agent_token

    other = Team.objects.create(slug="others", name="Others")
    other_token = create_agent_token(other, "their agent")[1]
    analyst = make_member("andy", "analyst")
    first, reader, _ = capture_chain(spark, live_server.url, agent_token, tmp_path / "job", reader_token=other_token)
    reader_member = make_member("olga", "analyst", in_team=other)
    done = _backward(reader, reader_member, "disk")
    # the trace stops at the saved part files: the writer belongs to another team
    assert done.summary["applications"] == [reader]
    assert {r["file"].rsplit("/", 1)[-1].split("-")[0] for r in done.summary["first_page"]} == {"part"}
    assert analyst.pk


def test_a_dataframe_trace_goes_on_through_parquet_into_the_writing_application(spark, live_server, agent_token,
                                                                              make_member, tmp_path):
    from lineage_server.catalog.selectors.pipeline import app_node_id, as_answer, pipeline_graph

    analyst = make_member("andy", "analyst")
    writer, reader, orders, totals = capture_frame_chain(spark, live_server.url, agent_token, tmp_path / "job")
    assert totals["c4"] == sum(o[2] for o in FRAME_ORDERS if o[1] == "c4" and o[2] > 2)
    app = Application.objects.get(app_id=reader)
    trace = ask_trace(app, by=analyst, direction="backward", seeds=Trace.objects.all(),
                      selection={"predicate": {"field": "customer_id", "op": "equals", "value": "c4"}})
    done = run_trace(trace.pk)
    assert done is not None and done.status == "succeeded", done and done.error
    assert done.summary["applications"] == [reader, writer]
    # the writer's source orders of c4 over 2, read from the orders folder, not the written parts
    assert sorted(tuple(r["value"].values()) for r in _records(done)) == \
        sorted(o for o in FRAME_ORDERS if o[1] == "c4" and o[2] > 2)
    assert {r["file"].rsplit("/", 2)[-2] for r in done.summary["first_page"]} == {"orders"}
    # the dataset graph: the writer wrote the folder the reader read
    answer = as_answer(pipeline_graph(Application.objects.all(), application=app))
    edges = {(e["source"], e["target"]) for e in answer["edges"]}
    [cleaned] = [n["id"] for n in answer["nodes"] if n["kind"] == "dataset" and n["label"].endswith("cleaned")]
    assert (app_node_id(writer), cleaned) in edges and (cleaned, app_node_id(reader)) in edges


def _records(trace: Trace) -> list[Any]:
    """Every record of a trace's answer as the server reads it (values left for later read now)."""
    from lineage_server.tracing.selectors import result_file, trace_records

    return list(trace_records(trace, result_file(trace)))
