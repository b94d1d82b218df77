"""Word count and grep: traces in both directions equal oracles computed from the file's bytes."""

from __future__ import annotations

from operator import add

import pytest

from tests.capture_agent.record.oracle import as_local, lines_with_offsets, local_positions, positions_of, trace_back

pytestmark = pytest.mark.spark

TEXT = [
    "the quick brown fox",
    "jumps over the lazy dog",
    "",
    "error disk full",
    "the the the",
    "warning low memory error",
    "ok",
    "dog eats fox",
    "error error",
    "",
    "last line the",
]


@pytest.fixture
def text(write_text):
    return write_text("words.txt", TEXT)


def word_count(lc, path, partitions=3):
    return lc.textFile(path, partitions).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add)


def test_word_count_returns_pyspark_results(lc, sc, text):
    captured = word_count(lc, text).collect()
    plain = sc.textFile(text, 3).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add).collect()
    assert captured == plain


def test_backward_lineage_of_each_word_is_exactly_the_lines_containing_it(lc, text):
    counts = word_count(lc, text)
    result = dict(counts.collect())
    lin = counts.getLineage()
    for word in result:
        traced = lin.filter(lambda kv, w=word: kv[0] == w)
        assert trace_back(traced) == positions_of(text, lambda line, w=word: w in line.split()), word


def test_backward_trace_returns_the_raw_lines(lc, text):
    counts = word_count(lc, text)
    counts.collect()
    src = counts.getLineage().filter(lambda kv: kv[0] == "error").goBackAll()
    assert src.collect() == ["error disk full", "warning low memory error", "error error"]
    assert src.count() == 3


def test_forward_lineage_of_each_line_is_exactly_its_words(lc, text):
    counts = word_count(lc, text)
    result = dict(counts.collect())
    src = counts.getLineage().goBackAll()
    by_position = dict(zip(local_positions(src.positions()), src.ids(), strict=True))
    assert len(by_position) == sum(1 for _, line in lines_with_offsets(text) if line.split())
    for (_, offset), record_id in by_position.items():
        line = dict(lines_with_offsets(text))[offset]
        forward = lc.lineage(src.points()[0], [record_id]).goNextAll()
        # the output records reached are the (word, count) pairs of the words on that line
        outputs = [rec for rec in forward.collect() if isinstance(rec, tuple)]
        assert sorted(outputs) == sorted((w, result[w]) for w in set(line.split())), line


def test_forward_from_a_selected_input_via_filter(lc, text):
    counts = word_count(lc, text)
    counts.collect()
    src = counts.getLineage().goBackAll()
    chosen = src.filter(lambda line: line.startswith("dog"))
    assert chosen.collect() == ["dog eats fox"]
    assert sorted(chosen.goNextAll().collect()) == [("dog", 2), ("eats", 1), ("fox", 2)]


def test_one_step_back_and_forward_walk_the_capture_points(lc, text):
    counts = word_count(lc, text)
    counts.collect()
    lin = counts.getLineage().filter(lambda kv: kv[0] == "fox")
    kinds = []
    step = lin
    for _ in range(4):
        kinds.append([lc.store.point(c).kind for c in step.points()])
        step = step.goBack()
    assert kinds == [["output"], ["reducer"], ["combiner"], ["input"]]
    assert step.points() == lin.goBackAll().points()  # inputs stay put
    combiner = lin.goBack().goBack()
    # two map partitions hold "fox": one combiner record each, with the partial counts
    assert sorted(combiner.collect()) == [("fox", 1), ("fox", 1)]
    assert combiner.goNext().goNext().collect() == [("fox", 2)]


def test_ids_encode_split_and_line_number_and_positions_give_the_byte_offset(lc, text):
    counts = word_count(lc, text)
    counts.collect()
    src = counts.getLineage().filter(lambda kv: kv[0] == "ok").goBackAll()
    [record_id] = src.ids()
    [(path, offset)] = as_local(src.positions())
    point = lc.store.point(src.points()[0])
    split, line_number = record_id >> 32, record_id & 0xFFFFFFFF
    _, start, _ = point.layout.splits[split]
    in_split = [off for off, _ in lines_with_offsets(text) if off >= start and (split == 0 or off > start)]
    assert in_split[line_number] == offset
    assert dict(lines_with_offsets(text))[offset] == "ok"


