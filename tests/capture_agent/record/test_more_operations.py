"""The RDD operations iterative programs use beyond the core set: takeSample, zip, histogram,
the approximate counts, checkpoint and localCheckpoint, and the pickle/sequence/Hadoop saves.
Each returns what plain PySpark returns, and its lineage is checked against an oracle computed
from the data (which lines hold the value), backward and forward."""

from __future__ import annotations

import os

import pytest

from tests.capture_agent.record.oracle import as_local, lines_with_offsets, positions_of, trace_back

pytestmark = pytest.mark.spark

# "<number> <letter>": the numbers are distinct, so each line is found again from its value
LINES = [f"{n} {'abcd'[n % 4]}" for n in (17, 3, 42, 8, 25, 11, 30, 6, 19, 2, 37, 14, 9, 28, 21, 5)]


@pytest.fixture
def numbers(write_text):
    return write_text("numbers.txt", LINES)


def parsed(ctx, path):
    return ctx.textFile(path, 3).map(lambda s: int(s.split()[0]))


def line_of(path, n):
    return positions_of(path, lambda s: int(s.split()[0]) == n)


def test_take_sample_equals_pyspark_and_each_result_traces_to_its_line(lc, sc, numbers):
    nums, plain = parsed(lc, numbers), parsed(sc, numbers)
    for with_replacement, num, seed in [(False, 5, 3), (True, 7, 11), (False, 40, 2), (True, 3, 5)]:
        sample = nums.takeSample(with_replacement, num, seed)
        assert sample == plain.takeSample(with_replacement, num, seed)
        lin = nums.getLineage()
        assert lin.collect() == sample
        for record_id, value in zip(lin.ids(), sample, strict=True):
            assert trace_back(lc.lineage(lin.points()[0], [record_id])) == line_of(numbers, value)
    assert nums.takeSample(False, 0) == []
    with pytest.raises(ValueError, match="negative"):
        nums.takeSample(False, -1)


def test_take_sample_forward_reaches_the_results_holding_the_line(lc, numbers):
    nums = parsed(lc, numbers)
    sample = nums.takeSample(True, 30, 7)  # with replacement: a line may be drawn several times
    lin = nums.getLineage()
    picked = sample[0]
    source = lin.filter(lambda v: v == picked).goBackAll()
    reached = source.goNextAll()
    assert sorted(reached.collect()) == [picked] * sample.count(picked)


def test_zip_pairs_the_records_of_both_sides(lc, sc, numbers):
    nums = parsed(lc, numbers)
    zipped = nums.zip(nums.map(lambda n: n * 10))
    plain = parsed(sc, numbers)
    assert zipped.collect() == plain.zip(plain.map(lambda n: n * 10)).collect()
    lin = zipped.getLineage()
    assert trace_back(lin.filter(lambda p: p[0] == 42)) == line_of(numbers, 42)
    # forward from one line: the one pair made from it
    only = lin.goBackAll().filter(lambda line: line.startswith("25 "))
    assert only.goNextAll().collect() == [(25, 250)]


def test_zip_of_two_inputs_and_its_errors(lc, sc):
    numbers = list(range(100, 116))
    words = [f"w{n}" for n in numbers]
    pairs = lc.parallelize(numbers, 4).zip(lc.parallelize(words, 4).map(str.upper))
    assert pairs.collect() == sc.parallelize(numbers, 4).zip(sc.parallelize(words, 4).map(str.upper)).collect()
    lin = pairs.getLineage()
    for n in (100, 107, 115):
        back = lin.filter(lambda p, n=n: p[0] == n).goBackAll()
        assert sorted(map(str, back.collect())) == sorted([str(n), f"w{n}"])
    ahead = lc.lineage(lin.goBackAll().points()[1]).filter(lambda w: w == "w109").goNextAll()
    assert ahead.collect() == [(109, "W109")]
    with pytest.raises(ValueError, match="same number of partitions"):
        lc.parallelize(numbers, 4).zip(lc.parallelize(words, 2))


