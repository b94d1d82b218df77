"""DataFrame capture (``capture_agent.record.capture.captured_frames``) against plain PySpark.

Workloads on generated TPC-H-like Parquet tables (written once under --data-dir by Spark):
  q1  lineitem filtered by ship date, grouped by return flag and line status: sums, averages, count
  q3  customer (one segment) x orders (before a date) x lineitem (shipped after it), revenue per
      order, the top 10 by revenue
  groupby  lineitem's quantity per part key (200,000 keys), collected
  csv  lineitem as CSV (with a header, the schema given): the lines of small quantity, their
       quantity and top price per part key (200,000 keys)
  q1orc  q1 on lineitem as ORC (Spark gives no ORC row index: the agent reads ORC itself)

Each workload runs plain and captured in Spark applications of their own (a JVM each, as a user's
job has: in one JVM, the JIT compiles Spark's shared methods, its column readers among them, for
whichever variant's queries came first, and the other then runs code compiled for another
query), --rounds applications of each, plain first in one round and captured first in the
next; each application runs the query once to warm up, then --runs times. The ratio is
median(captured) / median(plain) of the wall-clock times of all the timed runs, and the paired
ratio the median over the rounds of the ratio of the round's two applications' medians (they
ran one after the other: a machine that slows for a while slows both); each round's ratio is
printed too. Each timed query starts on a settled machine (``settle``): the JVM collected
(Spark's cleaner then deletes the last query's shuffle files) and the files written so far
flushed to disk; else a query pays for the one before it (seen here: Q3 run right after another
Q3 took up to a fifth longer). The captured rows are checked against the plain ones (floats to
nine digits: two applications may merge partial sums in another order). Then, on the last
captured application's last run: the lineage bytes (the tables of the output point and of the
aggregates' combiner points it reads; sources write nothing) as a share of the input's bytes,
and the time of a one-row backward trace (to the source ids) and of reading the source rows of
one output row.

    .venv/bin/python bench/dataframe_capture.py                        # 2M lineitem rows, quick
    .venv/bin/python bench/dataframe_capture.py --lineitem 16000000    # 0.4 GB of Parquet, 1.1 GB of CSV
    .venv/bin/python bench/dataframe_capture.py --lineitem 40000000 --workloads q1,q3,q1orc   # 1 GB of Parquet

``--capture implicit`` captures the same queries the way an unmodified job is (``spark.read`` and
``enable(spark, records=True)``: the plan rewritten in the JVM, ``capture.frame_plan``) instead of
through ``lc.read`` (the default, ``explicit``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

from _own_applications import VARIANTS, bench_session, in_own_process, round_order, settle, write_result  # noqa: E402


def generate(spark: Any, folder: str, lineitem: int) -> dict[str, str]:
    """The three tables (orders: lineitem / 4 rows, customers: orders / 10) and lineitem as CSV,
    written once."""
    from pyspark.sql import functions as F

    paths = {name: os.path.join(folder, f"{name}-{lineitem}") for name in ("lineitem", "orders", "customer")}
    csv_path = os.path.join(folder, f"lineitem-csv-{lineitem}")
    orc_path = os.path.join(folder, f"lineitem-orc-{lineitem}")
    copies = {"lineitem_csv": csv_path, "lineitem_orc": orc_path}
    if all(os.path.exists(p) for p in paths.values()):
        if not os.path.exists(csv_path):
            spark.read.parquet(paths["lineitem"]).write.csv(csv_path, header=True)
        if not os.path.exists(orc_path):
            spark.read.parquet(paths["lineitem"]).write.orc(orc_path)
        return {**paths, **copies}
    orders, customers = max(1, lineitem // 4), max(1, lineitem // 40)
    h = F.xxhash64
    (spark.range(lineitem).select(
        (F.col("id") % orders).alias("l_orderkey"), (F.abs(h("id", F.lit(1))) % 200_000).alias("l_partkey"),
        (F.abs(h("id", F.lit(2))) % 50 + 1).cast("double").alias("l_quantity"),
        (F.abs(h("id", F.lit(3))) % 100_000 / 100.0).alias("l_extendedprice"),
        (F.abs(h("id", F.lit(4))) % 11 / 100.0).alias("l_discount"),
        (F.abs(h("id", F.lit(5))) % 9 / 100.0).alias("l_tax"),
        F.element_at(F.array(F.lit("A"), F.lit("N"), F.lit("R")), (F.abs(h("id", F.lit(6))) % 3 + 1).cast("int"))
        .alias("l_returnflag"),
        F.when(F.abs(h("id", F.lit(7))) % 2 == 0, "O").otherwise("F").alias("l_linestatus"),
        F.date_add(F.lit("1992-01-01").cast("date"), (F.abs(h("id", F.lit(8))) % 2500).cast("int"))
        .alias("l_shipdate"),
        F.concat(F.lit("comment "), F.col("id").cast("string")).alias("l_comment"))
     .write.parquet(paths["lineitem"]))
    (spark.range(orders).select(
        F.col("id").alias("o_orderkey"), (F.abs(h("id", F.lit(9))) % customers).alias("o_custkey"),
        F.date_add(F.lit("1992-01-01").cast("date"), (F.abs(h("id", F.lit(10))) % 2400).cast("int"))
        .alias("o_orderdate"), (F.abs(h("id", F.lit(11))) % 5).cast("int").alias("o_shippriority"))
     .write.parquet(paths["orders"]))
    (spark.range(customers).select(
        F.col("id").alias("c_custkey"),
        F.element_at(F.array(*[F.lit(s) for s in ("AUTOMOBILE", "BUILDING", "FURNITURE", "HOUSEHOLD", "MACHINERY")]),
                     (F.abs(h("id", F.lit(12))) % 5 + 1).cast("int")).alias("c_mktsegment"))
     .write.parquet(paths["customer"]))
    spark.read.parquet(paths["lineitem"]).write.csv(csv_path, header=True)
    spark.read.parquet(paths["lineitem"]).write.orc(orc_path)
    return {**paths, **copies}


def q1(t: dict[str, Any]) -> Any:
    from pyspark.sql import functions as F

    li = t["lineitem"]
    return (li.where(F.col("l_shipdate") <= F.lit("1998-09-02").cast("date"))
            .groupBy("l_returnflag", "l_linestatus")
            .agg(F.sum("l_quantity").alias("sum_qty"), F.sum("l_extendedprice").alias("sum_base_price"),
                 F.sum(F.col("l_extendedprice") * (1 - F.col("l_discount"))).alias("sum_disc_price"),
                 F.avg("l_quantity").alias("avg_qty"), F.avg("l_discount").alias("avg_disc"),
                 F.count(F.lit(1)).alias("count_order"))
            .orderBy("l_returnflag", "l_linestatus"))


def q3(t: dict[str, Any]) -> Any:
    from pyspark.sql import functions as F

    day = F.lit("1995-03-15").cast("date")
    return (t["customer"].where(F.col("c_mktsegment") == "BUILDING")
            .join(t["orders"].where(F.col("o_orderdate") < day), F.col("c_custkey") == F.col("o_custkey"))
            .join(t["lineitem"].where(F.col("l_shipdate") > day), F.col("l_orderkey") == F.col("o_orderkey"))
            .groupBy("l_orderkey", "o_orderdate", "o_shippriority")
            .agg(F.sum(F.col("l_extendedprice") * (1 - F.col("l_discount"))).alias("revenue"))
            .orderBy(F.desc("revenue"), "o_orderdate").limit(10))


def groupby(t: dict[str, Any]) -> Any:
    from pyspark.sql import functions as F

    return t["lineitem"].groupBy("l_partkey").agg(F.sum("l_quantity").alias("qty"))


def csv(t: dict[str, Any]) -> Any:
    from pyspark.sql import functions as F

    return (t["lineitem_csv"].where(F.col("l_quantity") < 10).groupBy("l_partkey")  # exact sums: any order
            .agg(F.sum("l_quantity").alias("qty"), F.max("l_extendedprice").alias("top_price")))


def q1orc(t: dict[str, Any]) -> Any:
    return q1({"lineitem": t["lineitem_orc"]})


WORKLOADS: dict[str, Callable[[dict[str, Any]], Any]] = {"q1": q1, "q3": q3, "groupby": groupby, "csv": csv,
                                                          "q1orc": q1orc}
USES = {"q1": ["lineitem"], "groupby": ["lineitem"], "q3": ["lineitem", "orders", "customer"],
        "csv": ["lineitem_csv"], "q1orc": ["lineitem_orc"]}


def tables(reader: Any, paths: dict[str, str], names: list[str], schema: Any) -> dict[str, Any]:
    """The workload's tables through ``reader`` (``spark.read`` or ``lc.read``)."""
    return {name: reader.csv(paths[name], header=True, schema=schema) if name.endswith("_csv")
            else reader.orc(paths[name]) if name.endswith("_orc") else reader.parquet(paths[name]) for name in names}


