"""What-if deletion against re-running the job: a Zipf word count over --files text files.

Three deletions, each timed as a what-if (``whatIfDeleted`` and its exact classes; split into
lineage propagation and rerun) and as plain PySpark re-running the word count on the remaining
input (files written without the deleted lines, outside the timing); the what-if's new output
(``unchanged + new of changed + appeared``) must equal the re-run's:
  file    one whole file (1% of the input with 100 files: a bad batch)
  scatter every 100th line of every file
  rare    the lines holding one rare word

    .venv/bin/python bench/whatif.py                       # 64 MB in 100 files
    .venv/bin/python bench/whatif.py --size-mb 1024        # the issue's 1 GB
    .venv/bin/python bench/whatif.py --reduce lambda       # an opaque reduce function
    .venv/bin/python bench/whatif.py --then histogram      # a second aggregation after the count
    .venv/bin/python bench/whatif.py --then groups         # the words grouped by their count
    .venv/bin/python bench/whatif.py --then join           # joined with a word -> topic table, summed per topic
    .venv/bin/python bench/whatif.py --then topic-groups   # joined so, grouped per topic: words and top count

The word count reduces with ``operator.add`` (a what-if subtracts what the deleted lines counted,
``query/selective.py``) or, ``--reduce lambda``, an opaque function (the input partitions holding
deleted lines are counted again and merged with the map-side aggregates the others kept).
``--then histogram`` adds a stage after the count (how many words occur n times: the counts
counted again); ``--then groups`` groups the words by their count (a changed count moves a word
to another group); ``--then join`` joins the counts with a table giving each word of the
vocabulary one of 50 topics and sums them per topic; ``--then topic-groups`` groups the joined
counts per topic instead (groupByKey, then how many words and the highest count: no sum). After
the count the what-if replays each later stage on the keys the deletion touches only
(``query/delta.py``); in the same run, the replay of those stages on all keys from the count's
kept aggregates (what a what-if did before, and does where delta replay does not apply) is timed
too, and its output checked equal to the re-run's.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from operator import add
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

from record_capture import generate_text, zipf_vocabulary  # noqa: E402 - after the path set-up above


def split_files(folder: str, size_mb: float, files: int, seed: int) -> str:
    """``files`` Zipf text files of ``size_mb / files`` MB each under ``folder/whatif-...``."""
    out = os.path.join(folder, f"whatif-{size_mb:g}mb-{files}")
    if not os.path.isdir(out):
        vocabulary, cumulative = zipf_vocabulary(8000, seed)
        tmp = out + ".tmp"
        os.makedirs(tmp, exist_ok=True)
        for i in range(files):
            generate_text(os.path.join(tmp, f"part-{i:04d}.txt"), size_mb / files, vocabulary, cumulative, seed + i)
        os.replace(tmp, out)
    return out


def word_count(ctx: Any, path: str) -> Any:
    return ctx.textFile(path).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add)


def then(counts: Any, name: str, topics: Any) -> Any:
    """The stages after the word count (``--then``); ``topics``: the (word, topic) table."""
    if name == "histogram":
        return counts.map(lambda kv: (kv[1], 1)).reduceByKey(add)
    if name == "groups":
        return counts.map(lambda kv: (kv[1], kv[0])).groupByKey().mapValues(lambda words: tuple(sorted(words)))
    if name == "join":
        return counts.join(topics).map(lambda kv: (kv[1][1], kv[1][0])).reduceByKey(add)
    if name == "topic-groups":
        return counts.join(topics).map(lambda kv: (kv[1][1], kv[1][0])).groupByKey().mapValues(
            lambda topic_counts: (len(topic_counts), max(topic_counts)))
    return counts


def topic_table(folder: str, seed: int) -> str:
    """A word -> topic table (50 topics) of the bench's vocabulary, beside its text files."""
    path = folder + "-topics.csv"
    if not os.path.exists(path):
        vocabulary, _ = zipf_vocabulary(8000, seed)
        with open(path + ".tmp", "w", encoding="utf-8") as out:
            out.writelines(f"{word},topic{n % 50}\n" for n, word in enumerate(vocabulary))
        os.replace(path + ".tmp", path)
    return path


def topics_of(ctx: Any, path: str) -> Any:
    return ctx.textFile(path, 2).map(lambda line: tuple(line.split(",")))


