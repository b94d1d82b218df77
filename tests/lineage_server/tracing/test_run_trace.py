"""run_trace, the plain function the worker's task calls: answers against oracles from the input
files, in both directions, by ids, predicate and an earlier result; and what it says when it cannot."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from typing import Any

import pytest
from django.utils import timezone

from lineage_server.catalog.models import CapturePoint
from lineage_server.tracing.models import Trace
from lineage_server.tracing.services import TraceQuestionError, ask_trace, run_trace
from lineage_server.tracing.services.questions import last_output
from lineage_server.tracing.services.recovery import recover_traces
from tests.lineage_server.tracing.captured import TOPICS

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.spark]


@pytest.fixture
def analyst(make_member: Any) -> Any:
    return make_member("andy", "analyst")


def _ask(captured: Any, analyst: Any, **question: Any) -> Trace:
    from lineage_server.catalog.models import Application

    app = Application.objects.get(app_id=captured.app_id)
    question.setdefault("seeds", Trace.objects.all())
    return ask_trace(app, by=analyst, **question)


def _run(pk: int) -> Trace:
    done = run_trace(pk)
    assert done is not None
    return done


def _records(trace: Trace) -> list[dict[str, Any]]:
    """Every record of a trace's answer as the server reads it (values left for later read now)."""
    from lineage_server.tracing.selectors import result_file, trace_records

    return list(trace_records(trace, result_file(trace)))


def _values(trace: Trace) -> list[Any]:
    return sorted(r["value"] for r in _records(trace))


def test_backward_from_a_topic_reaches_the_lines_and_table_rows_behind_it(captured, analyst):
    trace = _ask(captured, analyst, direction="backward",
                 selection={"predicate": {"field": 0, "op": "equals", "value": "incident"}})
    assert trace.status == "queued" and trace.start_capture_id == last_output(trace.application).capture_id
    done = _run(trace.pk)
    assert done.status == "succeeded", done.error
    words = captured.words_of("incident")
    expected = sorted(captured.lines_with(words) + captured.topic_lines_of("incident"))
    assert _values(done) == expected
    assert done.result_count == len(expected) == sum(done.summary["result_points"].values())
    assert done.points_done == done.points_total == len(done.summary["points"]) >= 5
    kinds = [p["kind"] for p in done.summary["points"]]
    assert kinds[0] == "output" and kinds.count("input") == 2
    assert len(done.summary["first_page"]) == 50 and all(r["file"] for r in done.summary["first_page"])
    assert {r["file"].rsplit("/", 1)[-1] for r in _records(done)} == {"events.txt", "topics.csv"}
    assert done.graph["points"] == done.summary["points"]
    crossed = sum(p["records"] for p in done.summary["points"])
    assert (done.graph["records"] is None) == (crossed > 300)  # record-level graphs of small traces only
    timings = done.summary["timings"]
    assert timings["walk_ms"] >= 0 and timings["store_ms"] >= 0 and timings["spark_jobs"] == 0


def test_the_worker_s_spark_is_asked_for_at_the_first_step_that_runs_on_it_only(captured, analyst, sc, settings):
    """Auto mode answers this small trace in the worker's process without starting Spark; spark mode
    asks for it once, however many of its steps run there."""
    asked: list[str] = []

    def spark() -> Any:
        asked.append(settings.LINEAGE["TRACE_MODE"])
        return sc

    question = {"direction": "backward", "selection": {"predicate": {"field": 0, "op": "equals", "value": "incident"}},
                "recompute": True}
    answers = []
    for mode in ("auto", "spark"):
        settings.LINEAGE = {**settings.LINEAGE, "TRACE_MODE": mode}
        done = run_trace(_ask(captured, analyst, **question).pk, spark=spark)
        assert done is not None and done.status == "succeeded", done and done.error
        answers.append((_values(done), done.summary["timings"]["spark_jobs"]))
    (local, local_jobs), (on_spark, spark_jobs) = answers
    assert asked == ["spark"] and local_jobs == 0 and spark_jobs > 1
    assert local == on_spark


