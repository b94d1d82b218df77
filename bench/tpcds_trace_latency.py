"""One-row backward traces of TPC-DS outputs through the API: request to finished trace, with a warm worker.

The chosen TPC-DS queries (``tests/tpcds.py``, Spark's dialect over DuckDB's generated Parquet) run
as a user runs them, ``spark.sql(text).collect()``, in a Spark application of their own with record
capture switched on by configuration (``capture_agent.enable(spark, records=True)``, a local[2]
session as ``tpcds_coverage.session`` makes it) and registered with a real server started here
(trace_latency.py's: gunicorn and one Celery worker, its Spark session warm, on the embedded
defaults). Then, for each captured query with rows, backward traces of one output row each
(``--rows`` rows chosen at random among its output rows, ``{"ids": [row]}``) are asked through
the REST API with a personal token and polled to their end, one after another.

Printed per trace and per query (the median of its traces): the request-to-finished time and its
split from the trace's own timings (queued, open + select, walk (of which Spark), store, the rest:
HTTP, polling, bookkeeping), then the p50, p90 and max over all traces and over the queries'
medians. The goal (issue 42): a one-row backward trace of a TPC-DS output in 1 s or less. After
each trace, one page of 100 of its records from the middle of its answer is read as the browser
reads it (``page``, ms; values at table rows are read from their Parquet files then).

Each trace is checked: it reached at least one row of a table (``empty`` when it reached none),
and for the first ``--oracle`` traces of each query the re-execution oracle
(``tests/tpcds_oracles.reexecuted``) runs on the trace's answer as the API gives it (its JSON lines
download): each table the trace reached replaced by the rows found in it, the query run plain
again in a Spark session of the bench's own after the asking; the traced row must come back.

    PYSPARK_PYTHON=$PWD/.venv/bin/python .venv/bin/python bench/tpcds_trace_latency.py --sf 0.1 --queries 3,7
    PYSPARK_PYTHON=$PWD/.venv/bin/python .venv/bin/python bench/tpcds_trace_latency.py   # sf 1, 1-99:9
"""

from __future__ import annotations

import argparse
import datetime
import decimal
import os
import random
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from _asking_server import TRACE_PARTS, Api, add_server_arguments, report, set_up_server, trace_figures
from _ingest_server import running_server
from _own_applications import in_own_process, write_result
from tpcds_coverage import parse_queries, session

from tests import tpcds  # _asking_server put the project's root on the path

