"""A captured DataFrame output's plan kept in the run's folder (``capture.kept``'s ``frames``) and
replayed from there (``query.stored_job``, ``java/lineage/sql/KeptPlan.java``): new values equal
to the query recomputed from the data without the deleted rows, and each reason a replay from the
folder gives when it cannot run."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from capture_agent.record import LineageRun, ReplayNotPossible
from capture_agent.record.query.replay_strategies import FrameQuery
from capture_agent.record.query.stored_job import FOLDER, JOB_FILE

pytestmark = pytest.mark.spark

ORDERS = [(i, f"c{i % 5}", float(i % 11), f"item-{i % 4}") for i in range(80)]
CUSTOMERS = [(f"c{i}", ["jp", "fr"][i % 2]) for i in range(5)]


def job_of(lc: Any) -> dict[str, Any]:
    return json.loads(open(f"{lc.run_dir}/{FOLDER}/{JOB_FILE}").read())


@pytest.fixture
def orders(spark: Any, tmp_path: Path) -> str:
    path = str(tmp_path / "orders")
    spark.createDataFrame(ORDERS, "order_id long, customer_id string, amount double, item string") \
        .repartition(3).write.parquet(path)
    return path


def per_country(lc: Any, orders: str) -> Any:
    """Orders over 3 joined with customers, a Python UDF on the country, totals and counts by it."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    loud = F.udf(lambda s: s.upper(), T.StringType())
    customers = lc.createDataFrame(CUSTOMERS, "customer_id string, country string")
    return lc.read.parquet(orders).where(F.col("amount") > 3).join(customers, "customer_id") \
        .withColumn("country", loud("country")).groupBy("country") \
        .agg(F.sum("amount").alias("total"), F.count("*").alias("n"))


def totals(orders: list[tuple[Any, ...]], customers: list[tuple[str, str]]) -> dict[str, tuple[float, int]]:
    country = dict(customers)
    out: dict[str, tuple[float, int]] = {}
    for o in orders:
        if o[2] > 3 and o[1] in country:
            total, n = out.get(country[o[1]].upper(), (0.0, 0))
            out[country[o[1]].upper()] = (total + o[2], n + 1)
    return out


def test_a_frame_s_plan_is_kept_and_replayed_from_the_folder(lc: Any, sc: Any, orders: str) -> None:
    frame = per_country(lc, orders)
    before = {r.country: (r.total, r.n) for r in frame.collect()}
    assert before == totals(ORDERS, CUSTOMERS)
    job = job_of(lc)
    [(output, kept)] = job["frames"].items()
    assert kept["names"] == ["country", "total", "n"] and len(kept["columns"]) == 2  # orders and customers
    assert os.path.getsize(f"{lc.run_dir}/{FOLDER}/{kept['plan']}.plan") == job["functions"][kept["plan"]]

    run = LineageRun(lc.run_dir, sc)
    [source] = [p.capture_id for p in run.capture_points() if p.op == "read.parquet"]
    gone = [o for o in ORDERS if o[0] % 3 == 0 or o[1] == "c1"]
    doomed = run.lineage(source).filter(lambda r: r.order_id % 3 == 0 or r.customer_id == "c1")
    impact = doomed.whatIfDeleted(output)
    after = totals([o for o in ORDERS if o not in gone], CUSTOMERS)
    assert sorted((old.country, (old.total, old.n), (new.total, new.n)) for old, new in impact.changed()) == \
        sorted((c, before[c], after[c]) for c in after if after[c] != before[c])
    assert impact.deleted() == [] and impact.appeared() == []
    assert impact.replay()["how"] == FrameQuery.name
    # a customer's row left out: the other source of the same plan
    [customers] = [p.capture_id for p in run.capture_points() if p.op == "createDataFrame"]
    impact = run.lineage(customers).filter(lambda r: r.country == "fr").whatIfDeleted(output)
    assert [r.country for r in impact.deleted()] == ["FR"] and impact.changed() == []
    # the replays wrote no tables over the capture's: the lineage is still the whole one
    assert frame.getLineage().filter(lambda r: r.country == "FR").goBackAll().count() == \
        sum(1 for o in ORDERS if o[2] > 3 and dict(CUSTOMERS)[o[1]] == "fr") + 2