def test_forward_from_lines_chosen_by_predicate_reaches_their_topics_and_reseeds(captured, analyst):
    text_point = CapturePoint.objects.get(application__app_id=captured.app_id,
                                          capture_id__endswith="0001-input-textFile")
    trace = _ask(captured, analyst, direction="forward", capture_point=text_point.capture_id,
                 selection={"predicate": {"op": "regex", "value": r"\bdisk\b"}})
    done = _run(trace.pk)
    assert done.status == "succeeded", done.error
    topics = {json.dumps(v) for v in _values(done)}
    touched = {w for line in captured.lines if "disk" in line.split() for w in line.split()}
    expected = {t for w, t in TOPICS.items() if w in touched}
    assert {json.loads(t)[0] for t in topics} == expected
    # The answer seeds a backward trace: back from those topics to every line of theirs.
    back = _run(_ask(captured, analyst, direction="backward", selection={"trace": done.pk}).pk)
    assert back.status == "succeeded", back.error
    words = {w for t in expected for w in captured.words_of(t)}
    assert [v for v in _values(back) if "," not in v] == captured.lines_with(words)


def test_ids_one_step_and_a_named_point(captured, analyst):
    app_points = {p.capture_id: p for p in CapturePoint.objects.filter(application__app_id=captured.app_id)}
    output = max((p for p in app_points.values() if p.kind == "output"), key=lambda p: p.capture_id)
    step = _run(_ask(captured, analyst, direction="backward", selection={"all": True}, target="step").pk)
    assert step.status == "succeeded", step.error
    assert list(step.summary["result_points"]) == output.parent_capture_ids
    join = next(p for p in app_points.values() if p.kind == "join")
    named = _run(_ask(captured, analyst, direction="backward", selection={"ids": [0]},
                           target=join.capture_id).pk)
    assert named.status == "succeeded", named.error
    assert list(named.summary["result_points"]) == [join.capture_id]
    assert named.summary["values_missing"] == [join.capture_id]  # intermediate records keep no values
    assert "input" not in {p["kind"] for p in named.summary["points"]}  # it stopped there


def test_the_same_question_on_unchanged_lineage_reuses_the_answer_unless_asked_to_recompute(captured, analyst):
    question = {"direction": "backward", "selection": {"predicate": {"field": 0, "op": "equals", "value": "network"}}}
    first = _run(_ask(captured, analyst, **question).pk)
    again = _ask(captured, analyst, **question)
    assert again.status == "succeeded" and again.answered_from_id == first.pk
    assert again.result_location == first.result_location and again.result_count == first.result_count
    fresh = _ask(captured, analyst, recompute=True, **question)
    assert fresh.status == "queued" and fresh.answered_from_id is None


def test_bad_questions_are_refused_naming_the_field_and_nothing_is_queued(captured, analyst):
    bad = [
        ({"direction": "sideways", "selection": {"ids": [0]}}, "direction"),
        ({"direction": "backward", "selection": {"ids": [0], "all": True}}, "selection"),
        ({"direction": "backward", "selection": {"predicate": {"op": "like", "value": "x"}}}, "selection"),
        ({"direction": "backward", "selection": {"ids": ["zero"]}}, "selection"),
        ({"direction": "backward", "selection": {"ids": [0]}, "capture_point": "nope"}, "capture_point"),
        ({"direction": "backward", "selection": {"ids": [0]}, "target": "outputs"}, "target"),
        ({"direction": "backward", "selection": {"trace": 999}}, "selection"),
    ]
    for question, field in bad:
        with pytest.raises(TraceQuestionError) as err:
            _ask(captured, analyst, **question)
        assert err.value.field == field, (question, str(err.value))
    assert Trace.objects.count() == 0


def test_a_changed_input_file_and_a_deleted_store_folder_fail_with_what_to_do(captured, analyst):
    question = {"direction": "backward", "selection": {"predicate": {"field": 0, "op": "equals", "value": "storage"}}}
    with captured.text.open("a") as out:
        out.write("disk disk\n")
    changed = _run(_ask(captured, analyst, **question).pk)
    assert changed.status == "failed" and "changed since lineage was captured" in changed.error
    point = CapturePoint.objects.filter(application__app_id=captured.app_id).first()
    shutil.rmtree(point.location.rsplit("/", 1)[0])
    gone = _run(_ask(captured, analyst, recompute=True, **question).pk)
    assert gone.status == "failed" and "lineage store folder" in gone.error and "missing" in gone.error


