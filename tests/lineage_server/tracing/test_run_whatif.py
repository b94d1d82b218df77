"""What-ifs run by ``run_trace`` (what the worker's task calls): the classes and new values from
replaying the job kept in the run's folder, checked against the job's answer recomputed from the
input files without the deleted records; the lineage-only answer without Spark; a what-if of an
earlier trace's result; and the questions refused."""

from __future__ import annotations

from typing import Any

import pytest

from capture_agent.record.query.replay_strategies import Restricted
from capture_agent.record.query.whatif_results import iter_whatif
from capture_agent.record.storage.fs import StoreFS
from lineage_server.catalog.models import Application, CapturePoint
from lineage_server.tracing.models import Trace
from lineage_server.tracing.services import TraceQuestionError, ask_trace, ask_whatif, run_trace
from lineage_server.tracing.services.whatif_answer import NO_SPARK
from tests.lineage_server.tracing.captured import TOPICS, topic_totals

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.spark]


@pytest.fixture
def analyst(make_member: Any) -> Any:
    return make_member("andy", "analyst")


def _point(captured: Any, suffix: str) -> CapturePoint:
    return CapturePoint.objects.get(application__app_id=captured.app_id, capture_id__endswith=suffix)


def _rows(whatif: Trace) -> list[dict[str, Any]]:
    store = StoreFS.resolve(whatif.result_location)
    return list(iter_whatif(store, store.root))


def _expected(before: dict[str, int], after: dict[str, int]) -> dict[str, Any]:
    return {
        "deleted": sorted([t, n] for t, n in before.items() if t not in after),
        "changed": sorted(([t, n], [t, after[t]]) for t, n in before.items() if t in after and after[t] != n),
        "unchanged": sorted([t, n] for t, n in before.items() if after.get(t) == n),
        "appeared": sorted([t, n] for t, n in after.items() if t not in before),
    }


def _run(pk: int, **kwargs: Any) -> Trace:
    done = run_trace(pk, **kwargs)
    assert done is not None
    return done


def _classes(whatif: Trace) -> dict[str, Any]:
    target = whatif.summary["target"].split("/", 1)[1]
    rows = [r for r in _rows(whatif) if r["capture_id"] == target]
    return {
        "deleted": sorted(r["value"] for r in rows if r["fate"] == "deleted"),
        "changed": sorted((r["value"], r["new_value"]) for r in rows if r["fate"] == "changed"),
        "unchanged": sorted(r["value"] for r in rows if r["fate"] == "unchanged"),
        "appeared": sorted(r["new_value"] for r in rows if r["fate"] == "appeared"),
    }


def test_deleting_lines_replays_the_kept_job_for_new_totals(captured, analyst, sc):
    app = Application.objects.get(app_id=captured.app_id)
    text = _point(captured, "0001-input-textFile")
    whatif = ask_whatif(app, by=analyst, capture_point=text.capture_id,
                        selection={"predicate": {"op": "contains", "value": "disk"}})
    assert whatif.kind == "whatif" and whatif.direction == "forward" and whatif.status == "queued"
    started: list[Any] = []

    def spark() -> Any:
        started.append(sc)
        return sc

    done = _run(whatif.pk, spark=spark)
    assert done.status == "succeeded", done.error
    assert started == [sc]  # asked for once, at the replay (its jobs are several)
    summary = done.summary
    replay = summary["replay"]
    assert (replay["done"], replay["reason"], replay["how"]) == (True, None, Restricted.name)
    # the count subtracts what the deleted lines counted, the join replays the words whose count
    # changed, and the topic sums subtract their old counts and add their new ones: nothing whole
    assert replay["stages_in_full"] == []
    assert {label.split(" ")[0] for label in replay["keys_replayed"]} == {"reduceByKey", "join"}
    by_node = sorted(replay["stage_paths"].items(), key=lambda kv: int(kv[0].split("#")[1]))
    assert [(label.split(" ")[0], path) for label, path in by_node] == \
        [("reduceByKey", "subtracted"), ("join", "keys"), ("reduceByKey", "subtracted")]
    kept = [line for line in captured.lines if "disk" not in line]
    expected = _expected(captured.result, topic_totals(kept))
    assert _classes(done) == expected
    assert summary["output"] == {fate: len(v) for fate, v in expected.items()}
    assert sorted((r["value"], r["new_value"]) for r in summary["first_changed"]) == expected["changed"]
    deleted_lines = sum("disk" in line for line in captured.lines)
    assert summary["deleted_at"] == {text.capture_id: deleted_lines}
    # on the way: the word count's disk key dies (every disk line is gone), other words' counts change
    points = {p["capture_id"].split("/", 1)[1]: p for p in summary["points"]}
    assert points[text.capture_id.split("/", 1)[1]]["deleted"] == deleted_lines
    assert done.points_done == done.points_total == len(summary["points"])
    assert {e["target"] for e in done.graph["edges"]} <= {p["capture_id"] for p in summary["points"]}
    assert set(summary["timings"]) >= {"open_ms", "select_ms", "propagate_ms", "replay_ms", "store_ms"}


