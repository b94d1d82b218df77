"""TPC-DS speed: each query's time captured by configuration against plain Spark, each variant in
Spark applications of its own.

The 99 queries (DuckDB's texts in Spark's dialect over its generated Parquet, ``tests/tpcds.py``)
run as a user runs them, ``spark.sql(text).collect()``, in a local[2] session as the coverage
bench makes it (``tpcds_coverage.session``: adaptive execution on). ``captured`` is the same job
with record capture switched on by configuration (``capture.implicit.enable_records``, what
``capture_agent.enable(spark, records=True)`` starts): every action's plan rewritten in the JVM.

Each round runs the two variants in applications of their own (a JVM each, ``_own_applications``),
plain first in even rounds and captured first in odd ones; an application runs every chosen
query once to warm up, then ``--runs`` times, each timed run from a settled machine (a JVM
collection, the disk synced, a pause). Per query: the median of each variant's timed runs over
all rounds, and the ratio, the median over rounds of captured's median / plain's (two
applications that ran one after the other: a machine that slows for a while slows both). The
captured answer is checked against plain's (``tests/tpcds_answers.py``, as multisets). The
geometric mean and the worst ratio are over the queries captured with plain's answer; queries
that ran plain (the capture refused or failed: why), failed, or answered otherwise are listed
apart. An application that dies is started again for the queries it left.

    PYSPARK_PYTHON=$PWD/.venv/bin/python .venv/bin/python bench/tpcds_speed.py --sf 0.1
    ... bench/tpcds_speed.py --sf 1 --runs 1 --rounds 2 --queries 1-99:3 --driver-memory 4g

``--profile DIR`` writes a cProfile of the driver for each captured query's timed runs
(``DIR/q<n>.prof``), where the driver's fixed cost per action shows.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

from _own_applications import (  # noqa: E402
    VARIANTS,
    geometric_mean,
    in_own_process,
    load,
    round_order,
    settle,
    write_result,
)
from tpcds_coverage import parse_queries, session  # noqa: E402

from tests import tpcds  # noqa: E402
from tests.tpcds_answers import diff_rows  # noqa: E402


@dataclass
class QueryRun:
    """One query in one application: its timed runs, its answer, what the capture did."""

    query: int | str
    times: list[float] = field(default_factory=list)
    rows: list[tuple[Any, ...]] | None = None
    outcome: str = "ok"  # "ok", "not captured: why", "fails: why", "application died"


def application(args: argparse.Namespace, which: str, numbers: list[int | str]) -> None:
    """One Spark application running ``numbers`` plain or captured, each once to warm up and then
    ``--runs`` times; a ``QueryRun`` written to ``--result`` as each query ends."""
    spark = session(args.shuffle_partitions, args.driver_memory)
    store = tempfile.mkdtemp(prefix="tpcds-speed-store-")
    tpcds.register(spark, tpcds.generate(args.folder, args.sf))
    lc = None
    if which == "captured":
        from capture_agent.record.capture.implicit import enable_records

        lc = enable_records(spark, store)
    texts = tpcds.queries()
    for number in numbers:
        run = QueryRun(number)
        try:
            for attempt in range(args.runs + 1):  # the first warms up
                seconds, rows, why_plain = timed(args, spark, lc, texts[number], number, profiled=attempt > 0)
                if attempt:
                    run.times.append(seconds)
                run.rows = rows
                if why_plain:
                    run.outcome = f"not captured: {why_plain}"
        except Exception as error:  # noqa: BLE001 - a failing query is an outcome to report
            first = str(error).strip().splitlines()[0] if str(error).strip() else ""
            run.outcome = f"fails: {type(error).__name__}: {first[:160]}"
        write_result(args.result, vars(run))  # a dict: the parent's __main__ need not be this module
        if run.outcome.startswith("fails") and not alive(spark):
            sys.exit(3)  # its JVM is gone: the parent starts another application for the queries left
    spark.stop()
    shutil.rmtree(store, ignore_errors=True)


def alive(spark: Any) -> bool:
    """Whether the application's JVM still answers and its SparkContext runs."""
    try:
        return not spark.sparkContext._jsc.sc().isStopped()
    except Exception:  # noqa: BLE001 - py4j's errors when the JVM is gone
        return False


def timed(args: argparse.Namespace, spark: Any, lc: Any, text: str, number: int | str,
          profiled: bool) -> tuple[float, list[tuple[Any, ...]], str | None]:
    """The wall time of ``spark.sql(text).collect()`` from a settled machine, its rows, and why
    it ran plain when records are on and it was not captured."""
    settle(spark, args.settle)
    before = len(lc.store.not_captured) if lc is not None else 0
    profile = None
    if profiled and args.profile and lc is not None:
        import cProfile

        profile = cProfile.Profile()
        profile.enable()
    start = time.perf_counter()
    rows = spark.sql(text).collect()
    seconds = time.perf_counter() - start
    if profile is not None:
        profile.disable()
        os.makedirs(args.profile, exist_ok=True)
        profile.dump_stats(os.path.join(args.profile, f"q{number}.prof"))
    why = lc.store.not_captured[-1]["reason"][:160] if lc is not None and len(lc.store.not_captured) > before else None
    return seconds, [tuple(r) for r in rows], why


