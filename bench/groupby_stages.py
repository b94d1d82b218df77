"""Where a captured group by's time goes: its map stage's CPU, plain, captured with its tap writing
nothing, and captured.

``bench/dataframe_capture.py``'s group by (lineitem's quantity per part key, 200,000 keys, on the
Parquet it generates under --data-dir: run it first), captured the way an unmodified job is
(``enable_records``). Three Spark applications, one per variant (a JVM each, as
``bench/_own_applications.py`` explains): ``plain``; ``taps-off``, the rewritten plan with the
aggregate's tap told to keep nothing (the local property a what-if's replay sets, ``Tap.OFF``):
the ids read, carried and handed to the tap, the group's hash in the aggregate's buffer, and no
row kept; ``captured``, which also keeps each row's group and id and sorts and writes them as the
task's table when the task ends. --rounds applications of each variant (each variant's first in
turn), each running the query once to warm up and then --runs times; per variant, the median over
all its timed runs of the query's wall time (built and collected) and of its map stage's executor
CPU time and run time (Spark's own task metrics, summed over the stage's tasks): CPU time moves
less than wall time with what else the machine runs, but a JVM's compiled code varies from one
application to the next (the plain map stage: 3.1 CPU s in one, 3.7 in another).

    .venv/bin/python bench/groupby_stages.py --lineitem 16000000 --runs 3 --rounds 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

from _own_applications import bench_session, in_own_process, load, settle, write_result  # noqa: E402

from capture_agent.record.query.frame_replay import TAPS_OFF  # noqa: E402

VARIANTS = ("plain", "taps-off", "captured")


def stages(spark: Any) -> dict[int, Any]:
    """Spark's record of every stage so far (``AppStatusStore.stageList``), by stage id."""
    jvm = spark.sparkContext._jvm
    empty = spark.sparkContext._gateway.new_array(jvm.double, 0)
    found = spark._jsc.sc().statusStore().stageList(None, False, False, empty, jvm.java.util.ArrayList())
    out = {}
    it = found.iterator()
    while it.hasNext():
        stage = it.next()
        out[stage.stageId()] = stage
    return out


def variant(args: argparse.Namespace, which: str) -> dict[str, list[float]]:
    """One application running the group by ``--runs`` times after a warm-up: per run, the wall
    time and the map stage's (the stage that ran longest) executor CPU and run time."""
    from pyspark.sql import functions as F

    spark = bench_session("groupby-stages", args.master)
    store = tempfile.mkdtemp(prefix="lineage-bench-store-")
    try:
        if which != "plain":
            from capture_agent.record.capture.implicit import enable_records

            enable_records(spark, store)
        if which == "taps-off":
            spark.sparkContext.setLocalProperty(TAPS_OFF, "true")
        path = os.path.join(args.data_dir, f"lineitem-{args.lineitem}")
        if not os.path.isdir(path):
            raise SystemExit(f"{path} is missing: run bench/dataframe_capture.py --lineitem {args.lineitem} first")
        out: dict[str, list[float]] = {"wall": [], "cpu": [], "run": []}
        for run in range(args.runs + 1):
            settle(spark)
            before = set(stages(spark))
            start = time.perf_counter()
            spark.read.parquet(path).groupBy("l_partkey").agg(F.sum("l_quantity").alias("qty")).collect()
            wall = time.perf_counter() - start
            new = [s for i, s in stages(spark).items() if i not in before]
            scan = max(new, key=lambda s: s.executorRunTime())  # the scan's; AQE skips a copy of it
            if run:  # the first run warms up
                out["wall"].append(wall)
                out["cpu"].append(scan.executorCpuTime() / 1e9)
                out["run"].append(scan.executorRunTime() / 1e3)
        return out
    finally:
        spark.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lineitem", type=int, default=2_000_000)
    parser.add_argument("--runs", type=int, default=3, help="timed runs in each application")
    parser.add_argument("--rounds", type=int, default=2, help="applications of each variant, each first in turn")
    parser.add_argument("--data-dir", default=os.path.join(tempfile.gettempdir(), "lineage-bench-dataframes"))
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--variant", choices=VARIANTS, help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.variant:
        write_result(args.result, variant(args, args.variant))
        return
    print(f"group by, lineitem {args.lineitem:,} rows, {args.rounds} applications of each variant, {args.runs} runs "
          f"each, {args.master}; "
          f"load {load()}")
    runs: dict[str, dict[str, list[float]]] = {which: {"wall": [], "cpu": [], "run": []} for which in VARIANTS}
    for round_ in range(args.rounds):
        for which in VARIANTS[round_ % 3:] + VARIANTS[:round_ % 3]:  # each variant first in turn
            argv = ["--variant", which, "--lineitem", str(args.lineitem), "--runs", str(args.runs),
                    "--data-dir", args.data_dir, "--master", args.master]
            for name, values in in_own_process(__file__, argv)[-1].items():
                runs[which][name].extend(values)
    found = {which: {name: statistics.median(values) for name, values in got.items()} for which, got in runs.items()}
    plain = found["plain"]
    print(f"{'variant':10} {'wall s':>8} {'ratio':>6} {'map CPU s':>10} {'ratio':>6} {'map run s':>10}")
    for which, got in found.items():
        print(f"{which:10} {got['wall']:8.2f} {got['wall'] / plain['wall']:6.2f} {got['cpu']:10.2f} "
              f"{got['cpu'] / plain['cpu']:6.2f} {got['run']:10.2f}")
    print(f"load {load()}")


if __name__ == "__main__":
    main()