def test_an_output_s_frame_is_not_held_once_its_action_ran(lc: Any, orders: str) -> None:
    """The context keeps what replays an output in the job's process (its analyzed plan), not its
    frame: the frame's executed plan holds what the action built (each broadcast table's hashed
    relation, a page of up to 64 MB), which the job's later queries need the memory of. A what-if
    in the job's process still replays it."""
    import gc

    from capture_agent.record.capture.frames import LineageFrame

    frame = per_country(lc, orders)
    before = {r.country: (r.total, r.n) for r in frame.collect()}
    [output] = job_of(lc)["frames"]
    del frame
    gc.collect()
    sources = {id(f) for f in lc.frames.captured_leaves.values()}
    assert [f for f in gc.get_objects() if isinstance(f, LineageFrame) and f._lc is lc and id(f) not in sources] == []
    [source] = [p.capture_id for p in lc.store.by_seq() if p.op == "read.parquet"]
    impact = lc.lineage(source).filter(lambda r: r.customer_id == "c1").whatIfDeleted(output)
    after = totals([o for o in ORDERS if o[1] != "c1"], CUSTOMERS)
    assert impact.replay()["how"] == FrameQuery.name
    assert sorted((old.country, (old.total, old.n), (new.total, new.n)) for old, new in impact.changed()) == \
        sorted((c, before[c], after[c]) for c in after if after[c] != before[c])


def test_a_changed_input_file_is_not_replayed(lc: Any, sc: Any, orders: str) -> None:
    frame = per_country(lc, orders)
    frame.collect()
    [output] = job_of(lc)["frames"]
    part = sorted(f for f in os.listdir(orders) if f.endswith(".parquet"))[0]
    os.utime(f"{orders}/{part}", (1, 1))
    run = LineageRun(lc.run_dir, sc)
    [source] = [p.capture_id for p in run.capture_points() if p.op == "read.parquet"]
    impact = run.lineage(source, [0]).whatIfDeleted(output)
    with pytest.raises(ReplayNotPossible, match=f"{part} changed since"):
        impact.changed()


def test_csv_and_text_frames_are_replayed_from_the_folder(lc: Any, sc: Any, tmp_path: Path) -> None:
    from pyspark.sql import functions as F

    path = tmp_path / "orders.csv"
    path.write_text("order_id,customer_id,amount\n" + "".join(f"{o[0]},{o[1]},{o[2]}\n" for o in ORDERS))
    frame = lc.read.option("header", True).csv(str(path), schema="order_id long, customer_id string, amount double") \
        .groupBy("customer_id").agg(F.sum("amount").alias("total"))
    before = {r.customer_id: r.total for r in frame.collect()}
    text = lc.read.text(str(path)).where(F.col("value").contains(",c2,"))
    assert text.count() == sum(1 for o in ORDERS if o[1] == "c2")
    kept = job_of(lc)["frames"]
    assert len(kept) == 2 and job_of(lc)["not_kept"] == {}
    run = LineageRun(lc.run_dir, sc)
    csv_source, text_source = [p.capture_id for p in run.capture_points() if p.kind == "input"]
    # a CSV line read back from the file is its string fields
    impact = run.lineage(csv_source).filter(lambda r: int(r.order_id) >= 60).whatIfDeleted(list(kept)[0])
    after: dict[str, float] = {}
    for o in ORDERS[:60]:
        after[o[1]] = after.get(o[1], 0.0) + o[2]
    assert sorted((old.customer_id, old.total, new.total) for old, new in impact.changed()) == \
        sorted((c, before[c], after[c]) for c in before if after[c] != before[c])
    impact = run.lineage(text_source).filter(lambda line: line.startswith("1")).whatIfDeleted(list(kept)[1])
    c2 = [o for o in ORDERS if o[1] == "c2"]
    assert [(old[0], new[0]) for old, new in impact.changed()] == \
        [(len(c2), sum(1 for o in c2 if not str(o[0]).startswith("1")))]


def test_a_json_frame_is_replayed_from_the_folder(lc: Any, sc: Any, tmp_path: Path) -> None:
    """JSON Lines, some lines an array of two orders: deleting a line deletes each of its rows."""
    from pyspark.sql import functions as F

    def record(o: tuple[Any, ...]) -> dict[str, Any]:
        return {"order_id": o[0], "customer_id": o[1], "amount": o[2]}

    lines = [json.dumps([record(ORDERS[i]), record(ORDERS[i + 1])]) if i % 10 == 0 else json.dumps(record(ORDERS[i]))
             for i in range(len(ORDERS)) if i % 10 != 1]
    path = tmp_path / "orders.json"
    path.write_text("\n".join(lines) + "\n")
    frame = lc.read.json(str(path)).groupBy("customer_id").agg(F.sum("amount").alias("total"))
    before = {r.customer_id: r.total for r in frame.collect()}
    assert job_of(lc)["not_kept"] == {}
    run = LineageRun(lc.run_dir, sc)
    source = [p.capture_id for p in run.capture_points() if p.kind == "input"][0]
    deleted = [line for line in lines if '"amount": 5.0' in line]
    assert any(line.startswith("[") for line in deleted)
    output = list(job_of(lc)["frames"])[0]

    def fives(record: Any) -> bool:  # a JSON line read back is its row, or the rows of its array
        return any(r.amount == 5.0 for r in (record if isinstance(record, list) else [record]))

    impact = run.lineage(source).filter(fives).whatIfDeleted(output)
    after: dict[str, float] = {}
    for line in lines:
        if line not in deleted:
            for r in (json.loads(line) if line.startswith("[") else [json.loads(line)]):
                after[r["customer_id"]] = after.get(r["customer_id"], 0.0) + r["amount"]
    assert sorted((old.customer_id, old.total, new.total) for old, new in impact.changed()) == \
        sorted((c, before[c], after[c]) for c in before if after[c] != before[c])


