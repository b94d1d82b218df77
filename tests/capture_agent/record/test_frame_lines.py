"""Captured DataFrames over lines of text files (``lc.read.text``, ``csv``, ``json``; the
``file_lines`` layout): the same rows as Spark's own readers, even with blank lines, CR/LF line
ends, quoted separators, headers and several files of several splits each; traces both ways and
positions against oracles computed from the bytes of the files."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from capture_agent.record.storage.fs import local_path

PEOPLE = [(f"p{i}", 20 + i % 37, ["Oslo", "Rome", "Kyoto, JP"][i % 3], round(i * 1.25, 2)) for i in range(90)]


def csv_files(folder: Path) -> list[tuple[str, int, tuple[Any, ...]]]:
    """Three CSV files with a header, blank and space-only lines, CRLF and CR line ends and quoted
    commas; returns (file, byte offset, person) of every data line."""
    folder.mkdir()
    lines_of = []
    for f in range(3):
        path = folder / f"part-{f}.csv"
        data = bytearray(b"\n  \r\nname,age,city,score\r\n")
        ends = [b"\n", b"\r\n", b"\r"]
        for k, person in enumerate(PEOPLE[f::3]):
            offset = len(data)
            data += f'{person[0]},{person[1]},"{person[2]}",{person[3]}'.encode() + ends[k % 3]
            if k % 7 == 3:
                data += b"   \n"
            lines_of.append((str(path), offset, person))
        path.write_bytes(bytes(data))
    return lines_of


@pytest.fixture
def small_splits(spark: Any) -> Any:
    """Splits of 500 bytes, so that each file has several (and a header is in the first only)."""
    spark.conf.set("spark.sql.files.maxPartitionBytes", "500")
    spark.conf.set("spark.sql.files.openCostInBytes", "1")
    yield
    spark.conf.unset("spark.sql.files.maxPartitionBytes")
    spark.conf.unset("spark.sql.files.openCostInBytes")


def test_csv_rows_traces_and_positions(lc: Any, spark: Any, tmp_path: Path, small_splits: Any) -> None:
    from pyspark.sql import functions as F

    oracle = csv_files(tmp_path / "people")
    folder = str(tmp_path / "people")
    plain = spark.read.csv(folder, header=True, inferSchema=True)
    alone = lc.read.csv(folder, header=True, inferSchema=True)
    assert alone.rdd.getNumPartitions() == plain.rdd.getNumPartitions() >= 4  # Spark's own tasks
    assert alone.dtypes == plain.dtypes == [("name", "string"), ("age", "int"), ("city", "string"), ("score", "double")]
    assert Counter(map(tuple, alone.collect())) == Counter(map(tuple, plain.collect())) == Counter(PEOPLE)
    every = alone.getLineage().goBackAll().positions()
    assert sorted((local_path(p.source), p.offset) for p in every) == sorted((path, o) for path, o, _ in oracle)
    people = lc.read.csv(folder, header=True, inferSchema=True)

    def job(frame: Any) -> Any:
        return frame.where(F.col("age") > 30).groupBy("city").agg(F.sum("score").alias("total"))

    per_city = job(people)
    got = per_city.collect()
    assert Counter(map(tuple, got)) == Counter(map(tuple, job(plain).collect()))
    for row in got:
        trace = per_city.getLineage().filter(lambda r, city=row.city: r.city == city).goBackAll()
        expected = sorted((uri, offset) for uri, offset, p in oracle if p[2] == row.city and p[1] > 30)
        assert sorted((local_path(p.source), p.offset) for p in trace.positions()) == expected
        assert sorted(trace.collect()) == sorted(p for p in PEOPLE if p[2] == row.city and p[1] > 30)  # typed
        assert trace.take(3) == trace.collect()[:3]

    # forward from the source: the Kyoto people aged over 30 reach the Kyoto total only
    kyoto = people.getLineage().filter(lambda r: r.city == "Kyoto, JP").goNextAll().collect()
    assert [tuple(r) for r in kyoto] == [tuple(r) for r in got if r.city == "Kyoto, JP"]
    # what if the people of Rome and p12 (Oslo, 32) were not there
    gone = {p for p in PEOPLE if p[2] == "Rome"} | {PEOPLE[12]}
    impact = people.getLineage().filter(lambda r: r.name in {p[0] for p in gone}).whatIfDeleted(per_city)
    assert [r.city for r in impact.deleted()] == ["Rome"]
    oslo = sum(p[3] for p in PEOPLE if p[2] == "Oslo" and p[1] > 30)
    assert [(old.city, old.total, new.total) for old, new in impact.changed()] == [
        ("Oslo", pytest.approx(oslo), pytest.approx(oslo - PEOPLE[12][3]))]


def test_lines_come_in_the_tasks_and_order_of_sparks_own_readers(lc: Any, spark: Any, tmp_path: Path,
                                                                  small_splits: Any) -> None:
    """CSV (a header, blank lines, CR ends), text and JSON Lines: each row of a captured read is in
    the task, and at the place there, where Spark's own reader puts it (monotonically_increasing_id:
    the task and the row's place in it), in splits of 500 bytes and in whole files, so that a sum
    of doubles adds them in Spark's order, to the same bits."""
    from pyspark.sql import functions as F

    csv_files(tmp_path / "people")
    folder = str(tmp_path / "people")
    events = tmp_path / "events.json"
    events.write_text("".join(json.dumps({"n": i, "x": i / 7}) + ("\n\n" if i % 5 == 0 else "\n") for i in range(300)))

    def placed(df: Any) -> Counter[tuple[Any, ...]]:
        return Counter(map(tuple, df.select("*", F.monotonically_increasing_id()).collect()))

    for size in ("500", "128m"):
        spark.conf.set("spark.sql.files.maxPartitionBytes", size)
        assert placed(lc.read.csv(folder, header=True, inferSchema=True)) == \
            placed(spark.read.csv(folder, header=True, inferSchema=True))
        assert placed(lc.read.text(folder)) == placed(spark.read.text(folder))
        assert placed(lc.read.json(str(events))) == placed(spark.read.json(str(events)))
        total = F.sum("x")
        assert lc.read.json(str(events)).agg(total).collect() == spark.read.json(str(events)).agg(total).collect()


