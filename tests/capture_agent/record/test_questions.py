"""Traces asked as data (as the server's worker asks them), on a finished run opened from its folder,
against oracles computed from the input files themselves."""

from __future__ import annotations

import random
from operator import add

import pytest

from capture_agent.record import LineageRun
from capture_agent.record.query.questions import TraceCancelled, select, walk
from capture_agent.record.query.results import iter_records, read_frontier, read_page, session_values, write_result

pytestmark = pytest.mark.spark

WORDS = ["error", "warn", "info", "debug", "timeout", "retry", "ok"]


@pytest.fixture
def word_lines(write_text):
    rng = random.Random(7)
    lines = [" ".join(rng.choices(WORDS, k=rng.randint(1, 5))) for _ in range(300)]
    return write_text("words.txt", lines), lines


def _lines_with(lines, word):
    return sorted(line for line in lines if word in line.split())


def test_backward_from_output_records_chosen_by_predicate_reaches_the_lines_holding_the_word(lc, word_lines):
    path, lines = word_lines
    counts = lc.textFile(path, 3).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add, 2)
    result = dict(counts.collect())
    run = LineageRun(lc.run_dir)
    output = run.outputs()[-1].capture_id
    for word in ("error", "timeout"):
        start = select(run.session, output, predicate={"field": 0, "op": "equals", "value": word})
        assert len(start[output]) == 1
        seen: list[tuple[int, int, int]] = []
        answer = walk(run.session, start, "backward", "end", progress=lambda *p, seen=seen: seen.append(p))
        [(point, ids)] = answer.result.items()
        assert run.store.point(point).kind == "input"
        assert sorted(v for _, v in run.session.values.values(run.store.point(point), ids)) == _lines_with(lines, word)
        assert seen[-1][0] == seen[-1][1] == len(answer.visited)  # every point it planned was walked
        assert seen[-1][2] == len(ids)
        assert answer.crossed[output] == start[output]
        assert result[word] == sum(line.split().count(word) for line in lines)


def test_forward_from_input_lines_reaches_exactly_their_words_counts(lc, word_lines):
    path, lines = word_lines
    counts = lc.textFile(path, 3).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add, 2)
    counts.collect()
    run = LineageRun(lc.run_dir)
    source = next(p for p in run.capture_points() if p.kind == "input").capture_id
    start = select(run.session, source, predicate={"op": "contains", "value": "retry"})
    assert sorted(v for _, v in run.session.values.values(run.store.point(source), start[source])) == sorted(
        line for line in lines if "retry" in line
    )
    answer = walk(run.session, start, "forward", "end")
    [(point, ids)] = answer.result.items()
    words = {w for line in lines if "retry" in line for w in line.split()}
    assert {v[0] for _, v in run.session.values.values(run.store.point(point), ids)} == words


def test_one_step_and_a_named_point_stop_where_asked(lc, word_lines):
    path, lines = word_lines
    counts = lc.textFile(path, 2).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add, 2)
    counts.collect()
    run = LineageRun(lc.run_dir)
    points = {p.kind: p.capture_id for p in run.capture_points()}
    output = run.outputs()[-1].capture_id
    start = select(run.session, output, predicate={"field": 0, "op": "equals", "value": "ok"})
    step = walk(run.session, start, "backward", "step")
    assert list(step.result) == [run.store.point(output).parents[0]]
    to_combiner = walk(run.session, start, "backward", points["combiner"])
    assert list(to_combiner.result) == [points["combiner"]]
    assert 1 <= len(to_combiner.result[points["combiner"]]) <= 2  # one combined record per map partition
    with pytest.raises(ValueError, match="not downstream"):
        walk(run.session, start, "forward", points["input"])


def test_a_join_traces_to_both_inputs_and_a_result_file_seeds_the_next_trace(lc, write_text):
    orders = [f"o{i},c{i % 13},{i * 3 % 50}" for i in range(200)]
    customers = [f"c{i},{'FR' if i % 3 else 'DE'}" for i in range(13)]
    o = lc.textFile(write_text("orders.csv", orders), 2).map(lambda row: (row.split(",")[1], int(row.split(",")[2])))
    c = lc.textFile(write_text("customers.csv", customers), 2).map(lambda row: tuple(row.split(",")))
    totals = o.join(c, 3).map(lambda kv: (kv[1][1], kv[1][0])).reduceByKey(add)
    assert dict(totals.collect())
    run = LineageRun(lc.run_dir)
    output = run.outputs()[-1].capture_id
    start = select(run.session, output, predicate={"field": 0, "op": "equals", "value": "DE"})
    answer = walk(run.session, start, "backward", "end")
    by_file = {}
    for cid, ids in answer.result.items():
        point = run.store.point(cid)
        name = run.session.values.positions(point, ids)[0].source.rsplit("/", 1)[-1]
        by_file[name] = sorted(v for _, v in run.session.values.values(point, ids))
    de = {f"c{i}" for i in range(13) if i % 3 == 0}
    assert by_file["customers.csv"] == sorted(c for c in customers if c.split(",")[0] in de)
    assert by_file["orders.csv"] == sorted(o for o in orders if o.split(",")[1] in de)

    path = f"{run.store.run_dir}/traces/t1.parquet"
    summary = write_result(run.session, answer.result, path, first_page=5)
    assert summary.count == answer.count == sum(summary.by_point.values())
    values = session_values(run.session)  # the lines' values beyond the first page are read from the files
    records = list(iter_records(run.store.fs, path, values))
    assert len(records) == summary.count and summary.first_page == records[:5]
    assert all(r["file"] and r["offset"] is not None for r in records)
    texts = {r["value"] for r in records}
    assert texts == {line for line in orders + customers if line.split(",")[1 if line.startswith("o") else 0] in de}
    total, page = read_page(run.store.fs, path, 3, 4, values=values)
    assert (total, page) == (summary.count, records[3:7])
    seed = read_frontier(run.store.fs, path)
    forward = walk(run.session, seed, "forward", "end")
    [(out, ids)] = forward.result.items()
    de_total = sum(int(x.split(",")[2]) for x in orders if x.split(",")[1] in de)
    assert [v for _, v in run.session.values.values(run.store.point(out), ids)] == [("DE", de_total)]


def test_small_traces_keep_record_edges_and_progress_can_cancel(lc, write_text):
    lines = ["a b", "b c", "c a", "d"]
    counts = lc.textFile(write_text("small.txt", lines), 2).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add)
    counts.collect()
    run = LineageRun(lc.run_dir)
    output = run.outputs()[-1].capture_id
    start = select(run.session, output, predicate={"field": 0, "op": "equals", "value": "a"})
    answer = walk(run.session, start, "backward", "end")
    assert answer.edges is not None
    source = next(iter(answer.result))
    into_input = {pid for parent, pid, _, _ in answer.edges if parent == source}
    assert into_input == set(answer.result[source])  # each traced line is an edge's end
    assert {child for _, _, child, _ in answer.edges} | {source} == set(answer.crossed)

    def cancel(done, total, found):
        if done >= 1:
            raise TraceCancelled("stop")

    with pytest.raises(TraceCancelled):
        walk(run.session, start, "backward", "end", progress=cancel)
