"""Unmodified RDD jobs captured by configuration (``capture.implicit_rdd``): the SparkContext's
sources and a DataFrame's ``.rdd`` give captured RDDs whose answers are plain PySpark's and whose
traces both ways equal oracles computed from the data; what the capture does not take runs plain
and is reported by name."""

from __future__ import annotations

from collections.abc import Iterator
from operator import add
from pathlib import Path
from typing import Any

import pytest

from tests.capture_agent.record.test_dataframes import ORDERS
from tests.capture_agent.record.test_implicit_capture import output, records, source  # noqa: F401

pytestmark = pytest.mark.spark

LINES = ["to be or not", "to see", "not to be seen", "be quick", "seen or unseen"]


@pytest.fixture
def text(tmp_path: Path) -> Iterator[str]:
    path = tmp_path / "words.txt"
    path.write_text("\n".join(LINES) + "\n")
    yield str(path)


def reported(lc: Any) -> list[str]:
    return [entry["action"] for entry in lc.store.not_captured]


def test_a_text_file_word_count_is_captured_unmodified_both_ways(records: Any, spark: Any, text: str) -> None:  # noqa: F811
    from capture_agent.record.capture.implicit_guard import uncaptured
    from capture_agent.record.capture.implicit_rdd import ImplicitRDD

    sc = spark.sparkContext
    lines = sc.textFile(text)
    assert isinstance(lines, ImplicitRDD)
    counts = lines.flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add)
    got = sorted(counts.collect())
    with uncaptured():
        assert got == sorted(sc.textFile(text).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add).collect())
    for word, n in got:
        back = output(records).filter(lambda kv, w=word: kv[0] == w).goBackAll().collect()
        assert sorted(back) == sorted(line for line in LINES if word in line.split())
        assert n == sum(line.split().count(word) for line in LINES)
    forward = source(records, "textFile").filter(lambda line: line == LINES[2]).goNextAll().collect()
    assert sorted(forward) == sorted((w, n) for w, n in got if w in LINES[2].split())
    assert reported(records) == []


def test_a_frames_rdd_continues_the_frames_lineage(records: Any, spark: Any) -> None:  # noqa: F811
    totals = spark.sql("SELECT customer_id, amount FROM orders WHERE amount > 3").rdd \
        .map(lambda r: (r.customer_id, r.amount)).reduceByKey(add)
    got = dict(totals.collect())
    assert got == {c: sum(o[2] for o in ORDERS if o[1] == c and o[2] > 3) for c in {o[1] for o in ORDERS if o[2] > 3}}
    customer = sorted(got)[0]
    back = output(records).filter(lambda kv: kv[0] == customer).goBackAll().collect()
    assert sorted(tuple(r) for r in back) == sorted(o for o in ORDERS if o[1] == customer and o[2] > 3)
    assert reported(records) == []


def test_a_frame_of_a_captured_rdd_continues_the_rdd_jobs_lineage(records: Any, spark: Any, text: str) -> None:  # noqa: F811
    """createDataFrame and toDF of a word count: the frame's query traces back through the RDD job
    to the lines, and a line forward to the frame's rows."""
    sc = spark.sparkContext
    counts = sc.textFile(text).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add)
    frame = spark.createDataFrame(counts, "word string, n long")
    common = frame.where("n > 1").orderBy("word")
    got = [tuple(r) for r in common.collect()]
    words = {w for line in LINES for w in line.split()}
    expected = sorted((w, sum(line.split().count(w) for line in LINES)) for w in words)
    assert got == [(w, n) for w, n in expected if n > 1]
    for word, _ in got:
        back = output(records).filter(lambda r, w=word: r.word == w).goBackAll().collect()
        assert sorted(back) == sorted(line for line in LINES if word in line.split())
    forward = source(records, "textFile").filter(lambda line: line == LINES[3]).goNextAll().collect()
    assert sorted(tuple(r) for r in forward) == [(w, n) for w, n in got if w in LINES[3].split()]
    # a frame of the RDD through toDF, and SQL over its view: the same lineage
    counts.toDF(["word", "n"]).createOrReplaceTempView("counts")
    assert spark.sql("SELECT sum(n) AS words FROM counts").collect()[0].words == sum(len(x.split()) for x in LINES)
    assert sorted(output(records).goBackAll().collect()) == sorted(LINES)
    assert reported(records) == []


def test_what_the_capture_does_not_take_runs_plain_and_is_reported(records: Any, spark: Any, text: str,  # noqa: F811
                                                                   tmp_path: Path) -> None:
    from capture_agent.record.capture.implicit_guard import uncaptured

    sc = spark.sparkContext
    with uncaptured():
        names = sc.parallelize([("to", "preposition"), ("be", "verb")])  # an RDD the capture did not make
    joined = sc.textFile(text).flatMap(str.split).map(lambda w: (w, 1)).join(names)
    assert sorted(joined.collect()) == sorted((w, (1, kind)) for line in LINES for w in line.split()
                                              for n, kind in [("to", "preposition"), ("be", "verb")] if w == n)
    assert "RDD.join" in reported(records)
    assert sc.wholeTextFiles(str(tmp_path)).count() == 1
    assert "SparkContext.wholeTextFiles" in reported(records)
    # a frame of a captured RDD: captured, its lineage going on into the RDD job
    frame = spark.createDataFrame(sc.parallelize([(1, "a"), (2, "b")]), "n int, s string")
    assert sorted(frame.collect()) == [(1, "a"), (2, "b")]
    assert [p.op for p in records.store.by_seq() if p.kind == "output"][-1] == "collect"
    # PySpark parallelizing local rows for createDataFrame is not the job's RDD: nothing reported
    before = len(reported(records))
    assert spark.createDataFrame([(3, "c")], "n int, s string").count() == 1
    assert len(reported(records)) == before