def test_lines_count_in_the_tasks_input_as_sparks_readers_count_theirs(lc: Any, spark: Any, tmp_path: Path) -> None:
    """A captured read of lines counts its records and bytes in the stage's input metrics (the coarse
    lineage's input_records and input_bytes), as Spark's own reader of the files does."""
    csv_files(tmp_path / "people")
    folder = str(tmp_path / "people")
    sc = spark.sparkContext._jsc.sc()

    def stages() -> dict[int, Any]:
        store = sc.statusStore()
        listed = store.stageList(None, False, False, getattr(store, "stageList$default$4")(), None)
        return {listed.apply(i).stageId(): listed.apply(i) for i in range(listed.size())}

    def input_of(df: Any) -> tuple[int, int]:
        before = stages()
        df.collect()
        sc.listenerBus().waitUntilEmpty()
        new = [s for k, s in stages().items() if k not in before]
        return sum(s.inputRecords() for s in new), sum(s.inputBytes() for s in new)

    records, size = input_of(spark.read.text(folder))
    assert records == sum(len(f.read_bytes().splitlines()) for f in (tmp_path / "people").iterdir())
    assert input_of(lc.read.text(folder)) == (records, size)
    people = "name string, age int, city string, score double"
    records, size = input_of(spark.read.csv(folder, header=True, schema=people))
    assert records == len(PEOPLE)
    assert input_of(lc.read.csv(folder, header=True, schema=people)) == (records, size)


def test_csv_values_are_parsed_as_sparks_reader_parses_them(lc: Any, spark: Any, tmp_path: Path) -> None:
    """Malformed lines (a word where a number goes, a field short, one too many), a corrupt-record
    column, another separator and quote: the captured read's rows equal Spark's reader's, all
    columns or one; a filter Spark's parser applies as it parses (the rows it drops are not
    handed on) leaves the same rows, and traces back to the lines whose values pass it."""
    from pyspark.sql import functions as F

    lines = ["name;age;note", "ann;31;'a;b'", "bob;x;plain", "cid;45", "dan;52;'q';extra", "eve;29;''", "fay;60;z"]
    path = tmp_path / "people.csv"
    path.write_text("\n".join(lines) + "\n")
    offsets = {line.split(";")[0]: sum(len(x) + 1 for x in lines[:k]) for k, line in enumerate(lines)}
    for schema in ("name string, age int, note string", "name string, age int, note string, _corrupt_record string"):
        def read(reader: Any, schema: str = schema) -> Any:
            return reader.csv(str(path), schema=schema, header=True, sep=";", quote="'")

        assert Counter(map(tuple, read(lc.read).collect())) == Counter(map(tuple, read(spark.read).collect()))
        assert Counter(map(tuple, read(lc.read).select("note").collect())) == \
            Counter(map(tuple, read(spark.read).select("note").collect()))
        over = read(lc.read).where(F.col("age") > 30).select("name")
        assert sorted(over.collect()) == sorted(read(spark.read).where(F.col("age") > 30).select("name").collect()) \
            == [("ann",), ("cid",), ("dan",), ("fay",)]
        assert sorted(p.offset for p in over.getLineage().goBackAll().positions()) == \
            sorted(offsets[n] for n in ("ann", "cid", "dan", "fay"))
    # the corrupt-record column: filled by the parser (not filtered on while parsing), not read alone
    bad = read(lc.read).where(F.col("_corrupt_record").isNotNull())
    assert Counter(map(tuple, bad.collect())) == \
        Counter(map(tuple, read(spark.read).where(F.col("_corrupt_record").isNotNull()).collect()))
    assert sorted(r.name for r in bad.collect()) == ["bob", "cid", "dan"]
    assert sorted(p.offset for p in bad.getLineage().goBackAll().positions()) == \
        sorted(offsets[n] for n in ("bob", "cid", "dan"))
    for reader in (spark.read, lc.read):
        with pytest.raises(Exception, match="corrupt record column"):
            read(reader).select("_corrupt_record").collect()
    short = read(lc.read).where(F.col("note").isNull()).groupBy().agg(F.count("*").alias("n"))
    assert short.collect()[0].n == 2  # cid's line lacks its note; eve's is empty
    assert sorted(p.offset for p in short.getLineage().goBackAll().positions()) == [offsets["cid"], offsets["eve"]]


