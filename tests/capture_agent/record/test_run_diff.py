"""Diff of two runs of one job (``query.diff``) against oracles computed from the input lines: a
word/topic job (flatMap, reduceByKey, join, reduceByKey) and a DataFrame job (filter, join,
groupBy with sum and count) run twice on inputs differing by known added, removed and edited records."""

from __future__ import annotations

from collections import Counter
from operator import add
from pathlib import Path
from typing import Any

import pytest

from capture_agent.record import LineageContext, LineageRun
from capture_agent.record.query.diff import NotSameJob, RunDiff, side_by_side
from tests.lineage_server.tracing.captured import TOPICS, input_lines, lineage_of, topic_totals

pytestmark = pytest.mark.spark


def changed_lines(lines: list[str]) -> list[str]:
    """The second run's input: lines 5-9 removed, 20-24 edited (a word added), six lines added."""
    edited = [line + " error" if 20 <= i < 25 else line for i, line in enumerate(lines)]
    kept = [line for i, line in enumerate(edited) if not 5 <= i < 10]
    return kept + ["disk disk cache", "timeout", "auth ok", "retry retry retry", "warning", "disk"]


def run_words(spark: Any, folder: Path, lines: list[str], topic_lines: list[str]) -> tuple[str, str]:
    folder.mkdir(parents=True)
    text, topics = folder / "events.txt", folder / "topics.csv"
    text.write_text("".join(line + "\n" for line in lines))
    topics.write_text("".join(line + "\n" for line in topic_lines))
    lc = LineageContext(spark, store=str(folder / "store"))
    counts = lc.textFile(str(text), 3).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add, 2)
    table = lc.textFile(str(topics), 2).map(lambda line: tuple(line.split(",")))
    by_topic = counts.join(table, 2).map(lambda kv: (kv[1][1], kv[1][0])).reduceByKey(add)
    assert dict(by_topic.collect()) == topic_totals(lines)
    out = [p for p in LineageRun(lc.run_dir).outputs()][-1].capture_id
    return lc.run_dir, out


@pytest.fixture
def word_runs(spark, sc, tmp_path):
    old_lines, topic_lines = input_lines(3)
    new_lines = changed_lines(old_lines)
    old_dir, target = run_words(spark, tmp_path / "old", old_lines, topic_lines)
    new_dir, _ = run_words(spark, tmp_path / "new", new_lines, topic_lines)
    return LineageRun(old_dir, sc), LineageRun(new_dir, sc), target, old_lines, new_lines, topic_lines


def test_every_output_fate_and_explanation_equals_the_oracle(word_runs):
    old_run, new_run, target, old_lines, new_lines, topic_lines = word_runs
    diff = RunDiff(old_run, new_run, target)
    old_totals, new_totals = topic_totals(old_lines), topic_totals(new_lines)
    expected = {}
    for topic in set(old_totals) | set(new_totals):
        if topic not in old_totals:
            expected[topic] = "added"
        elif topic not in new_totals:
            expected[topic] = "removed"
        else:
            expected[topic] = "unchanged" if old_totals[topic] == new_totals[topic] else "changed"
    assert {o.key: o.fate for o in diff.outputs()} == expected
    assert set(expected.values()) >= {"changed"}
    for output in diff.outputs():
        for side, totals in ((output.old, old_totals), (output.new, new_totals)):
            assert [v for _, v in side] == ([(output.key, totals[output.key])] if output.key in totals else [])
        before = lineage_of(output.key, old_lines, topic_lines)
        after = lineage_of(output.key, new_lines, topic_lines)
        why = diff.explain(output.key)
        assert Counter(r.value for r in why.added) == after - before
        assert Counter(r.value for r in why.removed) == before - after
        assert why.common == sum((before & after).values())
        for record in why.added + why.removed:  # positions: the line read back from its file at its offset
            with open(record.source.removeprefix("file:"), "rb") as f:
                f.seek(record.offset)
                assert f.readline().decode().rstrip("\n") == record.value
        for records in (why.added, why.removed):
            where = [(r.capture_id, r.record_id) for r in records]
            assert where == sorted(where)
        if output.fate == "changed":
            check = why.check
            assert check is not None and check.holds, (output.key, check, why.why_no_check)
            added_words = sum(len([w for w in line.split() if TOPICS.get(w) == output.key]) * n
                              for line, n in (after - before).items())
            assert check.added == {"value": added_words}
            change = check.added.get("value", 0) - check.removed.get("value", 0)
            assert check.new["value"] - check.old["value"] == change
    # without a SparkContext (a shell, the local trace mode): the same explanations, the check said impossible
    plain = RunDiff(LineageRun(old_run.run_dir), LineageRun(new_run.run_dir), target)
    for output in diff.outputs():
        why, alone = diff.explain(output.key), plain.explain(output.key)
        assert (alone.added, alone.removed, alone.common) == (why.added, why.removed, why.common)
        assert alone.check is None and (output.fate == "unchanged" or "SparkContext" in alone.why_no_check)