def test_grep_returns_pyspark_results_and_each_match_traces_to_its_line(lc, sc, text):
    grep = lc.textFile(text, 3).filter(lambda line: "error" in line)
    assert grep.collect() == sc.textFile(text, 3).filter(lambda line: "error" in line).collect()
    lin = grep.getLineage()
    for line in grep.collect():
        traced = lin.filter(lambda v, x=line: v == x)
        assert trace_back(traced) == positions_of(text, lambda s, x=line: s == x)
    # forward from the matching lines reaches exactly the matches
    assert sorted(lin.goBackAll().goNextAll().collect()) == sorted(grep.collect())


def test_grep_count_lineage_is_the_matching_lines(lc, text):
    grep = lc.textFile(text, 2).filter(lambda line: "the" in line.split())
    assert grep.count() == 4
    lin = grep.getLineage()
    assert lin.collect() == [4]
    assert trace_back(lin) == positions_of(text, lambda s: "the" in s.split())


def test_take_and_first_trace_to_the_records_returned(lc, sc, text):
    words = lc.textFile(text, 3).flatMap(str.split)
    taken = words.take(5)
    assert taken == sc.textFile(text, 3).flatMap(str.split).take(5)
    lin = words.getLineage()
    assert lin.count() == 5
    assert lin.collect() == taken
    assert trace_back(lin) == positions_of(text, lambda s: s in ("the quick brown fox", "jumps over the lazy dog"))
    assert words.first() == "the"
    assert trace_back(words.getLineage()) == positions_of(text, lambda s: s == "the quick brown fox")


def test_selective_replay_on_traced_input_lines(lc, sc, text):
    """Titian's replay: trace back, drop some inputs, rerun the computation on the rest."""
    counts = word_count(lc, text)
    counts.collect()
    src = counts.getLineage().filter(lambda kv: kv[0] == "the").goBackAll()
    assert src.map(len).collect() == [len(s) for s in src.collect()]
    replayed = (src.filter(lambda line: "error" not in line).flatMap(str.split).map(lambda w: (w, 1))
                .reduceByKey(add).collectAsMap())
    lines = [s for s in TEXT if "the" in s.split() and "error" not in s]
    expected: dict[str, int] = {}
    for word in " ".join(lines).split():
        expected[word] = expected.get(word, 0) + 1
    assert replayed == expected
    assert src.rdd().getNumPartitions() == len({i >> 32 for i in src.ids()})


def test_the_public_api_of_the_issue(spark, tmp_path, text):
    """The example of the specification, through ``from capture_agent import LineageContext``."""
    from capture_agent import LineageContext, LineageRDD

    lc = LineageContext(spark, store=str(tmp_path / "store"))
    lines = lc.textFile(text)
    counts = lines.flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add)
    assert sorted(counts.collect()) == sorted(spark.sparkContext.textFile(text).flatMap(str.split)
                                              .map(lambda w: (w, 1)).reduceByKey(add).collect())
    lin = counts.getLineage()
    assert isinstance(lin, LineageRDD)
    sel = lin.filter(lambda kv: kv[0] == "error")
    src = sel.goBackAll()
    assert src.collect() == ["error disk full", "warning low memory error", "error error"]
    assert sel.goBack().count() == 1 and src.goNext().count() > 0
    assert src.goNextAll().filter(lambda kv: kv[0] == "error").collect() == [("error", 4)]
    assert src.filter(lambda s: "disk" in s).map(str.upper).collect() == ["ERROR DISK FULL"]


def test_take_then_collect_completes_the_partial_input_table(lc, text):
    lines = lc.textFile(text, 2)
    assert lines.take(2) == ["the quick brown fox", "jumps over the lazy dog"]
    assert lines.getLineage().goBackAll().collect() == ["the quick brown fox", "jumps over the lazy dog"]
    everything = lines.collect()
    assert everything == TEXT
    assert lines.getLineage().goBackAll().collect() == TEXT
    assert sorted(trace_back(lines.getLineage())) == sorted(positions_of(text, lambda s: True))
