"""Random small DataFrame pipelines against a brute-force interpreter: each output row's values
and the source rows behind it (traced back from the captured output) equal what a plain-Python
evaluation of the same pipeline, carrying every row's source rows by hand, gives."""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

FACT_SCHEMA = "fid long, k long, v long"
DIM_SCHEMA = "did long, k long, name string"
OPS = ["filter", "map", "join", "group", "distinct", "union"]

Row = tuple[dict[str, Any], frozenset[tuple[Any, ...]]]


def interpret(facts: list[tuple[Any, ...]], dims: list[tuple[Any, ...]], ops: list[str]) -> tuple[list[Row], list[str]]:
    """The pipeline in plain Python: rows as (values, the source rows they came from)."""
    columns = ["fid", "k", "v"]
    table: list[Row] = [(dict(zip(columns, f, strict=True)), frozenset([f])) for f in facts]
    for op in ops:
        if op == "filter" and "v" in columns:
            table = [r for r in table if r[0]["v"] > 2]
        elif op == "map" and "v" in columns:
            table = [({**values, "v": values["v"] + 1}, src) for values, src in table]
        elif op == "join" and "k" in columns and "name" not in columns:
            columns = columns + ["did", "name"]
            table = [({**values, "did": d[0], "name": d[2]}, src | {d}) for values, src in table
                     for d in dims if d[1] == values["k"]]
        elif op == "group" and "k" in columns and "v" in columns:
            groups: dict[Any, tuple[int, frozenset[tuple[Any, ...]]]] = {}
            for values, src in table:
                total, behind = groups.get(values["k"], (0, frozenset()))
                groups[values["k"]] = (total + values["v"], behind | src)
            columns = ["k", "v"]
            table = [({"k": k, "v": total}, behind) for k, (total, behind) in groups.items()]
        elif op == "distinct":
            merged: dict[tuple[Any, ...], frozenset[tuple[Any, ...]]] = {}
            for values, src in table:
                key = tuple(values[c] for c in columns)
                merged[key] = merged.get(key, frozenset()) | src
            table = [(dict(zip(columns, key, strict=True)), src) for key, src in merged.items()]
        elif op == "union" and columns == ["fid", "k", "v"]:
            table = table + [(dict(zip(columns, f, strict=True)), frozenset([f])) for f in facts if f[2] < 3]
    return table, columns


def captured(lc: Any, facts: list[tuple[Any, ...]], dims: list[tuple[Any, ...]], ops: list[str]) -> Any:
    from pyspark.sql import functions as F

    fact_frame = lc.createDataFrame(facts, FACT_SCHEMA)
    frame = fact_frame
    dim_frame = lc.createDataFrame(dims, DIM_SCHEMA)
    for op in ops:
        columns = frame.columns
        if op == "filter" and "v" in columns:
            frame = frame.where(F.col("v") > 2)
        elif op == "map" and "v" in columns:
            frame = frame.withColumn("v", F.col("v") + 1)
        elif op == "join" and "k" in columns and "name" not in columns:
            frame = frame.join(dim_frame.select("k", "did", "name"), "k").select(*columns, "did", "name")
        elif op == "group" and "k" in columns and "v" in columns:
            frame = frame.groupBy("k").agg(F.sum("v").alias("v"))
        elif op == "distinct":
            frame = frame.distinct()
        elif op == "union" and columns == ["fid", "k", "v"]:
            frame = frame.union(fact_frame.where(F.col("v") < 3))
    return frame


facts_st = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 6)), min_size=1, max_size=8).map(
    lambda rows: [(i, k, v) for i, (k, v) in enumerate(rows)])
dims_st = st.lists(st.integers(0, 4), min_size=1, max_size=4).map(
    lambda keys: [(100 + i, k, f"d{i}") for i, k in enumerate(keys)])


def pipelines(test: Any) -> Any:
    """Hypothesis: random facts, dims and up to three operations, and two fixed examples."""
    test = example(facts=[(0, 1, 2), (1, 2, 1)], dims=[(100, 1, "d0")], ops=["union", "distinct"])(test)
    test = example(facts=[(0, 1, 5), (1, 1, 4)], dims=[(100, 1, "d0"), (101, 1, "d1")], ops=["join", "group"])(test)
    test = given(facts=facts_st, dims=dims_st, ops=st.lists(st.sampled_from(OPS), min_size=1, max_size=3))(test)
    return settings(max_examples=int(os.environ.get("LINEAGE_PROPERTY_EXAMPLES", "20")) // 2, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])(test)


def assert_traced(lc: Any, frame: Any, expected: list[Row], columns: list[str]) -> None:
    """Each output row and the source rows traced back from it equal the interpreter's."""
    got = frame.collect()
    traced = []
    for i, row in enumerate(got):
        behind = lc.lineage(frame, [i]).goBackAll().collect()
        traced.append((tuple(row), frozenset(tuple(r) for r in behind)))
    assert Counter(traced) == Counter((tuple(v[c] for c in columns), src) for v, src in expected)


@pipelines
def test_random_pipelines_match_the_interpreter(lc: Any, facts: list[tuple[Any, ...]],
                                                dims: list[tuple[Any, ...]], ops: list[str]) -> None:
    expected, columns = interpret(facts, dims, ops)
    frame = captured(lc, facts, dims, ops)
    assert frame.columns == columns
    assert_traced(lc, frame, expected, columns)


def sql_query(columns: list[str], ops: list[str]) -> tuple[str, list[str]]:
    """The same pipeline as one SQL query over the views facts and dims (each step a derived table)."""
    query = "SELECT * FROM facts"
    for op in ops:
        if op == "filter" and "v" in columns:
            query = f"SELECT * FROM ({query}) t WHERE v > 2"
        elif op == "map" and "v" in columns:
            query = f"SELECT {', '.join('v + 1 AS v' if c == 'v' else c for c in columns)} FROM ({query}) t"
        elif op == "join" and "k" in columns and "name" not in columns:
            query = (f"SELECT {', '.join('t.' + c for c in columns)}, d.did, d.name FROM ({query}) t "
                     "JOIN dims d ON t.k = d.k")
            columns = columns + ["did", "name"]
        elif op == "group" and "k" in columns and "v" in columns:
            query = f"SELECT k, sum(v) AS v FROM ({query}) t GROUP BY k"
            columns = ["k", "v"]
        elif op == "distinct":
            query = f"SELECT DISTINCT * FROM ({query}) t"
        elif op == "union" and columns == ["fid", "k", "v"]:
            query = f"SELECT * FROM ({query}) t UNION ALL SELECT * FROM facts WHERE v < 3"
    return query, columns


@pipelines
def test_random_sql_pipelines_match_the_interpreter(lc: Any, facts: list[tuple[Any, ...]],
                                                    dims: list[tuple[Any, ...]], ops: list[str]) -> None:
    expected, columns = interpret(facts, dims, ops)
    lc.createDataFrame(facts, FACT_SCHEMA).createOrReplaceTempView("facts")
    lc.createDataFrame(dims, DIM_SCHEMA).createOrReplaceTempView("dims")
    query, named = sql_query(["fid", "k", "v"], ops)
    frame = lc.sql(query)
    assert frame.columns == columns == named
    assert_traced(lc, frame, expected, columns)