def test_a_trace_taken_twice_runs_once_and_a_stale_running_trace_is_retried_then_failed(captured, analyst, settings):
    trace = _ask(captured, analyst, direction="backward", selection={"ids": [0]})
    assert run_trace(trace.pk) is not None
    assert run_trace(trace.pk) is None  # a second delivery of the message finds it no longer queued
    stuck = _ask(captured, analyst, direction="backward", selection={"ids": [0]}, recompute=True)
    Trace.objects.filter(pk=stuck.pk).update(status="running", attempts=1, heartbeat_at=None, worker="w1")
    assert recover_traces()["requeued"] == 1
    assert Trace.objects.get(pk=stuck.pk).status == "queued"
    # A restarted worker takes back what it ran before its restart, not what it has taken since.
    restart = timezone.now()
    Trace.objects.filter(pk=stuck.pk).update(status="running", attempts=3, worker="w1", heartbeat_at=restart)
    assert recover_traces(restarted_worker="w1", started_at=restart)["failed"] == 0
    assert recover_traces(restarted_worker="w1", started_at=restart + dt.timedelta(seconds=1))["failed"] == 1
    failed = Trace.objects.get(pk=stuck.pk)
    assert failed.status == "failed" and "stopped 3 times" in failed.error


def test_small_traces_keep_their_records_and_edges(captured, analyst):
    source = CapturePoint.objects.get(application__app_id=captured.app_id, capture_id__endswith="0001-input-textFile")
    trace = _run(_ask(captured, analyst, direction="forward", selection={"ids": [0]},
                           capture_point=source.capture_id).pk)
    assert trace.status == "succeeded", trace.error
    records = trace.graph["records"]
    assert records is not None and records["edges"]
    ids = {(n["capture_id"], n["record_id"]) for n in records["nodes"]}
    assert all(tuple(e["source"]) in ids and tuple(e["target"]) in ids for e in records["edges"])
    start = next(n for n in records["nodes"] if n["capture_id"].endswith("0001-input-textFile"))
    assert start["record_id"] == 0 and start["value"] is None  # values of the result's records only
    outputs = [n for n in records["nodes"] if n["capture_id"] in trace.summary["result_points"]]
    assert outputs and all(n["value"] is not None for n in outputs)


def test_deleting_the_application_deletes_its_traces_and_their_result_files(captured, analyst, settings, tmp_path):
    from capture_agent.record.storage.fs import StoreFS
    from lineage_server.catalog.models import Application
    from lineage_server.catalog.services import delete_application

    settings.LINEAGE = {**settings.LINEAGE, "STORE": str(tmp_path / "job" / "store")}
    done = _run(_ask(captured, analyst, direction="backward", selection={"ids": [0]}).pk)
    store = StoreFS.resolve(done.result_location)
    assert done.status == "succeeded" and store.exists(store.root)
    delete_application(Application.objects.get(app_id=captured.app_id), by="test")
    assert not Trace.objects.exists() and not store.exists(store.root)


def test_a_catastrophic_regex_trace_finishes_at_once_and_a_non_linear_one_is_refused(captured, analyst, client_as):
    """The issue's pattern, forward from the job's input lines: Python's re took minutes on one
    line; RE2 answers in linear time. A pattern RE2 cannot run in linear time is a 400 naming the field."""
    text_point = CapturePoint.objects.get(application__app_id=captured.app_id,
                                          capture_id__endswith="0001-input-textFile").capture_id
    trace = _ask(captured, analyst, direction="forward", capture_point=text_point,
                 selection={"predicate": {"op": "regex", "value": r"^(\w+\s?)*$x"}})
    started = dt.datetime.now()
    done = _run(trace.pk)
    assert (dt.datetime.now() - started).total_seconds() < 120
    assert done.status == "succeeded", done.error
    assert done.result_count == 0

    client = client_as("andy", "analyst")
    for pattern in (r"(\w+) \1", r"(?<=disk)s"):
        asked = client.post("/api/v1/traces/", {
            "application": captured.app_id, "direction": "forward", "capture_point": text_point,
            "selection": {"predicate": {"op": "regex", "value": pattern}}}, format="json")
        assert asked.status_code == 400, asked.json()
        assert "RE2" in asked.json()["selection"][0] and "predicate.value" in asked.json()["selection"][0]