def timed(spark: Any, reader: Any, job: Callable[[dict[str, Any]], Any], paths: dict[str, str], used: list[str],
          schema: Any) -> tuple[float, list[Any], Any]:
    """The wall time of ``job`` over the tables read by ``reader`` (read, built and collected) from
    a settled machine, its rows and its frame."""
    settle(spark)
    start = time.perf_counter()
    frame = job(tables(reader, paths, used, schema))
    rows = frame.collect()
    return time.perf_counter() - start, rows, frame


def folder_bytes(path: str) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path) for f in files)


def same_rows(a: list[list[Any]], b: list[list[Any]]) -> bool:
    """Rows equal in any order, floats to nine digits (a sum of doubles depends on the order its
    partial sums merge in, which two applications need not share)."""
    def key(row: list[Any]) -> list[Any]:
        return [float(f"{v:.9g}") if isinstance(v, float) else v for v in row]
    return sorted(map(key, a), key=repr) == sorted(map(key, b), key=repr)


def variant(args: argparse.Namespace, name: str, captured: bool) -> dict[str, Any]:
    """One Spark application (a JVM of its own, as a user's job has) running workload ``name``
    plainly or captured, once to warm up and then ``--runs`` times: the times, the rows, and for a
    captured one the lineage's bytes and the trace times of its last run."""
    from capture_agent import LineageContext

    spark = bench_session("dataframe-capture-bench", args.master)
    store = tempfile.mkdtemp(prefix="lineage-bench-store-")
    try:
        paths = generate(spark, args.data_dir, args.lineitem)
        implicit = captured and args.capture == "implicit"
        if implicit:
            from capture_agent.record.capture.implicit import enable_records

            lc = enable_records(spark, store)
        else:
            lc = LineageContext(spark, store=store) if captured else None
        reader = lc.read if lc and not implicit else spark.read
        schema = spark.read.parquet(paths["lineitem"]).schema
        used = USES[name]
        times: list[float] = []
        for run in range(args.runs + 1):
            seconds, rows, frame = timed(spark, reader, WORKLOADS[name], paths, used, schema)
            if run:  # the first run warms up
                times.append(seconds)
        out: dict[str, Any] = {"times": times, "rows": [list(r) for r in rows],
                               "input_bytes": sum(folder_bytes(paths[u]) for u in used)}
        if lc is not None:
            point = [p for p in lc.store.by_seq() if p.kind == "output"][-1].capture_id if implicit else frame._point
            out["lineage_bytes"] = sum(lc.store.point(cid).bytes for cid in lc.store.ancestors(point))
            start = time.perf_counter()
            out["traced"] = lc.lineage(point, [0]).goBackAll().count()
            out["backward_s"] = time.perf_counter() - start
            start = time.perf_counter()
            lc.lineage(point, [0]).goBackAll().take(10)
            out["rows_s"] = time.perf_counter() - start
        return out
    finally:
        spark.stop()
        shutil.rmtree(store, ignore_errors=True)


