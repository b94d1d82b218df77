"""A captured DataFrame job whose output columns come from its sources' columns in every way a
traced row can show (a join, an aggregate, expressions), and where each of them comes from,
written out by hand: the oracle of a backward trace's ``columns``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

ORDERS = [(i, f"c{i % 5}", float(i % 11)) for i in range(60)]
CUSTOMERS = [(f"c{i}", ["jp", "fr"][i % 2]) for i in range(5)]

# (output column) -> {(source dataset, source column, type, kind)}: worked out from the query below
DIRECT, INDIRECT = "DIRECT", "INDIRECT"
Source = tuple[str, str, str, str]  # (dataset, column, type, kind)
COLUMN_SOURCES: dict[str, set[Source]] = {
    "country": {("customers", "country", DIRECT, "IDENTITY")},  # the group's key, as it is
    "doubled": {("orders", "amount", DIRECT, "AGGREGATION")},  # sum(amount * 2)
    "last": {("orders", "customer_id", DIRECT, "AGGREGATION")},  # max of the join key (using: the left's)
    "n": set(),  # count(*) reads no column
    "label": {("customers", "country", DIRECT, "TRANSFORMATION")},  # upper(country) || '-' || n
    # when(sum(amount) > 100, 'big').otherwise(country): its value is country's, amount chooses it
    "size": {("customers", "country", DIRECT, "TRANSFORMATION"), ("orders", "amount", INDIRECT, "CONDITIONAL")},
}
# the columns that decide which rows there are
ROWS_DECIDED_BY = {("orders", "customer_id", INDIRECT, "JOIN"), ("customers", "customer_id", INDIRECT, "JOIN"),
                   ("orders", "amount", INDIRECT, "FILTER"), ("customers", "country", INDIRECT, "GROUP_BY")}


def totals_query(reader: Any, folder: Path) -> Any:
    """The job: orders over 2 joined with their customers, per country: twice the amounts summed,
    the last customer id, the count, a label and a size computed from them."""
    from pyspark.sql import functions as F

    orders, customers = reader.read.parquet(str(folder / "orders")), reader.read.parquet(str(folder / "customers"))
    per_country = orders.join(customers, "customer_id").where(F.col("amount") > 2).groupBy("country").agg(
        F.sum(F.col("amount") * 2).alias("doubled"), F.max("customer_id").alias("last"), F.count("*").alias("n"),
        F.sum("amount").alias("amounts"))
    return per_country.select(
        "country", "doubled", "last", "n",
        F.concat(F.upper("country"), F.lit("-"), F.col("n").cast("string")).alias("label"),
        F.when(F.col("amounts") > 100, F.lit("big")).otherwise(F.col("country")).alias("size"))


def write_tables(spark: Any, folder: Path) -> None:
    spark.createDataFrame(ORDERS, "order_id long, customer_id string, amount double").repartition(2) \
        .write.parquet(str(folder / "orders"))
    spark.createDataFrame(CUSTOMERS, "customer_id string, country string").write.parquet(str(folder / "customers"))


def capture_totals(spark: Any, server_url: str, token: str, folder: Path) -> tuple[str, list[Any]]:
    """The job unmodified, its records captured by configuration (records on), registered with the
    server at ``server_url``; its tables and lineage store under ``folder``. Returns the app id and
    the rows it collected."""
    import capture_agent
    from capture_agent.record.capture import implicit

    folder.mkdir(parents=True, exist_ok=True)
    write_tables(spark, folder)
    agent = capture_agent.enable(spark, server_url=server_url, token=token, spool_dir=str(folder / "spool"))
    implicit.enable_records(spark, str(folder / "store"))
    try:
        rows = totals_query(spark, folder).collect()
        agent.flush(30)
    finally:
        implicit.disable_records(spark)
        capture_agent.disable()
    return str(spark.sparkContext.applicationId), rows


def expected_sources(folder: Path) -> tuple[dict[str, set[Source]], set[Source]]:
    """The oracle with each dataset named by its path as the catalog spells it (``file:/...``)."""
    def path(name: str) -> str:
        return f"file:{folder.resolve() / name}"

    columns = {column: {(path(d), c, t, k) for d, c, t, k in sources} for column, sources in COLUMN_SOURCES.items()}
    return columns, {(path(d), c, t, k) for d, c, t, k in ROWS_DECIDED_BY}


def jp_sources() -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The records a backward trace of the ``jp`` row reaches: its orders over 2, its customers."""
    japanese = {c for c, country in CUSTOMERS if country == "jp"}
    return [o for o in ORDERS if o[1] in japanese and o[2] > 2], [c for c in CUSTOMERS if c[0] in japanese]