def test_pages_read_their_records_values_from_the_sources_and_say_when_they_cannot(captured, analyst, client_as,
                                                                                     settings):
    """A trace's answer over LINEAGE_TRACE_KEEP_VALUES_UP_TO records keeps values for its first
    page; each other page's records are read from the input files when that page is asked (the
    answer's own oracle: the lines holding the words), after a restart too; a changed input file or
    a deleted run folder is a 410 that says so."""
    from lineage_server.tracing.selectors import trace_values

    settings.LINEAGE = {**settings.LINEAGE, "TRACE_KEEP_VALUES_UP_TO": 100}
    done = _run(_ask(captured, analyst, direction="backward",
                     selection={"predicate": {"field": 0, "op": "equals", "value": "incident"}}).pk)
    assert done.status == "succeeded", done.error
    expected = sorted(captured.lines_with(captured.words_of("incident")) + captured.topic_lines_of("incident"))
    assert done.result_count == len(expected) > 100
    client = client_as("vera", "viewer")
    url = f"/api/v1/traces/{done.pk}/records/"

    def pages() -> list[dict[str, Any]]:
        records, page = [], 1
        while True:
            answer = client.get(url, {"page": page, "page_size": 40})
            assert answer.status_code == 200, answer.json()
            records += answer.json()["results"]
            if answer.json()["next"] is None:
                return records
            page += 1

    records = pages()
    assert sorted(r["value"] for r in records) == expected
    assert records[:50] == done.summary["first_page"]
    lines = [json.loads(line) for line in b"".join(client.get(f"{url[:-8]}download/jsonl/").streaming_content)
             .decode().splitlines()]
    assert lines == records
    trace_values._opened.clear()  # a restarted server opens the run again
    assert pages() == records

    with captured.text.open("a") as out:
        out.write("disk disk\n")
    line = next(i for i, r in enumerate(records) if i >= 50 and r["file"].endswith("events.txt"))
    changed = client.get(url, {"page": line // 40 + 1, "page_size": 40})
    assert changed.status_code == 410 and "changed since lineage was captured" in changed.json()["detail"]
    assert client.get(url, {"page": 1, "page_size": 40}).status_code == 200  # its values are in the answer
    assert client.get(f"{url[:-8]}download/csv/").status_code == 410
    point = CapturePoint.objects.filter(application__app_id=captured.app_id).first()
    shutil.rmtree(point.location.rsplit("/", 1)[0])
    gone = client.get(url, {"page": 3, "page_size": 40})
    assert gone.status_code == 410 and "no longer in the lineage store" in gone.json()["detail"]


def test_an_answer_within_the_bound_keeps_its_values_when_the_input_changes(captured, analyst, client_as):
    """An answer of at most LINEAGE_TRACE_KEEP_VALUES_UP_TO records (the default 5,000) holds every
    value: its pages do not read the input files, and stay whole after one is overwritten."""
    done = _run(_ask(captured, analyst, direction="backward",
                     selection={"predicate": {"field": 0, "op": "equals", "value": "incident"}}).pk)
    assert done.status == "succeeded", done.error
    expected = sorted(captured.lines_with(captured.words_of("incident")) + captured.topic_lines_of("incident"))
    assert done.result_count == len(expected) and 50 < len(expected) <= 5000
    with captured.text.open("a") as out:
        out.write("disk disk\n")
    client = client_as("vera", "viewer")
    answer = client.get(f"/api/v1/traces/{done.pk}/records/", {"page": 1, "page_size": 500})
    assert answer.status_code == 200, answer.json()
    assert sorted(r["value"] for r in answer.json()["results"]) == expected