def spawn(args: argparse.Namespace, name: str, which: str) -> dict[str, Any]:
    """``variant`` in a process of its own."""
    argv = ["--variant", which, "--workloads", name, "--lineitem", str(args.lineitem), "--runs", str(args.runs),
            "--data-dir", args.data_dir, "--master", args.master, "--capture", args.capture]
    result: dict[str, Any] = in_own_process(__file__, argv)[-1]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lineitem", type=int, default=2_000_000, help="lineitem rows (16M: about 1 GB)")
    parser.add_argument("--runs", type=int, default=3, help="timed runs in each application")
    parser.add_argument("--rounds", type=int, default=3, help="applications of each variant")
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--data-dir", default=os.path.join(tempfile.gettempdir(), "lineage-bench-dataframes"))
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--capture", choices=("explicit", "implicit"), default="explicit",
                        help="lc.read (explicit) or an unmodified job's spark.read with records on (implicit)")
    parser.add_argument("--variant", choices=VARIANTS, help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.variant:
        write_result(args.result, variant(args, args.workloads, args.variant == "captured"))
        return
    os.makedirs(args.data_dir, exist_ok=True)
    print(f"lineitem {args.lineitem:,} rows; {args.rounds} applications of each variant, {args.runs} runs "
          f"each; {args.master}; capture {args.capture}", flush=True)
    for name in args.workloads.split(","):
        plain_times, captured_times, paired = [], [], []
        last: dict[str, Any] = {}
        for round_ in range(args.rounds):
            got = {which: spawn(args, name, which) for which in round_order(round_)}
            if not same_rows(got["captured"]["rows"], got["plain"]["rows"]):
                raise SystemExit(f"{name}: captured rows differ from plain PySpark's")
            plain_times += got["plain"]["times"]
            captured_times += got["captured"]["times"]
            paired.append(statistics.median(got["captured"]["times"]) / statistics.median(got["plain"]["times"]))
            last = got["captured"]
        plain_m, captured_m = statistics.median(plain_times), statistics.median(captured_times)
        print(f"{name:8s} plain {plain_m:6.2f} s  captured {captured_m:6.2f} s  ratio {captured_m / plain_m:4.2f}  "
              f"paired {statistics.median(paired):4.2f} ({', '.join(f'{r:.2f}' for r in paired)})  "
              f"(plain {', '.join(f'{t:.2f}' for t in plain_times)}; "
              f"captured {', '.join(f'{t:.2f}' for t in captured_times)})")
        lineage, input_bytes = last["lineage_bytes"], last["input_bytes"]
        print(f"{'':8s} lineage {lineage / 1e6:.2f} MB = {100 * lineage / input_bytes:.2f}% of the input's "
              f"{input_bytes / 1e6:.0f} MB;"
              f" one-row backward trace {last['backward_s']:.3f} s ({last['traced']:,} source rows); the trace and 10"
              f" of its rows read in {last['rows_s']:.3f} s", flush=True)


if __name__ == "__main__":
    main()
