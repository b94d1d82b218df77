"""TPC-DS coverage: each of the 99 queries (DuckDB's texts in Spark's dialect, ``tests/tpcds.py``) run
plain on local Spark over generated Parquet, and a table of outcomes (rows, seconds, status).

Other variants run after plain on the same query and their answers are compared with plain's as
multisets (``tests/tpcds_answers.py``). A variant is a function (spark, query text) -> (rows,
outcome): ``VARIANTS`` holds them by name; ``--variants`` picks which run. ``duckdb`` answers the
query with DuckDB over the same Parquet files, an independent oracle of plain Spark's answers. A
captured variant plugs in the same way (its outcome says what it did; an exception is a failure)::

    VARIANTS["mine"] = lambda spark, text: (my_rows(spark, text), "what it did")

``captured`` is the product's own: each query with record capture switched on, the answer
compared with plain's, and a one-row trace checked by the re-execution and forward oracles
(``tests/tpcds_oracles.py``)::

    .venv/bin/python bench/tpcds_coverage.py                            # all 99 at sf 0.5, plain
    .venv/bin/python bench/tpcds_coverage.py --sf 0.1 --queries 1,2,5-9 --variants duckdb
    .venv/bin/python bench/tpcds_coverage.py --sf 0.1 --variants captured
    .venv/bin/python bench/tpcds_coverage.py --sf 0.01 --variants explicit    # lc.read views, lc.sql

At sf 0.5 (172 MB of Parquet) 90 of the 99 return rows (81 at sf 0.1, 98 at sf 1); the baseline, per
query, is in docs/tpcds.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

from tests import tpcds  # noqa: E402
from tests.tpcds_answers import diff_rows  # noqa: E402

Rows = list[tuple[Any, ...]]
Variant = Callable[[Any, str], tuple[Rows, str]]


def plain(spark: Any, text: str) -> tuple[Rows, str]:
    """The query as a user runs it: ``spark.sql(text).collect()``."""
    return [tuple(row) for row in spark.sql(text).collect()], "ok"


def duckdb_variant(tables: dict[str, str]) -> Variant:
    """DuckDB answering each query in its own dialect over the same Parquet files."""
    con = tpcds.duckdb_over(tables)
    own = {tpcds.to_spark(n, text): text for n, text in tpcds.duckdb_queries().items()}

    def run(spark: Any, text: str) -> tuple[Rows, str]:
        return con.execute(own[text]).fetchall(), "ok"

    return run


def captured_variant(tables: dict[str, str], store: str) -> Variant:
    """The query as a user runs it with record capture switched on (``capture_agent.enable(spark,
    records=True)``'s machinery, ``capture.implicit``): the answer, then the outcome: not captured
    (and why), or captured with the seconds of the action alone and the verdict of the trace
    oracles (``tests/tpcds_oracles.py``)."""
    from capture_agent.record.capture import implicit
    from tests.tpcds_oracles import check_trace

    def run(spark: Any, text: str) -> tuple[Rows, str]:
        lc = implicit.enable_records(spark, store)
        try:
            before = len(lc.store.not_captured)
            start = time.perf_counter()
            got = spark.sql(text).collect()
            seconds = time.perf_counter() - start
            if len(lc.store.not_captured) > before:
                return [tuple(r) for r in got], f"not captured: {lc.store.not_captured[-1]['reason'][:120]}"
            problem = check_trace(lc, spark, tables, text, got) if got else None
            return [tuple(r) for r in got], f"captured {seconds:.2f}s, trace {problem or 'ok'}"
        finally:
            implicit.disable_records(spark)

    return run


def explicit_variant(tables: dict[str, str], store: str) -> Variant:
    """The query through the explicit API: each table it names read with ``lc.read.parquet`` as a
    temporary view, the query run with ``lc.sql`` (the same JVM rewrite, the views read as their
    captured sources): the answer, then refused (and why), not captured (the capture failed: it ran
    plain), or captured with the seconds of the action and the verdict of the trace oracles."""
    from capture_agent import LineageContext
    from capture_agent.record.errors import UnsupportedOperation
    from tests import tpcds
    from tests.tpcds_oracles import check_trace

    contexts: dict[int, Any] = {}

    def run(spark: Any, text: str) -> tuple[Rows, str]:
        lc = contexts.setdefault(id(spark), LineageContext(spark, store=store))
        try:
            for name, path in tables.items():
                if re.search(rf"\b{name}\b", text, re.IGNORECASE):
                    lc.read.parquet(path).createOrReplaceTempView(name)
            before = len(lc.store.not_captured)
            start = time.perf_counter()
            try:
                got = lc.sql(text).collect()
            except UnsupportedOperation as exc:
                return [tuple(r) for r in spark.sql(text).collect()], f"refused: {str(exc)[:120]}"
            seconds = time.perf_counter() - start
            if len(lc.store.not_captured) > before:  # the capture failed: the action ran plain
                return [tuple(r) for r in got], f"not captured: {lc.store.not_captured[-1]['reason'][:120]}"
            problem = check_trace(lc, spark, tables, text, got) if got else None
            return [tuple(r) for r in got], f"captured {seconds:.2f}s, trace {problem or 'ok'}"
        finally:
            tpcds.register(spark, tables)

    return run


VARIANTS: dict[str, Variant] = {}  # name -> variant; "duckdb", "captured" are made once the tables exist
TOLERANCE: dict[str, tuple[float, float]] = {"duckdb": (1e-6, 1e-6)}  # (rel, abs); else 1e-9 both
# Spark rounds decimal averages and quotients to 6 places where DuckDB answers in doubles.


@dataclass
class Run:
    """One variant's run of one query."""

    rows: Rows | None
    outcome: str
    seconds: float


@dataclass
class Result:
    """One query's runs: plain's, and each other variant's with its answer compared with plain's."""

    query: int | str
    plain: Run
    # name -> (its run, "same" or how its answer differs from plain's; "" when either failed)
    others: dict[str, tuple[Run, str]] = field(default_factory=dict)

    def verdict(self, name: str) -> str:
        """What the variant said (unless "ok") and how its answer compares with plain's."""
        other, comparison = self.others[name]
        if other.rows is not None and self.plain.rows is None:
            comparison = "plain failed"
        return "; ".join(part for part in (other.outcome if other.outcome != "ok" else "", comparison) if part)

    def status(self) -> str:
        """``runs``, ``empty`` (ran, no rows) or ``fails: ...``, of the plain query."""
        if self.plain.rows is None:
            return self.plain.outcome
        return "runs" if self.plain.rows else "empty"


def run(variant: Variant, spark: Any, text: str) -> Run:
    """Runs the variant, timing it; an exception is a failure, its first line the outcome."""
    start = time.perf_counter()
    try:
        rows, outcome = variant(spark, text)
    except Exception as error:  # noqa: BLE001 - every failure of a query is an outcome to report
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        return Run(None, f"fails: {type(error).__name__}: {first[:160]}", time.perf_counter() - start)
    return Run(rows, outcome, time.perf_counter() - start)


def run_query(spark: Any, number: int | str, text: str, variants: dict[str, Variant]) -> Result:
    """Plain first, then each variant, its answer compared with plain's."""
    result = Result(number, run(plain, spark, text))
    for name, variant in variants.items():
        other = run(variant, spark, text)
        comparison = ""
        if other.rows is not None and result.plain.rows is not None:
            rel, abs_ = TOLERANCE.get(name, (1e-9, 1e-9))
            comparison = diff_rows(result.plain.rows, other.rows, rel, abs_) or "same"
        result.others[name] = (other, comparison)
    return result


def parse_queries(spec: str | None, known: list[int | str]) -> list[int | str]:
    """``1,2,5-9`` -> [1, 2, 5, 6, 7, 8, 9]; ``1-99:3`` -> every third of 1-99 (1, 4, 7...), of the
    known numbers; None -> all."""
    if not spec:
        return known
    wanted: list[int | str] = []
    for part in spec.split(","):
        span, _, step = part.strip().partition(":")
        low, _, high = span.partition("-")
        wanted.extend(range(int(low), int(high or low) + 1, int(step or 1)))
    missing = [n for n in wanted if n not in known]
    if missing:
        raise SystemExit(f"no such queries: {missing}")
    return wanted


def session(shuffle_partitions: int, driver_memory: str) -> Any:
    """A local[2] SparkSession as the tests make it (adaptive execution on, Spark's default)."""
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("tpcds-coverage")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.driver.memory", driver_memory)
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def line(result: Result) -> str:
    """One row of the table."""
    rows = "-" if result.plain.rows is None else str(len(result.plain.rows))
    text = f"{result.query!s:>5} {rows:>6} {result.plain.seconds:8.2f}  {result.status()}"
    for name, (other, _) in result.others.items():
        text += f" | {name} {other.seconds:.2f}s {result.verdict(name)}"
    return text


def totals(results: list[Result]) -> str:
    """How many ran, returned rows, failed; the plain seconds; per variant, how many answers matched."""
    ran = [r for r in results if r.plain.rows is not None]
    text = (
        f"{len(results)} queries: {len(ran)} run plain, {sum(1 for r in ran if r.plain.rows)} return rows, "
        f"{len(results) - len(ran)} fail; plain {sum(r.plain.seconds for r in results):.1f} s in all"
    )
    for name in results[0].others if results else ():
        same = sum(1 for r in results if r.others[name][1] == "same")
        seconds = sum(r.others[name][0].seconds for r in results)
        text += f"\n{name}: {same} of {len(results)} the same answer as plain; {seconds:.1f} s in all"
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sf", type=float, default=0.5, help="TPC-DS scale factor (default 0.5)")
    parser.add_argument("--queries", help="which, e.g. 1,2,5-9 or 1-99:3 (default all 99)")
    parser.add_argument("--folder", default=os.path.join(tempfile.gettempdir(), "tpcds"), help="data cache")
    parser.add_argument("--variants", default="", help="comma-separated, run after plain: duckdb or one of VARIANTS")
    parser.add_argument("--shuffle-partitions", type=int, default=2)
    parser.add_argument("--driver-memory", default="2g")
    parser.add_argument("--json", help="also write the outcomes to this file")
    args = parser.parse_args()

    start = time.perf_counter()
    tables = tpcds.generate(args.folder, args.sf)
    print(f"TPC-DS sf {args.sf}: tables under {os.path.dirname(tables['store_sales'])} "
          f"({time.perf_counter() - start:.1f} s)", flush=True)  # fmt: skip
    texts = tpcds.queries()
    numbers = parse_queries(args.queries, list(texts))
    available = dict(VARIANTS)
    if "duckdb" in args.variants.split(","):
        available["duckdb"] = duckdb_variant(tables)
    if "captured" in args.variants.split(","):
        available["captured"] = captured_variant(tables, os.path.join(args.folder, "lineage"))
    if "explicit" in args.variants.split(","):
        available["explicit"] = explicit_variant(tables, os.path.join(args.folder, "lineage-explicit"))
    names = [name for name in args.variants.split(",") if name]
    if set(names) - set(available):
        raise SystemExit(f"no such variants: {sorted(set(names) - set(available))}")
    chosen = {name: available[name] for name in names}
    spark = session(args.shuffle_partitions, args.driver_memory)
    tpcds.register(spark, tables)
    print(f"{'query':>5} {'rows':>6} {'plain s':>8}  status", flush=True)
    results = []
    for number in numbers:
        results.append(run_query(spark, number, texts[number], chosen))
        print(line(results[-1]), flush=True)
    print(totals(results))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump([{"query": r.query, "rows": None if r.plain.rows is None else len(r.plain.rows),
                        "seconds": round(r.plain.seconds, 3), "status": r.status(),
                        **{n: r.verdict(n) for n in r.others}} for r in results], out, indent=1)  # fmt: skip
    spark.stop()


if __name__ == "__main__":
    main()