EXTRA = ("records", "jobs", "page", "check")
PAGE = 100  # records of the page read after each trace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sf", type=float, default=1.0, help="TPC-DS scale factor (default 1)")
    parser.add_argument("--queries", default="1-99:9", help="which, e.g. 1,2,5-9 or 1-99:3 (default 1-99:9)")
    parser.add_argument("--rows", type=int, default=3, help="output rows traced per query (default 3)")
    parser.add_argument("--oracle", type=int, default=1, help="traces per query checked by re-execution (default 1)")
    parser.add_argument("--folder", default=os.path.join(tempfile.gettempdir(), "tpcds"), help="data cache")
    parser.add_argument("--driver-memory", default="4g", help="the captured job's driver (default 4g)")
    parser.add_argument("--capture", action="store_true", help=argparse.SUPPRESS)  # the child that captures
    parser.add_argument("--server", help=argparse.SUPPRESS)
    parser.add_argument("--token", help=argparse.SUPPRESS)
    parser.add_argument("--store", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    add_server_arguments(parser)
    args = parser.parse_args()
    if args.capture:
        capture(args)
        return

    tables = tpcds.generate(args.folder, args.sf)
    numbers = parse_queries(args.queries, list(tpcds.queries()))
    os.makedirs(args.data_dir, exist_ok=True)
    var = Path(tempfile.mkdtemp(prefix="tpcds-trace-bench-", dir=args.data_dir))
    setup = set_up_server(var, args)
    with running_server(setup.env, var, workers=2, threads=4, celery=True) as server:
        base = f"http://127.0.0.1:{server.port}"
        began = time.perf_counter()
        captured = in_own_process(__file__, [
            "--capture", "--server", base, "--token", setup.agent_token, "--store", str(var / "store"),
            "--sf", str(args.sf), "--queries", ",".join(map(str, numbers)), "--folder", args.folder,
            "--driver-memory", args.driver_memory])
        app_id = captured[-1]["app_id"]
        runs = [r for r in captured if "query" in r]
        print(f"\nTPC-DS sf {args.sf}: {len(runs)} queries captured in {time.perf_counter() - began:.0f} s "
              f"(one application, {app_id}); server {base}, worker on {args.master}")
        api = Api(base, setup.personal_token)
        points = server_points(api, app_id)
        for run in runs:  # the output as the server names it
            run["point"] = next((p for p in points if run["capture_id"] and p.endswith(f"/{run['capture_id']}")), None)
            if run["outcome"] == "captured" and run["point"] is None:
                run["outcome"] = "its output is not registered with the server"
        rng = random.Random(args.seed)
        asked = [run for run in runs if run["outcome"] == "captured" and run["rows"]]
        for run in runs:
            if run not in asked:
                print(f"  q{run['query']}: not traced ({run['outcome']}; {len(run['rows'] or [])} rows)")
        if not asked:
            raise SystemExit("no captured query with rows to trace")
        first = asked[0]
        ask(api, app_id, first["point"], 0, args.poll, "warm-up")  # the worker's first trace (code loaded)
        traces: list[dict[str, Any]] = []
        for run in asked:
            rows = sorted(rng.sample(range(len(run["rows"])), min(args.rows, len(run["rows"]))))
            for i, row in enumerate(rows):
                figures = ask(api, app_id, run["point"], row, args.poll, f"q{run['query']} r{row}")
                figures.update(query=run["query"], row=row, oracle=i < args.oracle)
                traces.append(figures)
        witnesses = {t["id"]: api.lines(f"/api/v1/traces/{t['id']}/download/jsonl/") for t in traces if t["oracle"]}
    oracle(args, tables, {r["query"]: r for r in asked}, traces, witnesses)
    summarize(traces)


def capture(args: argparse.Namespace) -> None:
    """The child: the queries run with record capture on by configuration, registered with the
    server; per query a result (its rows, its output's capture id, or why it was not captured),
    then the application's id."""
    import capture_agent
    from capture_agent.record.capture.implicit import enable_records

    spark = session(2, args.driver_memory)
    tables = tpcds.generate(args.folder, args.sf)
    tpcds.register(spark, tables)
    texts = tpcds.queries()
    agent = capture_agent.enable(spark, server_url=args.server, token=args.token, records=True, store=args.store,
                                 spool_dir=os.path.join(args.store, "spool"))
    try:
        lc = enable_records(spark)  # the implicit context enable started
        for number in parse_queries(args.queries, list(texts)):
            before, outputs = len(lc.store.not_captured), len(lc.store.by_seq())
            start = time.perf_counter()
            outcome, capture_id, rows = "captured", None, None
            try:
                rows = [tuple(r) for r in spark.sql(texts[number]).collect()]
                made = [p for p in lc.store.by_seq()[outputs:] if p.kind == "output"]
                if len(lc.store.not_captured) > before:
                    outcome = f"not captured: {lc.store.not_captured[-1]['reason'][:120]}"
                elif made:
                    capture_id = made[-1].capture_id
                else:
                    outcome = "no output point"
            except Exception as error:  # noqa: BLE001 - a failing query is an outcome to report
                outcome = f"fails: {type(error).__name__}: {str(error).strip()[:120]}"
            seconds = time.perf_counter() - start
            print(f"  q{number}: {outcome}, {len(rows or [])} rows, {seconds:.1f} s", flush=True)
            write_result(args.result, {"query": number, "rows": rows, "capture_id": capture_id, "outcome": outcome})
        agent.flush(120)
    finally:
        capture_agent.disable()
    write_result(args.result, {"app_id": spark.sparkContext.applicationId})
    spark.stop()


def server_points(api: Api, app_id: str) -> list[str]:
    """The ids of the application's capture points as the server names them."""
    found: list[str] = []
    url: str | None = f"/api/v1/applications/{app_id}/capture-points/?page_size=500"
    while url:
        page = api.call("GET", url)
        found.extend(p["capture_id"] for p in page["results"])
        url = page.get("next")
    return found


def ask(api: Api, app_id: str, capture_point: str, row: int, poll: float, label: str) -> dict[str, Any]:
    """The backward trace of output row ``row`` of ``capture_point``, to its end; its figures and check."""
    trace, total = api.ask("/api/v1/traces/", {
        "application": app_id, "direction": "backward", "capture_point": capture_point, "recompute": True,
        "name": f"bench: {label}", "selection": {"ids": [row]}}, poll)
    figures = trace_figures(trace, total, label)
    reached = sum(trace["summary"]["result_points"].values())
    # then a page of 100 of its records from the middle of the answer, as the browser asks a page
    middle = trace["result_count"] // PAGE // 2 + 1
    began = time.perf_counter()
    page = api.call("GET", f"/api/v1/traces/{trace['id']}/records/?page={middle}&page_size={PAGE}")
    page_ms = (time.perf_counter() - began) * 1000
    check = "ok" if all(r["value"] is not None for r in page["results"]) else "NO VALUES"
    return {**figures, "id": trace["id"], "page": round(page_ms), "check": check if reached else "EMPTY"}


def typed(value: Any, data_type: Any) -> Any:
    """A JSON value of a traced row as the table's column type wants it (dates and decimals are text)."""
    from pyspark.sql import types as T

    if value is None:
        return None
    if isinstance(data_type, T.DateType):
        return datetime.date.fromisoformat(value)
    if isinstance(data_type, T.DecimalType):
        return decimal.Decimal(value)
    return value


def oracle(args: argparse.Namespace, tables: dict[str, str], runs: dict[Any, dict[str, Any]],
           traces: list[dict[str, Any]], witnesses: dict[int, list[dict[str, Any]]]) -> None:
    """The re-execution oracle on the traces ``witnesses`` holds the answers of (their JSON lines):
    each table they reached replaced by its rows, the query run plain: the traced row must come back.
    Sets each checked trace's ``check``."""
    from tests.tpcds_oracles import key, reexecuted

    if not witnesses:
        return
    spark = session(2, args.driver_memory)
    try:
        tpcds.register(spark, tables)
        schemas = {name: spark.read.parquet(path).schema for name, path in tables.items()}
        texts = tpcds.queries()
        for trace in traces:
            if trace["id"] not in witnesses or trace["check"] != "ok":
                continue
            by_table: dict[str, dict[tuple[str, int], tuple[Any, ...]]] = defaultdict(dict)
            for record in witnesses[trace["id"]]:
                table = os.path.basename(os.path.dirname(record["file"] or ""))
                if table not in tables or not isinstance(record["value"], dict):
                    trace["check"] = f"reached {record['capture_id']}, not a table row"
                    break
                schema = schemas[table]
                by_table[table][(record["file"], record["record_id"])] = tuple(
                    typed(record["value"].get(f.name), f.dataType) for f in schema.fields)
            else:  # a table read twice (two capture points) gives its rows once
                again = reexecuted(spark, tables, texts[trace["query"]],
                                   {table: list(rows.values()) for table, rows in by_table.items()})
                wanted = key(runs[trace["query"]]["rows"][trace["row"]])
                trace["check"] = "oracle" if wanted in set(map(key, again)) else "ORACLE FAILS"
    finally:
        spark.stop()


def summarize(traces: list[dict[str, Any]]) -> None:
    """Every trace, each query's medians, and the p50 / p90 / max over traces and over queries."""
    report(f"{len(traces)} one-row backward traces, one after another (ms)", traces, TRACE_PARTS, EXTRA)
    per_query = []
    for query in dict.fromkeys(t["query"] for t in traces):
        mine = [t for t in traces if t["query"] == query]
        row = {k: statistics.median(t[k] for t in mine) for k in ("total", *TRACE_PARTS, "records", "jobs", "page")}
        checks = sorted({t["check"] for t in mine})
        per_query.append({"label": f"q{query}", **row, "check": ",".join(checks)})
    report("per query, the median of its traces (ms)", per_query, TRACE_PARTS, EXTRA)
    for name, rows in (("traces", traces), ("queries' medians", per_query)):
        totals = sorted(r["total"] for r in rows)
        p90 = totals[min(len(totals) - 1, int(round(0.9 * (len(totals) - 1))))]
        over = sum(1 for t in totals if t > 1000)
        print(f"over {len(rows)} {name}: p50 {statistics.median(totals) / 1000:.2f} s, p90 {p90 / 1000:.2f} s, "
              f"max {totals[-1] / 1000:.2f} s; {over} over 1 s (goal: <= 1 s)")
        pages = sorted(r["page"] for r in rows)
        print(f"  a page of {PAGE} records after each: p50 {statistics.median(pages):.0f} ms, max {pages[-1]:.0f} ms")
    failed = [t["label"] for t in traces if t["check"] not in ("ok", "oracle")]
    print(f"checks: {len(traces) - len(failed)} of {len(traces)} passed" + (f"; not: {failed}" if failed else ""))


if __name__ == "__main__":
    main()