def test_a_frame_of_an_rdd_says_why_it_is_not_kept(lc: Any, sc: Any) -> None:
    pairs = lc.parallelize([(o[1], o[2]) for o in ORDERS], 2).toDF(["customer_id", "amount"])
    totals = pairs.groupBy("customer_id").count()
    totals.collect()
    job = job_of(lc)
    [(output, why)] = [(cid, why) for cid, why in job["not_kept"].items() if cid.endswith("collect")]
    assert output not in job["frames"] and "the rows of an RDD" in why
    run = LineageRun(lc.run_dir, sc)
    [source] = [p.capture_id for p in run.capture_points() if p.kind == "input"]
    impact = run.lineage(source, [0]).whatIfDeleted(output)
    with pytest.raises(ReplayNotPossible, match="the rows of an RDD"):
        impact.changed()


def test_an_orc_frame_is_replayed_from_the_folder(lc: Any, sc: Any, spark: Any, tmp_path: Path) -> None:
    from pyspark.sql import functions as F

    path = str(tmp_path / "orders.orc")
    spark.createDataFrame(ORDERS, "order_id long, customer_id string, amount double, item string") \
        .repartition(2).write.orc(path)
    frame = lc.read.orc(path).groupBy("item").agg(F.sum("amount").alias("total"))
    before = {r.item: r.total for r in frame.collect()}
    [output] = job_of(lc)["frames"]
    run = LineageRun(lc.run_dir, sc)
    [source] = [p.capture_id for p in run.capture_points() if p.op == "read.orc"]
    impact = run.lineage(source).filter(lambda r: r.order_id < 20).whatIfDeleted(output)
    after: dict[str, float] = {}
    for o in ORDERS[20:]:
        after[o[3]] = after.get(o[3], 0.0) + o[2]
    assert sorted((old.item, old.total, new.total) for old, new in impact.changed()) == \
        sorted((i, before[i], after[i]) for i in before if after[i] != before[i])


def test_a_kept_plan_holding_another_class_is_refused_before_it_is_made(lc: Any, sc: Any, orders: str) -> None:
    frame = per_country(lc, orders)
    frame.collect()
    [(output, kept)] = job_of(lc)["frames"].items()
    jvm = sc._jvm
    buffer = jvm.java.io.ByteArrayOutputStream()
    stream = jvm.java.io.ObjectOutputStream(buffer)
    stream.writeObject(jvm.java.io.File("/etc/passwd"))  # serializable, outside the classes a plan holds
    stream.close()
    Path(f"{lc.run_dir}/{FOLDER}/{kept['plan']}.plan").write_bytes(bytes(buffer.toByteArray()))
    run = LineageRun(lc.run_dir, sc)
    [source] = [p.capture_id for p in run.capture_points() if p.op == "read.parquet"]
    impact = run.lineage(source, [0]).whatIfDeleted(output)
    with pytest.raises(ReplayNotPossible, match="java.io.File; a kept plan may not hold it"):
        impact.changed()


def test_a_kept_plan_leaves_out_secret_reader_options(lc: Any, sc: Any, orders: str) -> None:
    from pyspark.sql import functions as F

    frame = lc.read.option("fs.s3a.secret.key", "hunter2-secret").option("mergeSchema", "false").parquet(orders) \
        .groupBy("item").agg(F.count("*").alias("n"))
    frame.collect()
    [(output, kept)] = job_of(lc)["frames"].items()
    data = Path(f"{lc.run_dir}/{FOLDER}/{kept['plan']}.plan").read_bytes()
    assert b"mergeschema" in data.lower() and b"hunter2-secret" not in data  # Spark's options: any case
    run = LineageRun(lc.run_dir, sc)
    [source] = [p.capture_id for p in run.capture_points() if p.op == "read.parquet"]
    impact = run.lineage(source).filter(lambda r: r.item == "item-1").whatIfDeleted(output)
    assert [r.item for r in impact.deleted()] == ["item-1"]
