"""Captured ORC and Parquet sources (``lc.read.orc``, ``lc.read.parquet``, ``lc.read.table`` of
such a table): rows read in the JVM with ids (file, row number; ``java/lineage/sql/Orc.java``,
``Parquet.java``), against the data both ways and against Spark's own reader; and the Parquet reads
left to Spark's ``_metadata.row_index``."""

from __future__ import annotations

import datetime
import decimal
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from capture_agent.record.errors import UnsupportedOperation

ROWS = 30_000


@pytest.fixture(params=["orc", "parquet"])
def striped(request: Any, tmp_path: Path) -> str:
    """Two ORC or Parquet files written by pyarrow in stripes (row groups) of a few thousand rows
    (n, g = n * 7 % 13, s); ``_read``/``_first`` tell the format by the folder's name."""
    import pyarrow as pa
    import pyarrow.orc as po
    import pyarrow.parquet as pq

    fmt = request.param
    folder = tmp_path / f"striped-{fmt}"
    folder.mkdir()
    for part, (low, high) in enumerate([(0, ROWS // 3), (ROWS // 3, ROWS)]):
        ns = list(range(low, high))
        table = pa.table({"n": ns, "g": [n * 7 % 13 for n in ns], "s": [f"row {n}" for n in ns]})
        if fmt == "orc":
            po.write_table(table, str(folder / f"part-{part}.orc"), stripe_size=32 * 1024, batch_size=512)
        else:
            pq.write_table(table, str(folder / f"part-{part}.parquet"), row_group_size=2000)
    counts = [po.ORCFile(str(f)).nstripes if fmt == "orc" else pq.ParquetFile(str(f)).num_row_groups
              for f in folder.iterdir()]
    assert all(count > 3 for count in counts)
    return str(folder)


def _fmt(folder: str) -> str:
    return "orc" if folder.endswith("-orc") else "parquet"


def _read(reader: Any, folder: str) -> Any:
    """``reader``'s read (``lc.read`` or ``spark.read``) of the files of ``striped``."""
    return getattr(reader, _fmt(folder))(folder)


def _first(source: str, offset: int) -> Any:
    """The value of n of the row at ``offset`` of the file ``source``, as pyarrow reads it."""
    import pyarrow.orc as po
    import pyarrow.parquet as pq

    local = source.removeprefix("file://").removeprefix("file:")
    table = po.ORCFile(local).read() if local.endswith(".orc") else pq.read_table(local)
    return table.slice(offset, 1).column("n")[0].as_py()


def _max_split(spark: Any, size: str | None) -> Any:
    old = spark.conf.get("spark.sql.files.maxPartitionBytes")
    spark.conf.set("spark.sql.files.maxPartitionBytes", size or old)
    return old


def test_rows_and_ids_do_not_depend_on_the_split_size(lc: Any, spark: Any, striped: str) -> None:
    """Splits of one stripe and of whole files give the same rows, each with the same position:
    its file and its row number there (pyarrow's row of that number)."""
    plain = Counter(map(tuple, _read(spark.read, striped).collect()))
    seen = []
    for size in ("40k", "64m"):
        old = _max_split(spark, size)
        try:
            frame = _read(lc.read, striped)
            assert Counter(map(tuple, frame.collect())) == plain
            assert f"lineage_{_fmt(striped)}(2 files)" in frame._df._jdf.queryExecution().executedPlan().toString()
            seen.append(frame._df.rdd.getNumPartitions())
            lineage = frame.getLineage().filter(lambda r: r.n % 997 == 0)
            positions = sorted((p.source, p.offset) for p in lineage.goBackAll().positions())
            rows = sorted(tuple(r) for r in lineage.goBackAll().collect())
        finally:
            _max_split(spark, old)
        assert rows == sorted((n, n * 7 % 13, f"row {n}") for n in range(0, ROWS, 997))
        assert len(positions) == len(rows)
        for source, offset in positions:
            assert _first(source, offset) % 997 == 0
        if size == "40k":
            small = positions
    assert positions == small
    assert seen[0] > seen[1] >= 1


def test_aggregate_traces_both_ways(lc: Any, spark: Any, striped: str) -> None:
    from pyspark.sql import functions as F

    def job(df: Any) -> Any:
        return df.where(F.col("n") % 3 != 0).groupBy("g").agg(F.sum("n").alias("total"), F.count("*").alias("c"))

    old = _max_split(spark, "40k")
    try:
        source = _read(lc.read, striped)
        frame = job(source)
        assert Counter(map(tuple, frame.collect())) == Counter(map(tuple, job(_read(spark.read, striped)).collect()))
        scans = [line for line in str(frame._df._jdf.queryExecution().executedPlan().toString()).splitlines()
                 if "BatchScan" in line and f"lineage_{_fmt(striped)}(2 files)" in line]
        assert scans and all("[n#" in line and "s#" not in line for line in scans)  # only the columns read
        back = frame.getLineage().filter(lambda r: r.g == 5).goBackAll().collect()
        assert sorted(r.n for r in back) == [n for n in range(ROWS) if n * 7 % 13 == 5 and n % 3 != 0]
        forward = source.getLineage().filter(lambda r: r.n in (4, 9)).goNextAll().collect()
        g = 4 * 7 % 13  # 9 is filtered out
        assert [tuple(r) for r in forward] == [(g, sum(n for n in range(ROWS) if n * 7 % 13 == g and n % 3 != 0),
                                                sum(1 for n in range(ROWS) if n * 7 % 13 == g and n % 3 != 0))]
        # a what-if runs the query again with the rows left out right above the file read
        impact = source.getLineage().filter(lambda r: r.n < 100).whatIfDeleted(frame)
        kept = [n for n in range(100, ROWS) if n % 3 != 0]
        assert sorted((old.g, new.total) for old, new in impact.changed()) == \
            sorted((k, sum(n for n in kept if n * 7 % 13 == k)) for k in range(13))
    finally:
        _max_split(spark, old)


@pytest.mark.parametrize("fmt", ["orc", "parquet"])
def test_values_of_every_type_as_spark_reads_them(lc: Any, spark: Any, tmp_path: Path, fmt: str) -> None:
    """Files Spark wrote: dates, timestamps, decimals, arrays, structs and nulls come out of the
    captured read as Spark's reader gives them, and back out of a trace as the same values."""
    path = str(tmp_path / "typed")
    rows = [(i, datetime.date(2026, 1, 1 + i % 28), datetime.datetime(2026, 1, 2, 3, i % 60, 5),
             decimal.Decimal(i) / 4, [i, i + 1], (f"a{i}", i) if i % 5 else None, None if i % 7 else "seven")
            for i in range(200)]
    spark.createDataFrame(rows, "n long, d date, t timestamp, m decimal(10,2), xs array<int>, "
                                "st struct<a:string,b:long>, o string").repartition(3).write.format(fmt).save(path)
    frame = getattr(lc.read, fmt)(path)
    got = frame.collect()
    assert f"lineage_{fmt}(3 files)" in frame._df._jdf.queryExecution().executedPlan().toString()
    assert sorted(map(repr, got)) == sorted(map(repr, spark.read.format(fmt).load(path).collect()))
    traced = frame.getLineage().filter(lambda r: r.n == 14).goBackAll().collect()
    want = next(r for r in got if r.n == 14)
    assert [(r.n, r.d, r.t, r.m, r.xs, r.o) for r in traced] == [(14, want.d, want.t, want.m, want.xs, "seven")]


def test_orc_tables_and_partitioned_folders(lc: Any, spark: Any, tmp_path: Path) -> None:
    """A catalog table stored as ORC is captured like its files; a partitioned folder, whose
    partition column is in no file, is refused before anything runs."""
    from pyspark.sql import functions as F

    spark.range(50).select(F.col("id").alias("n"), (F.col("id") % 4).alias("k")) \
        .write.format("orc").mode("overwrite").option("path", str(tmp_path / "t")).saveAsTable("orc_numbers")
    try:
        per_k = lc.read.table("orc_numbers").groupBy("k").agg(F.count("*").alias("c"))
        assert sorted(map(tuple, per_k.collect())) == [(k, 13 if k < 2 else 12) for k in range(4)]
        assert sorted(r.n for r in per_k.getLineage().filter(lambda r: r.k == 3).goBackAll().collect()) == \
            list(range(3, 50, 4))
    finally:
        spark.sql("DROP TABLE IF EXISTS orc_numbers")
    folder = str(tmp_path / "parts")
    spark.range(10).select(F.col("id").alias("n"), (F.col("id") % 2).alias("k")).write.partitionBy("k").orc(folder)
    with pytest.raises(UnsupportedOperation, match="not in the ORC files"):
        lc.read.orc(folder)


def test_the_coarse_agent_records_a_read_as_its_folder(lc: Any, spark: Any, striped: str) -> None:
    """The SQL execution of a captured ORC or Parquet read names the folder read, in its format, as
    Spark's own reads do (``java/lineage/agent/SqlIo.java`` reads the data source table's location)."""
    import capture_agent
    from capture_agent import CollectingSink

    sink = CollectingSink()
    agent = capture_agent.enable(spark, sink=sink)
    try:
        assert _read(lc.read, striped).count() == ROWS
        agent.flush()
    finally:
        capture_agent.disable()
    reads = {(e["direction"], e["path"], e["format"]) for e in sink.events if e["type"] == "dataset_io"}
    assert reads == {("read", f"file:{striped}", _fmt(striped))}


def test_rows_come_in_the_tasks_and_order_of_sparks_own_read(lc: Any, spark: Any, striped: str) -> None:
    """Each row of the captured read is in the task, and at the place there, where Spark's own reader
    puts it (monotonically_increasing_id: the task and the row's place in it), whatever the split
    size: an aggregate of floating-point values then adds them in Spark's order, to the same bits."""
    from pyspark.sql import functions as F

    for size in ("40k", "100k", None):
        old = _max_split(spark, size)
        try:
            def placed(df: Any) -> Counter[tuple[Any, ...]]:
                return Counter(map(tuple, df.select("n", F.monotonically_increasing_id()).collect()))

            assert placed(_read(lc.read, striped)) == placed(_read(spark.read, striped))
        finally:
            _max_split(spark, old)


def test_partition_directories_are_read_with_sparks_row_index(lc: Any, spark: Any, tmp_path: Path) -> None:
    """A folder of partition directories (key=value, a column in no file) is read by Spark's own
    scan with ``_metadata.row_index``, its file size and row index read flat (``FlatMetadata``: no
    struct built a row), and traces exactly; a query of ``_metadata`` whole still gets the struct,
    with Spark's values."""
    import pyarrow.parquet as pq
    from pyspark.sql import functions as F

    path = str(tmp_path / "flat")
    spark.range(300).select(F.col("id").alias("n"), (F.col("id") % 4).alias("k"), (F.col("id") % 2).alias("p")) \
        .repartition(3).write.partitionBy("p").parquet(path)
    frame = lc.read.parquet(path).where(F.col("n") % 3 == 0).groupBy("k").agg(F.sum("n").alias("total"))
    totals = [(k, sum(n for n in range(0, 300, 3) if n % 4 == k)) for k in range(4)]
    assert sorted(map(tuple, frame.collect())) == totals
    plan = frame._df._jdf.queryExecution().executedPlan().toString()
    assert "_tmp_metadata_row_index" in plan and "named_struct" not in plan and "lineage_parquet" not in plan
    back = frame.getLineage().filter(lambda r: r.k == 1).goBackAll().collect()
    assert sorted(map(tuple, back)) == [(n, 1, n % 2) for n in range(0, 300, 3) if n % 4 == 1]
    assert all(r.p == r.n % 2 for r in back)  # the partition column, read from the row's directory
    whole = spark.read.parquet(path).where(F.col("n") % 50 == 7).select("n", "_metadata",
                                                                        F.col("_metadata.row_index").alias("at"))
    got = whole.collect()
    assert "named_struct" in whole._jdf.queryExecution().executedPlan().toString()
    assert sorted(r.n for r in got) == list(range(7, 300, 50))
    for r in got:
        local = r._metadata.file_path.removeprefix("file:")
        column = pq.read_table(local)["n"]
        assert column[r.at].as_py() == r.n == column[r._metadata.row_index].as_py()
        assert r._metadata.file_size == Path(local).stat().st_size


def test_traced_rows_carry_the_values_of_their_partition_directories(lc: Any, spark: Any, tmp_path: Path) -> None:
    """Rows traced to files in partition directories have the directories' columns, typed as
    Spark's read types them (a date, a string that Spark escapes in the path, a null key), after
    the files' own columns, as Spark's read of the folder gives them (whose name has a space,
    which Spark's list of the files spells %20)."""
    import datetime

    from pyspark.sql import functions as F

    path = str(tmp_path / "day parts")
    tags = ["a/b", "x=y", None]
    rows = [(n, datetime.date(2026, 11, 1 + n % 3), tags[n % 3]) for n in range(60)]
    spark.createDataFrame(rows, "n long, day date, tag string").write.partitionBy("day", "tag").parquet(path)
    plain = spark.read.parquet(path)
    frame = lc.read.parquet(path)
    assert frame.columns == plain.columns == ["n", "day", "tag"]
    assert dict(frame.dtypes) == dict(plain.dtypes) == {"n": "bigint", "day": "date", "tag": "string"}
    per_day = frame.where(F.col("n") % 5 > 0).groupBy("day").agg(F.count("n").alias("rows"))
    assert sorted(map(tuple, per_day.collect())) == sorted(map(tuple, plain.where(F.col("n") % 5 > 0)
                                                                .groupBy("day").agg(F.count("n").alias("rows"))
                                                                .collect()))
    for day in (1, 2):
        wanted = sorted(r for r in rows if r[1].day == day and r[0] % 5 > 0)
        back = per_day.getLineage().filter(lambda r, d=day: r.day.day == d).goBackAll().collect()
        assert sorted(map(tuple, back)) == wanted
        assert all(list(r.asDict()) == ["n", "day", "tag"] for r in back)
    tagged = frame.where(F.col("tag").isNull()).select("n")
    assert sorted(r.n for r in tagged.collect()) == [r[0] for r in rows if r[2] is None]
    assert sorted(tuple(r) for r in tagged.getLineage().goBackAll().collect()) == sorted(
        r for r in rows if r[2] is None)


def _scans(df: Any) -> list[Any]:
    """The query's file scans (BatchScanExec, FileSourceScanExec) as it ran, through AQE's stages."""
    def walk(node: Any) -> list[Any]:
        name = node.getClass().getSimpleName()
        if name == "AdaptiveSparkPlanExec":
            return walk(node.executedPlan())
        if name.endswith("QueryStageExec"):
            return walk(node.plan())
        if name in ("BatchScanExec", "FileSourceScanExec"):
            return [node]
        children = node.children()
        return [scan for i in range(children.size()) for scan in walk(children.apply(i))]

    return walk(df._jdf.queryExecution().executedPlan())


def _scanned_rows(df: Any) -> int:
    """The rows the query's file scans handed on (their numOutputRows)."""
    return sum(int(scan.metrics().apply("numOutputRows").value()) for scan in _scans(df))


@pytest.mark.parametrize("size", ["20k", None])
def test_a_parquet_read_skips_row_groups_by_the_querys_filters(lc: Any, spark: Any, tmp_path: Path,
                                                                size: str | None) -> None:
    """Row groups none of whose rows pass the query's filters (by their statistics) are not read,
    as Spark's own scan skips them: sorted files in row groups of 2000 rows, filters that keep
    one run of row groups, two runs in one file, and one in each file. The rows read are the kept
    row groups' (as many as Spark's scan reads), and the results and traces are exact."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyspark.sql import functions as F

    folder = tmp_path / "sorted"
    folder.mkdir()
    for part, (low, high) in enumerate([(0, 10_000), (10_000, ROWS)]):
        ns = list(range(low, high))
        pq.write_table(pa.table({"n": ns, "g": [n % 7 for n in ns]}), str(folder / f"part-{part}.parquet"),
                       row_group_size=2000)
    path = str(folder)
    cases = [((F.col("n") >= 5000) & (F.col("n") < 9000), lambda n: 5000 <= n < 9000, 3 * 2000),
             ((F.col("n") < 1000) | ((F.col("n") >= 8000) & (F.col("n") < 8500)),
              lambda n: n < 1000 or 8000 <= n < 8500, 2 * 2000),
             ((F.col("n") < 1000) | (F.col("n") >= 29_000), lambda n: n < 1000 or n >= 29_000, 2 * 2000)]
    old = _max_split(spark, size)
    try:
        for condition, passes, read in cases:
            frame = lc.read.parquet(path).where(condition).groupBy("g").agg(F.count("*").alias("c"))
            plain = spark.read.parquet(path).where(condition).groupBy("g").agg(F.count("*").alias("c"))
            got = sorted(map(tuple, frame.collect()))
            assert got == sorted(map(tuple, plain.collect()))
            assert got == sorted(Counter(n % 7 for n in range(ROWS) if passes(n)).items())
            assert _scanned_rows(frame._last._df) == _scanned_rows(plain) == read  # the captured query as it ran
            assert sorted(r.n for r in frame.getLineage().filter(lambda r: r.g == 3).goBackAll().collect()) == \
                [n for n in range(ROWS) if passes(n) and n % 7 == 3]
    finally:
        _max_split(spark, old)


def _scan_factories(df: Any) -> list[str]:
    """What the query's captured file scans' reader factories print (their configuration's broadcast among it)."""
    return [str(scan.readerFactory().toString()) for scan in _scans(df)
            if scan.getClass().getSimpleName() == "BatchScanExec"]


def test_a_later_query_reuses_a_reads_tasks_and_shipped_settings_until_its_files_or_settings_change(
        lc: Any, spark: Any, tmp_path: Path) -> None:
    """A second query reading the same Parquet files under the same settings takes the first's file
    tasks and configuration broadcast instead of planning and shipping them again; files written
    over since, or a Hadoop setting changed, are planned and shipped anew, and read exactly."""
    import re

    path = str(tmp_path / "rewritten")

    def write(rows: range, files: int) -> None:
        spark.createDataFrame([(n, n % 5) for n in rows], "n long, g long").repartition(files) \
            .write.mode("overwrite").parquet(path)

    def read() -> tuple[list[tuple[Any, ...]], list[int], str]:
        frame = lc.read.parquet(path).where("g != 4")
        rows = sorted(map(tuple, frame.collect()))
        (factory,) = _scan_factories(frame._df)
        (shipped,) = re.findall(r"conf=Broadcast\((\d+)\)", factory)
        traced = sorted(r.n for r in frame.getLineage().filter(lambda r: r.n % 97 == 3).goBackAll().collect())
        return rows, traced, shipped

    write(range(1000), 3)
    first = read()
    again = read()
    assert again == first
    assert first[0] == [(n, n % 5) for n in range(1000) if n % 5 != 4]
    write(range(5000, 7000), 2)  # other files, other rows, other tasks
    rewritten = read()
    assert rewritten[0] == [(n, n % 5) for n in range(5000, 7000) if n % 5 != 4]
    assert rewritten[1] == [n for n in range(5000, 7000) if n % 97 == 3 and n % 5 != 4]
    assert rewritten[2] == first[2]  # same settings: the same broadcast
    hadoop = spark.sparkContext._jsc.hadoopConfiguration()
    hadoop.set("lineage.test.setting", "changed")
    try:
        changed = read()
    finally:
        hadoop.unset("lineage.test.setting")
    assert changed[:2] == rewritten[:2]
    assert changed[2] != first[2]  # another configuration: shipped again


def test_a_table_read_twice_in_one_query_is_shuffled_once_as_in_sparks_own_plan(
        lc: Any, spark: Any, tmp_path: Path) -> None:
    """A join of a Parquet table with itself (a CTE read twice, say), planned as a sort-merge join:
    Spark shuffles the plain table once and reuses that exchange for the other side; the captured
    reads of the table are equal scans, so the captured plan reuses its exchange too, and the
    answer and both traces are exact."""
    from pyspark.sql import functions as F

    path = str(tmp_path / "twice")
    spark.createDataFrame([(n, n % 50) for n in range(3000)], "n long, g long").repartition(3).write.parquet(path)

    def query(source: Any) -> Any:
        kept = source.where(F.col("g") < 3)
        return kept.alias("a").join(kept.alias("b"), F.col("a.n") == F.col("b.n")).select(
            "a.n", "a.g", F.col("b.n").alias("m"), F.col("b.g").alias("h"))

    old = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    try:
        plain = query(spark.read.parquet(path))
        source = lc.read.parquet(path)
        frame = query(source)
        got = sorted(map(tuple, frame.collect()))
        assert got == sorted(map(tuple, plain.collect())) == [(n, n % 50, n, n % 50) for n in range(3000)
                                                              if n % 50 < 3]
        assert "ReusedExchange" in str(plain._jdf.queryExecution().executedPlan().toString())
        assert "ReusedExchange" in str(frame._last._df._jdf.queryExecution().executedPlan().toString())
        back = frame.getLineage().filter(lambda r: r.n == 1051).goBackAll().collect()
        assert [tuple(r) for r in back] == [(1051, 1)]
        forward = source.getLineage().filter(lambda r: r.n in (1051, 1053)).goNextAll().collect()
        assert [tuple(r) for r in forward] == [(1051, 1, 1051, 1)]
    finally:
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", old)