def test_without_spark_the_classes_are_lineage_s_and_the_reason_is_given(captured, analyst):
    app = Application.objects.get(app_id=captured.app_id)
    topics = app.capture_points.filter(kind="input").order_by("capture_id").last()  # the topics table
    whatif = ask_whatif(app, by=analyst, capture_point=topics.capture_id,
                        selection={"predicate": {"op": "prefix", "value": "disk,"}})
    done = _run(whatif.pk)
    assert done.status == "succeeded", done.error
    assert done.summary["replay"] == {"done": False, "reason": NO_SPARK, "how": "", "description": "",
                                      "keys_replayed": {}, "stages_in_full": [], "stage_paths": {}}
    # deleting the disk -> storage row: storage still has cache words, so it is reached, not dead
    classes = _classes(done)
    assert classes["deleted"] == [] and classes["appeared"] == []
    assert [old for old, new in classes["changed"]] == [["storage", captured.result["storage"]]]
    assert all(new is None for _, new in classes["changed"])
    assert len(classes["unchanged"]) == len(captured.result) - 1


def test_a_what_if_deletes_the_records_an_earlier_trace_found(captured, analyst, sc):
    app = Application.objects.get(app_id=captured.app_id)
    trace = ask_trace(app, by=analyst, direction="backward", seeds=Trace.objects.all(),
                      selection={"predicate": {"field": 0, "op": "equals", "value": "network"}})
    assert _run(trace.pk).status == "succeeded"
    whatif = ask_whatif(app, by=analyst, selection={"trace": trace.pk}, seeds=Trace.objects.all())
    done = _run(whatif.pk, spark=lambda: sc)
    assert done.status == "succeeded", done.error
    network = captured.words_of("network")
    kept_lines = [line for line in captured.lines if not network & set(line.split())]
    after = {t: n for t, n in topic_totals(kept_lines).items() if t != "network"}
    assert _classes(done) == _expected(captured.result, after)
    assert ["network", captured.result["network"]] in _classes(done)["deleted"]
    assert set(TOPICS.values()) >= set(after)


def test_questions_a_what_if_cannot_ask(captured, analyst):
    app = Application.objects.get(app_id=captured.app_id)
    text = _point(captured, "0001-input-textFile")
    with pytest.raises(TraceQuestionError, match="name the capture point"):
        ask_whatif(app, by=analyst, selection={"ids": [0]})
    with pytest.raises(TraceQuestionError, match="goes to an output"):
        ask_whatif(app, by=analyst, capture_point=text.capture_id, selection={"ids": [0]}, target="step")
    with pytest.raises(TraceQuestionError, match="point; a what-if's target is an output"):
        stage = app.capture_points.exclude(kind__in=["input", "output"]).first()
        ask_whatif(app, by=analyst, capture_point=text.capture_id, selection={"ids": [0]}, target=stage.capture_id)
    whatif = ask_whatif(app, by=analyst, capture_point=text.capture_id, selection={"ids": [0]})
    run_trace(whatif.pk)
    with pytest.raises(TraceQuestionError, match="is a what-if"):
        ask_whatif(app, by=analyst, selection={"trace": whatif.pk}, seeds=Trace.objects.all())