def test_histogram_equals_pyspark_and_each_bucket_traces_to_its_lines(lc, sc, numbers):
    nums, plain = parsed(lc, numbers), parsed(sc, numbers)
    for buckets in (4, [0, 10, 20, 50], [0, 15, 30, 45], 1):
        result = nums.histogram(buckets)
        assert result == plain.histogram(buckets), buckets
        bounds, counts = result
        lin = nums.getLineage()
        assert lin.collect() == counts
        assert len(lin.ids()) == len(counts)
        for i, record_id in enumerate(lin.ids()):
            low, high = bounds[i], bounds[i + 1]
            last = i == len(counts) - 1

            def inside(s, low=low, high=high, last=last):
                n = int(s.split()[0])
                return low <= n < high or (last and n == high)

            assert trace_back(lc.lineage(lin.points()[0], [record_id])) == positions_of(numbers, inside), (buckets, i)
    # a value outside every bucket reaches no count
    nums.histogram([10, 20])
    outside = nums.getLineage().goBackAll()
    assert not outside.filter(lambda line: line.startswith("42 ")).collect()


def test_histogram_skips_none_and_nan_and_refuses_bad_buckets(lc, sc):
    values = [1.0, None, float("nan"), 2.5, 4.0, 4.0]
    data = lc.parallelize(values, 2)
    assert data.histogram(3) == sc.parallelize(values, 2).histogram(3)
    with pytest.raises(ValueError, match="sorted"):
        data.histogram([3, 1])
    with pytest.raises(ValueError, match="empty"):
        lc.parallelize([], 2).histogram(2)


def test_approximate_counts_trace_to_every_record(lc, sc, numbers):
    nums, plain = parsed(lc, numbers), parsed(sc, numbers)
    every = positions_of(numbers, lambda s: True)
    assert nums.countApprox(60_000, 1.0) == plain.countApprox(60_000, 1.0) == len(LINES)
    assert trace_back(nums.getLineage()) == every
    assert nums.countApproxDistinct() == plain.countApproxDistinct()
    assert trace_back(nums.getLineage()) == every
    big = nums.filter(lambda n: n > 20)
    assert float(big.sumApprox(60_000, 1.0)) == float(plain.filter(lambda n: n > 20).sumApprox(60_000, 1.0))
    assert trace_back(big.getLineage()) == positions_of(numbers, lambda s: int(s.split()[0]) > 20)
    assert float(big.meanApprox(60_000, 1.0)) == pytest.approx(float(plain.filter(lambda n: n > 20).mean()))


@pytest.mark.parametrize("how", ["checkpoint", "localCheckpoint"])
def test_checkpointed_rdds_keep_their_lineage(lc, sc, numbers, tmp_path, how):
    sc.setCheckpointDir(str(tmp_path / "checkpoints"))
    doubled = parsed(lc, numbers).map(lambda n: n * 2)
    getattr(doubled, how)()
    assert not doubled.isCheckpointed()
    evens = doubled.filter(lambda n: n % 4 == 0)
    assert sorted(evens.collect()) == sorted(n * 2 for n in parsed(sc, numbers).collect() if n % 2 == 0)
    if how == "checkpoint":  # saved by the job; as PySpark, a local checkpoint is only marked
        assert doubled.isCheckpointed() and doubled.getCheckpointFile()
        assert os.listdir(tmp_path / "checkpoints")
    else:
        assert doubled.isLocallyCheckpointed()
    # a second job reads the checkpoint; lineage still reaches the lines
    assert doubled.count() == len(LINES)
    lin = evens.getLineage().filter(lambda n: n == 84)
    assert trace_back(lin) == line_of(numbers, 42)
    assert trace_back(doubled.getLineage()) == positions_of(numbers, lambda s: True)