def timed_replays(lc: Any, sc: Any, impact: Any, deleted: Any) -> tuple[float, float, list[Any], dict[str, Any]]:
    """Seconds of the what-if's replay alone (the kept job replayed from aggregates: on the touched
    keys only where it can, given the fates lineage decided) and of the same stages replayed on
    all keys from the count's kept aggregates, the latter's output, and how the former ran
    (``StoredJob.report``)."""
    from capture_agent.record.query.replay_strategies import FROM_KEPT, FromAggregates, Replay
    from capture_agent.record.query.stored_job import StoredJob

    job = StoredJob(lc.store, sc, lc.kept.document())
    job.values = lc.lineage_session.values  # the deleted lines, read back
    target = impact.target
    dead = {cid: f.deleted for cid, f in impact.fates.items() if f.deleted}
    started = time.perf_counter()
    job.replayed(Replay(target, deleted, dead.get(target), dead, job=job), FROM_KEPT)
    restricted = time.perf_counter() - started
    report = job.report()
    started = time.perf_counter()
    all_keys = FromAggregates().rows(Replay(target, deleted, job=job))
    assert all_keys is not None, "no combine kept its aggregates"
    return restricted, time.perf_counter() - started, all_keys, report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=float, default=64.0)
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--data-dir", default=os.path.join(ROOT, "var", "bench"))
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--reduce", choices=["add", "lambda"], default="add")
    parser.add_argument("--then", choices=["none", "histogram", "groups", "join", "topic-groups"], default="none")
    args = parser.parse_args()
    func = add if args.reduce == "add" else (lambda a, b: a + b)

    from pyspark.sql import SparkSession

    from capture_agent.record import LineageContext, LineageRDD

    folder = split_files(args.data_dir, args.size_mb, args.files, args.seed)
    spark = (SparkSession.builder.master(args.master).appName("whatif-bench").config("spark.ui.enabled", "false")
             .config("spark.driver.memory", "6g").getOrCreate())
    sc = spark.sparkContext
    sc.setLogLevel("ERROR")
    store = tempfile.mkdtemp(prefix="whatif-bench-")
    scratch = tempfile.mkdtemp(prefix="whatif-remaining-")
    try:
        lc = LineageContext(sc, store=store)
        lines = lc.textFile(folder)
        topics = topic_table(folder, args.seed)
        counts = then(lines.flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(func), args.then,
                      topics_of(lc, topics))
        started = time.perf_counter()
        counts.collect()
        print(f"captured word count ({args.reduce}, then {args.then}) of {args.size_mb:g} MB in {args.files} files: "
              f"{time.perf_counter() - started:.2f}s")
        lin = lines.getLineage()
        point = lin.points()[0]
        word_lines = Counter(w for line in open(os.path.join(folder, "part-0000.txt"), encoding="utf-8")
                             for w in set(line.split()))
        rare = min(word_lines, key=lambda w: (word_lines[w], w))
        first = sorted(os.listdir(folder))[0]

        def whole_file() -> Any:
            ids = [i for i, (path, _) in zip(lin.ids(), lin.positions(), strict=True) if path.endswith("/" + first)]
            return LineageRDD.at_point(lc.lineage_session, point, ids)

        selections: dict[str, tuple[Any, Any]] = {
            "file": (whole_file, lambda name, n, line: name == first),
            # a file under the split size is one split: an id's low bits are its line in the file
            "scatter": (lambda: LineageRDD.at_point(lc.lineage_session, point,
                                                    [i for i in lin.ids() if (i & 0xFFFFFFFF) % 100 == 0]),
                        lambda name, n, line: n % 100 == 0),
            "rare": (lambda: lin.filter(lambda line: rare in line.split()), lambda name, n, line: rare in line.split()),
        }
        for name, (select, doomed) in selections.items():
            chosen = select()
            deleted_ids = set(chosen.ids())
            started = time.perf_counter()
            impact = chosen.whatIfDeleted()
            propagated = time.perf_counter()
            new = impact.unchanged() + [n for _, n in impact.changed()] + impact.appeared()
            done = time.perf_counter()
            # the remaining input, written outside the timing
            remaining = os.path.join(scratch, name)
            shutil.rmtree(remaining, ignore_errors=True)
            os.makedirs(remaining)
            for f in sorted(os.listdir(folder)):
                with open(os.path.join(folder, f), encoding="utf-8") as src, \
                        open(os.path.join(remaining, f), "w", encoding="utf-8") as out:
                    out.writelines(line for n, line in enumerate(src) if not doomed(f, n, line.rstrip("\n")))
            started_rerun = time.perf_counter()
            rerun = then(word_count(sc, remaining), args.then, topics_of(sc, topics)).collect()
            rerun_time = time.perf_counter() - started_rerun
            assert Counter(new) == Counter(rerun), f"{name}: the what-if's new output differs from the re-run"
            total = done - started
            lineage_s, replay_s = propagated - started, done - propagated
            print(f"== {name}: {len(deleted_ids)} lines deleted; what-if {total:.2f}s (lineage {lineage_s:.2f}s,"
                  f" replay and matching {replay_s:.2f}s) vs re-run {rerun_time:.2f}s,"
                  f" re-run / what-if {rerun_time / total:.2f}; deleted {len(impact.deleted())},"
                  f" changed {len(impact.changed())}, unchanged {len(impact.unchanged())},"
                  f" appeared {len(impact.appeared())}")
            if args.then != "none":  # the what-if's replay alone, and the same stages on all keys
                touched_s, all_s, all_keys, report = timed_replays(lc, sc, impact, chosen.frontier())
                assert Counter(all_keys) == Counter(rerun), f"{name}: the all-keys replay differs from the re-run"
                print(f"   {name} replays: {report['how']!r} {touched_s:.2f}s vs all keys {all_s:.2f}s"
                      f" (all keys / touched keys {all_s / touched_s:.2f}, re-run / touched keys"
                      f" {rerun_time / touched_s:.2f}); keys replayed {report['keys_replayed']},"
                      f" stages in full {report['stages_in_full']}, paths {report['stage_paths']}")
    finally:
        shutil.rmtree(store, ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)
        spark.stop()


if __name__ == "__main__":
    main()
