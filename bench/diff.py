"""Diff of two runs of a word count, beside one trace on the same runs (in one process, no server).

The Zipf text of record_capture.py (--size-mb) is the old run's input; the new run's drops every
200th line and adds --added lines. Both are captured with a LineageContext (two lineage stores,
one SparkContext), then, on the runs opened from their folders as the worker opens them:

- trace: one output word traced back to its input lines (LineageRun.lineage(...).goBackAll());
- diff, all outputs: every word's fate (``RunDiff.outputs``);
- diff, one output: that word's explanation (input lines added and removed) and additive check.

Printed: each time in seconds and the diffs' ratios to the trace. The API round trip is not in
these figures (diff_latency.py measures them through the server).

    .venv/bin/python bench/diff.py --size-mb 16
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from operator import add

from record_capture import zipf_text

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def changed_text(old_text: str, vocabulary: list[str], added: int) -> str:
    """The new run's input beside ``old_text`` (generated once): every 200th line dropped, ``added``
    lines of five frequent words appended."""
    new_text = old_text.removesuffix(".txt") + f"-diff-{added}.txt"
    if not os.path.exists(new_text):
        with open(old_text) as src, open(new_text + ".tmp", "w") as dst:
            for n, line in enumerate(src):
                if n % 200:
                    dst.write(line)
            for n in range(added):
                dst.write(" ".join(vocabulary[(n * 7 + k) % 50] for k in range(5)) + "\n")
        os.replace(new_text + ".tmp", new_text)
    return new_text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=float, default=16.0)
    parser.add_argument("--added", type=int, default=1000)
    parser.add_argument("--data-dir", default=os.path.join(ROOT, "var", "bench"))
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    from pyspark.sql import SparkSession

    from capture_agent.record import LineageContext, LineageRun
    from capture_agent.record.query.diff import RunDiff

    old_text, vocabulary = zipf_text(args.data_dir, args.size_mb, args.seed)
    new_text = changed_text(old_text, vocabulary, args.added)
    work = tempfile.mkdtemp(prefix="lineage-bench-diff-")
    spark = (SparkSession.builder.master(args.master).appName("bench-diff").config("spark.ui.enabled", "false")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    dirs = []
    for name, text in (("old", old_text), ("new", new_text)):
        lc = LineageContext(spark, store=os.path.join(work, name))
        lc.textFile(text).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add).collect()
        dirs.append(lc.run_dir)
    sc = spark.sparkContext
    old, new = LineageRun(dirs[0], sc), LineageRun(dirs[1], sc)
    target = new.outputs()[-1].capture_id
    word = vocabulary[3]
    [(record_id, _)] = [(i, v) for i, v in new.session.values.values(new.store.point(target),
                                                                        new.engine.all_ids(new.store.point(target)))
                        if v[0] == word]
    started = time.perf_counter()
    traced = new.lineage(target, [record_id]).goBackAll().count()
    trace_s = time.perf_counter() - started
    started = time.perf_counter()
    diff = RunDiff(old, new, target)
    counts = diff.counts()
    all_s = time.perf_counter() - started
    started = time.perf_counter()
    why = RunDiff(old, new, target).explain(word)
    one_s = time.perf_counter() - started
    print(f"size: {args.size_mb:g} MB, {args.added} lines added, every 200th removed; outputs: {counts}")
    print(f"trace of {word!r} ({traced} input lines): {trace_s:.2f} s")
    print(f"diff, all outputs: {all_s:.2f} s = {all_s / trace_s:.1f}x the trace")
    print(f"diff, one output {word!r} ({len(why.added)} added, {len(why.removed)} removed, {why.common} common, "
          f"adds up: {why.check.holds if why.check else None}): {one_s:.2f} s = {one_s / trace_s:.1f}x the trace")
    spark.stop()


if __name__ == "__main__":
    main()
