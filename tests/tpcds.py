"""TPC-DS on generated data, offline: DuckDB's tables as Parquet and its 99 queries in Spark's dialect.

The ``duckdb`` and ``duckdb-extension-tpcds`` packages (test dependencies) make the 24 tables
(``dsdgen``) and carry the 99 query texts (``tpcds_queries()``). DuckDB ships one statement per
number: for 14, 23, 24 and 39, which Spark's own suite splits into a and b, only the first (a).
The edits Spark's dialect needs are in ``EDITS``, one line of why per query; a query not listed
there runs on Spark as DuckDB ships it. An edit that no longer applies (DuckDB changed the text)
raises, so that an edit never silently stops being made.

    tables = generate("/tmp/tpcds", 0.1)   # {"store_sales": ".../sf0.1/store_sales", ...}
    register(spark, tables)                # a temp view per table
    spark.sql(queries()[5]).collect()
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from typing import Any

TABLES = (
    "call_center", "catalog_page", "catalog_returns", "catalog_sales", "customer", "customer_address",
    "customer_demographics", "date_dim", "household_demographics", "income_band", "inventory", "item",
    "promotion", "reason", "ship_mode", "store", "store_returns", "store_sales", "time_dim", "warehouse",
    "web_page", "web_returns", "web_sales", "web_site",
)  # fmt: skip
_DONE = "_TPCDS_COMPLETE"  # written last into a scale factor's folder: its tables are all there


def available() -> bool:
    """Whether duckdb and its tpcds extension package are installed."""
    return all(importlib.util.find_spec(name) is not None for name in ("duckdb", "duckdb_extension_tpcds"))


def connect(sf: float | None = None) -> Any:
    """An in-memory DuckDB connection with the tpcds extension loaded from its package (no network);
    with ``sf``, the tables generated in it."""
    import duckdb

    package = importlib.util.find_spec("duckdb_extension_tpcds")  # a folder of files, no Python to import
    if package is None or package.origin is None:
        raise RuntimeError("duckdb-extension-tpcds is not installed")
    root = os.path.join(os.path.dirname(package.origin), "extensions")
    (version,) = os.listdir(root)  # one folder, v<the duckdb version the extension was built for>
    if version != f"v{duckdb.__version__}":
        raise RuntimeError(f"duckdb-extension-tpcds is built for {version}, duckdb is {duckdb.__version__}")
    con = duckdb.connect()
    con.execute("SET threads = 2")
    con.execute(f"LOAD '{os.path.join(root, version, 'tpcds.duckdb_extension')}'")
    if sf is not None:
        con.execute(f"CALL dsdgen(sf = {float(sf)!r})")
    return con


def _paths(base: str) -> dict[str, str]:
    return {name: os.path.join(base, name) for name in TABLES}


def generate(folder: str, sf: float) -> dict[str, str]:
    """The 24 tables at scale factor ``sf`` as Parquet (a folder per table) under ``folder``/sf<sf>,
    written once: a complete earlier generation is reused. Returns {table: its folder}."""
    base = os.path.join(folder, f"sf{float(sf)!r}")
    if os.path.exists(os.path.join(base, _DONE)):
        return _paths(base)
    os.makedirs(folder, exist_ok=True)
    work = tempfile.mkdtemp(prefix=f".sf{float(sf)!r}-", dir=folder)
    try:
        con = connect(sf)
        for name, path in _paths(work).items():
            os.makedirs(path)
            con.execute(f"COPY {name} TO '{os.path.join(path, 'part-0.parquet')}' (FORMAT parquet)")
        con.close()
        open(os.path.join(work, _DONE), "w").close()
        if not os.path.exists(os.path.join(base, _DONE)):  # an incomplete one, left by a generation that died
            shutil.rmtree(base, ignore_errors=True)
        try:
            os.rename(work, base)
        except OSError:  # another process finished first: keep its tables
            if not os.path.exists(os.path.join(base, _DONE)):
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return _paths(base)


def register(spark: Any, tables: dict[str, str]) -> None:
    """A temp view of each table, read with ``spark.read.parquet``, so the queries run as written."""
    for name, path in tables.items():
        spark.read.parquet(path).createOrReplaceTempView(name)


def duckdb_over(tables: dict[str, str]) -> Any:
    """A DuckDB connection whose views read the same Parquet files: an oracle independent of Spark."""
    con = connect()
    # NULLs where Spark puts them when a query does not say: first in ascending order, last in descending
    # (DuckDB's own default is last in both). Q12 at sf 0.5 cuts its ordered answer at 100 rows among NULLs.
    con.execute("SET default_null_order = 'nulls_first_on_asc_last_on_desc'")
    for name, path in tables.items():
        con.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet('{os.path.join(path, '*.parquet')}')")
    return con


def duckdb_queries() -> dict[int, str]:
    """The 99 query texts as DuckDB ships them (its dialect), by number."""
    return dict(_duckdb_queries())


@functools.cache
def _duckdb_queries() -> dict[int, str]:
    con = connect()
    try:
        return {int(n): text for n, text in con.execute("SELECT query_nr, query FROM tpcds_queries()").fetchall()}
    finally:
        con.close()


# Spark's dialect


Edit = Callable[[str], str]

_DOUBLE_QUOTED_ALIAS = re.compile(r'\bAS\s+"([^"`]+)"', re.IGNORECASE)


def backquote_aliases(text: str) -> str:
    """``AS "order count"`` -> ``AS `order count```: Spark parses a double-quoted name as a string literal."""
    edited, count = _DOUBLE_QUOTED_ALIAS.subn(lambda m: f"AS `{m.group(1)}`", text)
    if not count:
        raise ValueError("no double-quoted alias to backquote")
    return edited


# number -> (why, the edits in order); one line of why per query.
EDITS: dict[int, tuple[str, tuple[Edit, ...]]] = {
    16: ('aliases "order count", "total shipping cost", ... are double-quoted: backquoted', (backquote_aliases,)),
    32: ('alias "excess discount amount" is double-quoted: backquoted', (backquote_aliases,)),
    50: ('aliases "30 days", "31-60 days", ... are double-quoted: backquoted', (backquote_aliases,)),
    62: ('aliases "30 days", "31-60 days", ... are double-quoted: backquoted', (backquote_aliases,)),
    92: ('alias "Excess Discount Amount" is double-quoted: backquoted', (backquote_aliases,)),
    94: ('aliases "order count", "total shipping cost", ... are double-quoted: backquoted', (backquote_aliases,)),
    95: ('aliases "order count", "total shipping cost", ... are double-quoted: backquoted', (backquote_aliases,)),
    99: ('aliases "30 days", "31-60 days", ... are double-quoted: backquoted', (backquote_aliases,)),
}


def to_spark(number: int, text: str) -> str:
    """Query ``number``'s DuckDB text in Spark's dialect (``spark.sql`` takes no trailing semicolon)."""
    for edit in EDITS.get(number, ("", ()))[1]:
        text = edit(text)
    return text.strip().rstrip(";").rstrip()


def queries() -> dict[int | str, str]:
    """The 99 query texts in Spark's dialect, by number (DuckDB's; for 14, 23, 24, 39 the 'a' part)."""
    return {n: to_spark(n, text) for n, text in duckdb_queries().items()}