def test_text_and_json_lines(lc: Any, spark: Any, tmp_path: Path) -> None:
    from pyspark.sql import functions as F

    log = tmp_path / "log.txt"
    lines = ["error disk", "", "ok", "  ", "error net", "warn disk"]
    log.write_bytes("\r\n".join(lines).encode())  # no line end after the last line
    text = lc.read.text(str(log))
    assert [r.value for r in text.collect()] == [r.value for r in spark.read.text(str(log)).collect()] == lines
    words = text.select(F.explode(F.split("value", " ")).alias("w")).where(F.col("w") != "").groupBy("w").count()
    assert dict(map(tuple, words.collect())) == Counter(w for line in lines for w in line.split())
    starts = [sum(len(x) + 2 for x in lines[:i]) for i in range(len(lines))]
    trace = words.getLineage().filter(lambda r: r.w == "disk").goBackAll()
    assert sorted(trace.collect()) == ["error disk", "warn disk"]
    assert sorted(p.offset for p in trace.positions()) == [starts[0], starts[5]]

    events = tmp_path / "events.json"
    records = [{"user": i % 4, "kind": "abc"[i % 3]} for i in range(40)]
    body = "".join(json.dumps(r) + ("\n\n" if i % 5 == 0 else "\n") for i, r in enumerate(records))
    events.write_text(body)
    frame = lc.read.json(str(events))
    per_user = frame.groupBy("user").agg(F.count("*").alias("n"))
    assert Counter(map(tuple, per_user.collect())) == Counter(
        map(tuple, spark.read.json(str(events)).groupBy("user").agg(F.count("*").alias("n")).collect()))
    user2 = per_user.getLineage().filter(lambda r: r.user == 2).goBackAll().collect()
    assert sorted(sorted(r.asDict().items()) for r in user2) == \
        sorted(sorted(r.items()) for r in records if r["user"] == 2)  # the frame's rows, not the lines


def test_json_lines_make_the_rows_sparks_reader_makes_of_them(lc: Any, spark: Any, tmp_path: Path,
                                                              small_splits: Any) -> None:
    """A line of JSON Lines holding an array of objects is a row for each object in Spark's reader
    (a malformed line one row of its text, a blank line none): the captured read makes the same rows,
    in splits of 500 bytes, each traced back to its line and forward from it."""
    from pyspark.sql import functions as F

    folder = tmp_path / "events"
    folder.mkdir()
    oracle = []  # (file, byte offset, the line's objects or None for malformed)
    for f in range(2):
        data = bytearray(b"\n")
        for i in range(40):
            offset = len(data)
            if i % 6 == 2:
                objects = [{"user": (i + k) % 4, "kind": "abc"[k]} for k in range(1 + i % 3)]
                line = json.dumps(objects)
            elif i % 13 == 5:
                objects, line = None, "{broken"
            else:
                objects = [{"user": i % 4, "kind": "ab"[i % 2]}]
                line = json.dumps(objects[0])
            oracle.append((str(folder / f"part-{f}.json"), offset, objects))
            data += line.encode() + (b"\n\n  \n" if i % 7 == 0 else b"\n")
        (folder / f"part-{f}.json").write_bytes(bytes(data))
    path = str(folder)
    frame, plain = lc.read.json(path), spark.read.json(path)
    assert frame.dtypes == plain.dtypes
    assert frame.count() == plain.count() == sum(1 if o is None else len(o) for _, _, o in oracle)
    assert Counter(map(tuple, frame.collect())) == Counter(map(tuple, plain.collect()))
    per_user = frame.groupBy("user").agg(F.count("*").alias("n"))
    assert Counter(map(tuple, per_user.collect())) == Counter(
        map(tuple, plain.groupBy("user").agg(F.count("*").alias("n")).collect()))
    back = per_user.getLineage().filter(lambda r: r.user == 1).goBackAll()
    assert sorted((local_path(p.source), p.offset) for p in back.positions()) == sorted(
        (file, offset) for file, offset, objects in oracle if objects and any(o["user"] == 1 for o in objects))
    arrays = frame.getLineage().filter(lambda r: r.kind == "c").goBackAll()  # kind c: only in arrays
    assert len(arrays.positions()) == sum(1 for _, _, o in oracle if o and len(o) == 3)
    ahead = [r for r in arrays.goNextAll().collect() if "kind" in r.__fields__]  # the collect's rows, of all outputs
    assert Counter((r.user, r.kind) for r in ahead) == Counter(
        (o["user"], o["kind"]) for _, _, objects in oracle if objects and len(objects) == 3 for o in objects)
    given = "user INT, kind STRING"
    assert Counter(map(tuple, lc.read.json(path, schema=given).where(F.col("user") > 1).collect())) == Counter(
        map(tuple, spark.read.json(path, schema=given).where(F.col("user") > 1).collect()))