def own_applications(args: argparse.Namespace, which: str, numbers: list[int | str]) -> dict[int | str, QueryRun]:
    """``application`` in processes of their own: one, and another for the queries left each time
    one dies (a query whose failure left its JVM dead is reported failed; one that killed the
    process without a word, "application died")."""
    done: dict[int | str, QueryRun] = {}
    left = list(numbers)
    while left:
        argv = ["--variant", which, "--sf", str(args.sf), "--queries", ",".join(map(str, left)), "--runs",
                str(args.runs), "--folder", args.folder, "--shuffle-partitions", str(args.shuffle_partitions),
                "--driver-memory", args.driver_memory, "--settle", str(args.settle)]
        if args.profile:
            argv += ["--profile", args.profile]
        reported = in_own_process(__file__, argv, check=False)
        for about in reported:
            done[about["query"]] = QueryRun(**about)
        left = [n for n in left if n not in done]
        if left and not reported:  # it died in its first query, without a word
            done[left[0]] = QueryRun(left[0], outcome="application died")
            left = left[1:]
    return done


@dataclass
class Measured:
    """One query over the rounds: each variant's timed runs, the paired ratio of each round."""

    query: int | str
    plain: list[float] = field(default_factory=list)
    captured: list[float] = field(default_factory=list)
    paired: list[float] = field(default_factory=list)
    apart: str = ""  # why the query is not among the ratios: ran plain, failed, another answer

    @property
    def ratio(self) -> float:
        return statistics.median(self.paired)


def compared(query: int | str, runs: dict[str, QueryRun]) -> str:
    """"" when the round's captured run of ``query`` is one to time against plain's; else why not."""
    plain, captured = runs["plain"], runs["captured"]
    if plain.outcome != "ok":
        return f"plain {plain.outcome}"
    if captured.outcome != "ok":
        return captured.outcome
    difference = diff_rows(plain.rows or [], captured.rows or [])
    return f"another answer than plain's: {difference}" if difference else ""


def line(m: Measured) -> str:
    rounds = ", ".join(f"{r:.2f}" for r in m.paired)
    return (f"{m.query!s:>5} {statistics.median(m.plain):8.2f} {statistics.median(m.captured):10.2f} "
            f"{m.ratio:6.2f}  ({rounds})")


def summary(measured: list[Measured]) -> str:
    """The geometric mean and worst ratio over the captured queries, and the queries apart."""
    timed_ = [m for m in measured if not m.apart]
    text = f"{len(timed_)} of {len(measured)} queries captured with plain's answer in every round"
    if timed_:
        worst = max(timed_, key=lambda m: m.ratio)
        text += (f": geometric mean {geometric_mean(m.ratio for m in timed_):.2f}x, worst {worst.ratio:.2f}x "
                 f"(query {worst.query}); plain {sum(statistics.median(m.plain) for m in timed_):.1f} s, captured "
                 f"{sum(statistics.median(m.captured) for m in timed_):.1f} s in all (medians)")
        longer = [m for m in timed_ if statistics.median(m.plain) >= 2.0]
        if longer:
            text += (f"\n  of those with plain >= 2 s ({len(longer)}): geometric mean "
                     f"{geometric_mean(m.ratio for m in longer):.2f}x, worst {max(m.ratio for m in longer):.2f}x")
    for m in measured:
        if m.apart:
            text += f"\n  apart: query {m.query}: {m.apart}"
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sf", type=float, default=1.0, help="TPC-DS scale factor (default 1)")
    parser.add_argument("--queries", help="which, e.g. 1,2,5-9 or 1-99:3 (every third); default all 99")
    parser.add_argument("--runs", type=int, default=2, help="timed runs of each query in each application")
    parser.add_argument("--rounds", type=int, default=2, help="applications of each variant")
    parser.add_argument("--folder", default=os.path.join(tempfile.gettempdir(), "tpcds"), help="data cache")
    parser.add_argument("--shuffle-partitions", type=int, default=2)
    parser.add_argument("--driver-memory", default="2g")
    parser.add_argument("--settle", type=float, default=1.0, help="seconds of pause before each timed run")
    parser.add_argument("--profile", help="a folder for cProfiles of the captured runs' driver")
    parser.add_argument("--variant", choices=VARIANTS, help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args()
    numbers = parse_queries(args.queries, list(tpcds.queries()))
    if args.variant:
        application(args, args.variant, numbers)
        return

    start = time.perf_counter()
    tables = tpcds.generate(args.folder, args.sf)
    print(f"TPC-DS sf {args.sf} under {os.path.dirname(tables['store_sales'])} ({time.perf_counter() - start:.0f} s); "
          f"{len(numbers)} queries, {args.rounds} rounds, {args.runs} timed runs after a warm-up; "
          f"load {load()} at {time.strftime('%H:%M:%S')}", flush=True)
    measured = {n: Measured(n) for n in numbers}
    for round_ in range(args.rounds):
        got = {}
        for which in round_order(round_):
            got[which] = own_applications(args, which, numbers)
            print(f"round {round_ + 1}: {which} done, load {load()} at {time.strftime('%H:%M:%S')}", flush=True)
        for n in numbers:
            m = measured[n]
            runs = {which: got[which][n] for which in VARIANTS}
            m.apart = m.apart or compared(n, runs)
            if not m.apart:
                m.plain += runs["plain"].times
                m.captured += runs["captured"].times
                m.paired.append(statistics.median(runs["captured"].times) / statistics.median(runs["plain"].times))
    print(f"{'query':>5} {'plain s':>8} {'captured s':>10} {'ratio':>6}  (each round's)")
    for m in measured.values():
        if not m.apart:
            print(line(m))
    print(summary(list(measured.values())))
    print(f"load {load()} at {time.strftime('%H:%M:%S')}")


if __name__ == "__main__":
    main()
