"""Oracles of a captured TPC-DS answer's lineage, shared by the tests and bench/tpcds_coverage.py.

``check_trace``: a backward trace of one output row (the first of the first five made from source
rows) must pass the re-execution oracle (each table the trace reached replaced by the rows the
trace found in it, the query run plain again: the traced row comes back), and a forward trace
from one of those rows must reach the output row.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

from tests import tpcds

# A query's second reading of a table, as its text has it -> the table read there. Each is read, in
# the check of the trace, from a table named ``<table>_role2`` (see the module's doc).
ROLES: dict[str, str] = {
    # Q44: the scalar subquery's reading of store_sales
    "FROM store_sales\n            WHERE ss_store_sk = 4\n              AND ss_addr_sk IS NULL": "store_sales",
}


def key(row: Any) -> tuple[Any, ...]:
    return tuple(round(v, 6) if isinstance(v, float) else v for v in row)


def reexecuted(spark: Any, tables: dict[str, str], text: str, witnesses: dict[str, list[Any]]) -> list[Any]:
    """The query run plain again with each table of ``witnesses`` replaced by its rows (values in
    the table's column order): the re-execution oracle's answer. The tables are registered again after."""
    from capture_agent.record.capture.implicit_guard import uncaptured

    try:
        with uncaptured():
            for table, rows in witnesses.items():
                schema = spark.read.parquet(tables[table]).schema
                spark.createDataFrame(rows, schema).createOrReplaceTempView(table)
            return list(spark.sql(text).collect())
    finally:
        tpcds.register(spark, tables)


def apart_text(text: str) -> tuple[str, dict[str, str]]:
    """``text`` with each second reading of ``ROLES`` it holds renamed, and {the new name: its table}
    (empty for a query of none)."""
    names: dict[str, str] = {}
    for mark, table in ROLES.items():
        if mark in text:
            names[f"{table}_role2"] = table
            text = text.replace(mark, mark.replace(f"FROM {table}", f"FROM {table}_role2", 1))
    return text, names


def roles_apart(spark: Any, tables: dict[str, str], text: str) -> tuple[str, dict[str, str]] | None:
    """For a query of ``ROLES``: its text with the second reading renamed, and the tables with that
    name added (a link beside the table's folder to it; its view registered). None for any other."""
    text, names = apart_text(text)
    if not names:
        return None
    apart = dict(tables)
    for name, table in names.items():
        apart[name] = os.path.join(os.path.dirname(tables[table].rstrip("/")), name)
        if not os.path.lexists(apart[name]):
            os.symlink(tables[table], apart[name])
    tpcds.register(spark, apart)
    return text, apart


def check_trace(lc: Any, spark: Any, tables: dict[str, str], text: str, got: list[Any]) -> str | None:
    """None when the last output point's trace passes both oracles; else what failed. ``got``: the
    captured answer (the rows of that output). A query of ``ROLES`` is captured again with its roles
    apart (its answer must be ``got`` again), and that run's trace is checked."""
    if (apart := roles_apart(spark, tables, text)) is not None:
        text, tables = apart
        again = spark.sql(text).collect()
        if Counter(map(key, again)) != Counter(map(key, got)):
            return "with the roles apart the query gives another answer"
        got = again
    output = [p for p in lc.store.by_seq() if p.kind == "output"][-1]
    position, traced = next(((i, t) for i in range(min(len(got), 5))
                             if (t := lc.lineage(output.capture_id, [i]).goBackAll().split())), (0, {}))
    if not traced:
        return "no source row in the trace of the first rows"
    by_table: dict[str, tuple[str, list[tuple[int, Any]]]] = {}
    for capture_id, rows in traced.items():
        point = lc.store.point(capture_id)
        names = {p.rstrip("/").rsplit("/", 1)[-1] for p in point.layout.paths}
        if len(names) != 1 or (table := names.pop()) not in tables:
            return f"the trace reached {capture_id}, not a table of the query"
        by_table[table] = (capture_id, rows.items())
    again = reexecuted(spark, tables, text, {table: [value for _, value in items]
                                              for table, (_, items) in by_table.items()})
    if key(got[position]) not in set(map(key, again)):
        return f"re-execution: the traced row {position} is not made by its witnesses"
    table, (capture_id, items) = next(iter(by_table.items()))
    if position not in lc.lineage(capture_id, [items[0][0]]).goNextAll().at(output.capture_id).ids():
        return f"forward: a trace from a row of {table} misses output row {position}"
    return None