def test_csv_with_its_own_separator_and_an_id_column(lc: Any, spark: Any, tmp_path: Path) -> None:
    from pyspark.sql import functions as F

    path = tmp_path / "items.csv"
    items = [(i, f"item;{i}" if i % 4 == 0 else f"item {i}", i % 5) for i in range(30)]
    path.write_text("".join(f"{i};'{name}';{k}\n" for i, name, k in items))
    frame = lc.read.csv(str(path), sep=";", quote="'", inferSchema=True).toDF("id", "name", "kind")
    plain = spark.read.csv(str(path), sep=";", quote="'", inferSchema=True).toDF("id", "name", "kind")
    per_kind = frame.groupBy("kind").agg(F.sum("id").alias("ids"))
    assert Counter(map(tuple, per_kind.collect())) == Counter(
        map(tuple, plain.groupBy("kind").agg(F.sum("id").alias("ids")).collect()))
    behind = per_kind.getLineage().filter(lambda r: r.kind == 0).goBackAll().collect()
    assert sorted((int(r[0]), r[1]) for r in behind) == [(i, name) for i, name, k in items if k == 0]


def test_reader_options_of_lines_are_honoured_or_refused(lc: Any, spark: Any, tmp_path: Path) -> None:
    from capture_agent.record.errors import UnsupportedOperation

    csv_files(tmp_path / "people")
    folder = str(tmp_path / "people")
    plain = spark.read.option("header", "true").option("inferSchema", True).csv(folder)
    alone = lc.read.option("header", "true").option("inferSchema", True).csv(folder)
    assert alone.dtypes == plain.dtypes
    assert Counter(map(tuple, alone.collect())) == Counter(map(tuple, plain.collect())) == Counter(PEOPLE)
    semi = tmp_path / "semi.csv"
    semi.write_text("a;b\n1;x\n2;y\n")
    assert [tuple(r) for r in lc.read.options(delimiter=";", header=True).csv(str(semi)).collect()] == \
        [tuple(r) for r in spark.read.options(delimiter=";", header=True).csv(str(semi)).collect()] == \
        [("1", "x"), ("2", "y")]
    with pytest.raises(UnsupportedOperation, match="read.csv with the option nullValue"):
        lc.read.option("nullValue", "NA").csv(folder)
    with pytest.raises(UnsupportedOperation, match="read.json with the option multiLine"):
        lc.read.option("multiLine", True).json(folder)
    with pytest.raises(UnsupportedOperation, match="read.text with the option wholetext"):
        lc.read.option("wholetext", True).text(folder)


def test_lines_of_partition_directories_are_refused(lc: Any, spark: Any, tmp_path: Path) -> None:
    """Spark's readers add a column per key=value directory, which the lines do not hold: refused
    before the job runs, never a column of nulls."""
    from capture_agent.record.errors import UnsupportedOperation

    for day in (1, 2):
        (tmp_path / "events" / f"day={day}").mkdir(parents=True)
        (tmp_path / "events" / f"day={day}" / "part.csv").write_text(f"n,kind\n{day},a\n")
    folder = str(tmp_path / "events")
    assert spark.read.csv(folder, header=True).columns == ["n", "kind", "day"]
    for read in (lambda: lc.read.csv(folder, header=True), lambda: lc.read.text(folder), lambda: lc.read.json(folder)):
        with pytest.raises(UnsupportedOperation, match="partition directories \\(day\\)"):
            read()