def test_runs_of_other_jobs_are_not_compared(spark, sc, tmp_path, word_runs):
    old_run, _, target, *_ = word_runs
    lc = LineageContext(spark, store=str(tmp_path / "other"))
    lc.parallelize([1, 2, 3], 2).map(lambda x: (x, x)).collect()
    with pytest.raises(NotSameJob, match="differ"):
        RunDiff(old_run, LineageRun(lc.run_dir, sc), target)


OLD_ORDERS = [(i, f"c{i % 6}", float(i % 11)) for i in range(60)]
# order 3 removed, order 4's amount edited, every order of c5 removed, orders of a new customer c6 added
NEW_ORDERS = [(i, c, 7.5 if i == 4 else a) for i, c, a in OLD_ORDERS if i != 3 and c != "c5"] + \
    [(100, "c6", 9.0), (101, "c6", 3.0), (102, "c1", 8.0)]
CUSTOMERS = [(f"c{i}", ["jp", "fr"][i % 2]) for i in range(7)]


def frame_oracle(orders):
    out: dict[str, tuple[float, int]] = {}
    for _, customer, amount in orders:
        if amount > 2:
            total, n = out.get(customer, (0.0, 0))
            out[customer] = (total + amount, n + 1)
    return out


def run_frames(spark, folder: Path, orders):
    from pyspark.sql import functions as F

    spark.createDataFrame(orders, "order_id long, customer_id string, amount double").repartition(2) \
        .write.parquet(str(folder / "orders"))
    lc = LineageContext(spark, store=str(folder / "store"))
    customers = lc.createDataFrame(CUSTOMERS, "customer_id string, country string")
    rows = lc.read.parquet(str(folder / "orders")).where(F.col("amount") > 2).join(customers, "customer_id") \
        .groupBy("customer_id").agg(F.sum("amount").alias("total"), F.count("order_id").alias("n")).collect()
    assert {r.customer_id: (r.total, r.n) for r in rows} == frame_oracle(orders)
    return lc.run_dir, LineageRun(lc.run_dir).outputs()[-1].capture_id


def test_a_dataframe_diff_matches_groups_and_adds_up_for_sums_and_counts(spark, sc, tmp_path):
    old_dir, target = run_frames(spark, tmp_path / "old", OLD_ORDERS)
    new_dir, _ = run_frames(spark, tmp_path / "new", NEW_ORDERS)
    diff = RunDiff(LineageRun(old_dir, sc), LineageRun(new_dir, sc), target)
    before, after = frame_oracle(OLD_ORDERS), frame_oracle(NEW_ORDERS)
    fates = {o.key: o.fate for o in diff.outputs()}
    assert fates == {(c,): "added" if c not in before else "removed" if c not in after else
                     "unchanged" if before[c] == after[c] else "changed" for c in set(before) | set(after)}
    assert set(fates.values()) == {"added", "removed", "changed", "unchanged"}
    for output in diff.outputs():
        [customer] = output.key
        why = diff.explain(output.key)
        old = Counter(o for o in OLD_ORDERS if o[1] == customer and o[2] > 2)
        new = Counter(o for o in NEW_ORDERS if o[1] == customer and o[2] > 2)
        orders = [r for r in why.added + why.removed if "order_id" in r.value.asDict()]
        assert Counter(tuple(r.value) for r in orders if r in why.added) == new - old
        assert Counter(tuple(r.value) for r in orders if r in why.removed) == old - new
        # the customer's own row is in both lineages when both runs have the customer
        assert why.common == sum((old & new).values()) + (1 if old and new else 0)
        if output.fate != "unchanged":
            check = why.check
            assert check is not None and check.holds, (output.key, check, why.why_no_check)
            gained = sum(a for _, _, a in (new - old).elements()) - sum(a for _, _, a in (old - new).elements())
            assert check.new.get("total", 0) - check.old.get("total", 0) == pytest.approx(gained)
            assert check.added.get("n", 0) - check.removed.get("n", 0) == sum(new.values()) - sum(old.values())


def test_side_by_side_gives_both_answers_and_the_threads_error():
    assert side_by_side(lambda: "first", lambda: "second", False) == ("first", "second")
    with pytest.raises(ZeroDivisionError):
        side_by_side(lambda: 1 / 0, lambda: "second", False)