def test_checkpoint_without_a_directory_says_so(lc, sc):
    from capture_agent.record import UnsupportedOperation

    context = sc._jsc.sc()
    before = context.getCheckpointDir()
    getattr(context, "checkpointDir_$eq")(sc._jvm.scala.Option.empty())  # the shared session may have one
    try:
        with pytest.raises(UnsupportedOperation, match="checkpoint directory"):
            lc.parallelize([1, 2]).checkpoint()
    finally:
        getattr(context, "checkpointDir_$eq")(before)


def test_pickle_and_sequence_files_hold_the_records_and_trace_back(lc, sc, numbers, tmp_path):
    nums = parsed(lc, numbers)
    out = str(tmp_path / "pickled")
    big = nums.filter(lambda n: n > 10)
    big.saveAsPickleFile(out, 3)
    assert sorted(sc.pickleFile(out).collect()) == sorted(n for n in parsed(sc, numbers).collect() if n > 10)
    lin = big.getLineage()
    assert trace_back(lin) == positions_of(numbers, lambda s: int(s.split()[0]) > 10)
    # output (part file p, record k): part file p's k-th record, read back, is the traced line's number
    line_at = dict(lines_with_offsets(numbers))
    for record_id in lin.ids():
        part, k = record_id >> 32, record_id & 0xFFFFFFFF
        [(_, offset)] = as_local(lc.lineage(lin.points()[0], [record_id]).goBackAll().positions())
        assert sc.pickleFile(os.path.join(out, f"part-{part:05d}")).collect()[k] == int(line_at[offset].split()[0])

    pairs = nums.map(lambda n: (n % 4, n))
    pairs.saveAsSequenceFile(str(tmp_path / "seq"))
    assert sorted(sc.sequenceFile(str(tmp_path / "seq")).collect()) == sorted(
        (n % 4, n) for n in parsed(sc, numbers).collect())
    assert trace_back(pairs.getLineage()) == positions_of(numbers, lambda s: True)


def test_k_means_from_sampled_centres_runs_captured_and_traces_each_cluster(lc, sc, write_text):
    """The iterative program that stopped at takeSample: k-means on 2-D points, as PySpark's
    example writes it, captured; each final cluster's size traces back to exactly the lines of
    the points nearest its centre (the oracle computes the assignment from the data)."""
    import random

    rng = random.Random(4)
    points = [(rng.gauss(cx, 0.5), rng.gauss(cy, 0.5)) for cx, cy in [(0, 0), (5, 5), (0, 6)] for _ in range(30)]
    path = write_text("points.txt", [f"{x:.4f} {y:.4f}" for x, y in points])

    def closest(p, centres):
        return min(range(len(centres)), key=lambda i: (p[0] - centres[i][0]) ** 2 + (p[1] - centres[i][1]) ** 2)

    def k_means(ctx):
        data = ctx.textFile(path, 3).map(lambda s: tuple(float(x) for x in s.split())).cache()
        centres = data.takeSample(False, 3, 42)
        for _ in range(5):
            sums = data.map(lambda p, c=list(centres): (closest(p, c), (p[0], p[1], 1))).reduceByKey(
                lambda a, b: (a[0] + b[0], a[1] + b[1], a[2] + b[2]))
            moved = sums.mapValues(lambda s: (s[0] / s[2], s[1] / s[2])).collectAsMap()
            centres = [moved.get(i, centres[i]) for i in range(3)]
        sizes = data.map(lambda p, c=list(centres): (closest(p, c), 1)).reduceByKey(lambda a, b: a + b)
        return centres, sizes

    plain_centres, plain_sizes = k_means(sc)
    centres, sizes = k_means(lc)
    assert centres == plain_centres
    assert sorted(sizes.collect()) == sorted(plain_sizes.collect())
    lin = sizes.getLineage()
    for cluster in range(3):
        def member(line, cluster=cluster):
            return closest(tuple(float(x) for x in line.split()), centres) == cluster

        assert trace_back(lin.filter(lambda kv, c=cluster: kv[0] == c)) == positions_of(path, member)
