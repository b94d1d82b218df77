"""Where captured DataFrames begin: their sources.

Sources (``lc.read.parquet``, ``lc.read.table`` of a Parquet table, ``lc.createDataFrame``) are
``input`` points of the ``file_rows`` layout: a record's id is (index of its file, its row index
in the file), the index Spark's ``_metadata.row_index`` gives, so ids do not depend on how Spark
splits files into partitions, and nothing is written at capture. The rows are read in the JVM
with their ids (``java/lineage/sql/Parquet.java``: Spark's own vectorized reader, in the tasks of
Spark's own read of the files; ``_metadata.row_index`` costs a boxed long a row), or, for files
in partition directories and columns Spark reads as rows only, with Spark's ``_metadata``
columns. A source reading part files an
earlier captured write of the run made has that write as its parent, and traces chain through
it (other runs: ``storage.chains``). Local data given to
``createDataFrame`` is written once to Parquet in the run's folder and read from there.
ORC files (``lc.read.orc``, ``lc.read.table`` of an ORC table) are ``file_rows`` points too (format
orc): Spark gives no row index of ORC files, so their rows are read in the JVM with ORC's own reader
(``java/lineage/sql/Orc.java``: in the tasks of Spark's own read of the files, the same rows in the
same order; every row, no predicate pushdown), a row's id (file index, its row number in the file).
Text, CSV and JSON Lines are ``input`` points of the ``file_lines`` layout: the lines are read in
the JVM (``java/lineage/sql/Lines.java``: Hadoop's line reader, as Spark's own readers use it, in
the tasks of Spark's own read of the files) with ids (file index, byte offset), stable whatever the
split size; CSV lines are parsed there by Spark's own CSV parser as Spark's CSV scan parses them,
the columns a query reads (``java/lineage/sql/Csv.java``), JSON lines by Spark's own JSON parser
with the schema Spark's reader gives the files (``java/lineage/sql/Json.java``: an array's objects
are rows of their line too); nothing is written at capture. Files of 4 GiB or more, and
part files an earlier ``saveAsTextFile`` of the run wrote (traces chain through it), are read as
lines by the RDD engine's text input instead. A captured RDD's records become a DataFrame at a stage
point (``rdd_frame``), so traces of either continue through the other. The first source of a session
registers the JVM functions that build id sets and ships the agent's jar to the executors
(``capture/frame_jvm.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from capture_agent.record.capture.frame_jvm import (
    csv_frame,
    functions_registered,
    json_frame,
    leaf_identities,
    lines_frame,
    parquet_unread,
    rows_frame,
)
from capture_agent.record.capture.frames import LineageFrame, Slot
from capture_agent.record.errors import UnsupportedOperation
from capture_agent.record.storage.fs import hadoop_path
from capture_agent.record.storage.ids import SHIFT
from capture_agent.record.storage.layouts import FileLines, FileRows, Save
from capture_agent.record.storage.layouts.inputs import directory_values, reads_save, reads_write
from capture_agent.record.storage.sources import parquet_rows
from capture_agent.record.worker.frames import with_ids

SIZE_TREE_FILES = 1024  # more files: a lookup by path (a deeper tree is a long expression to compile)


def source_frame(lc: Any, df: Any, op: str, paths: list[str], slices: int = 0) -> LineageFrame:
    """A captured DataFrame over ``df`` (read from Parquet files only), its rows' ids added: read
    in the JVM with their ids (``java/lineage/sql/Parquet.java``: Spark's own reader, in the tasks
    of ``df``'s scan, or with ``slices``, of the partitions of the write of that many that wrote
    the files; Spark's ``_metadata.row_index`` costs a boxed long a row) when it can, else ``df``'s
    rows with ``_metadata.row_index`` (files in partition directories, columns Spark's reader reads
    as rows only; in ``df``'s tasks)."""
    functions_registered(lc)
    point, files = file_rows_point(lc, df, op, paths, "parquet", parquet_rows)
    column = lc.frames.fresh_column()
    if files and parquet_unread(lc, df) is None:
        return jvm_rows(lc, "parquet", df, op, paths, point, files, column, slices)
    record_id = record_ids(lc, files)
    return sourced(lc, point, df.select("*", record_id.alias(column)), column)


def file_rows_point(lc: Any, df: Any, op: str, paths: list[str], fmt: str,
                    rows_of: Callable[[str], int]) -> tuple[Any, list[dict[str, Any]]]:
    """The ``input`` point (``file_rows`` layout) of the files ``df`` reads, and its files (path,
    size, mtime, rows: ``rows_of(path)``); its parents, the earlier captured writes of this run it
    reads."""
    from capture_agent.record.capture.inputs import file_info

    files = [{**file_info(lc.sc, path), "rows": rows_of(path)} for path in sorted(map(hadoop_path, df.inputFiles()))]
    written = [p for p in lc.store.points.values() if reads_write(files, p)]
    layout = FileRows(format=fmt, paths=paths, files=files, partitions=partition_columns(df, files),
                      schema=df.schema.json())
    return lc.store.new_point("input", op, layout, written, max(1, len(files))), files


def partition_columns(df: Any, files: list[dict[str, Any]]) -> list[list[str]]:
    """The columns of ``df`` (Spark's read of ``files``) that partition directories (key=value) of
    the files name: [name, Spark's type], in ``df``'s order (traced rows read them from the paths,
    ``FileRows``)."""
    keys = {key for info in files for key in directory_values(info["path"])}
    return [[f.name, f.dataType.simpleString()] for f in df.schema.fields if f.name in keys]


def sourced(lc: Any, point: Any, df: Any, column: str) -> LineageFrame:
    """``df`` as the captured DataFrame of source ``point``, whose ids it holds in ``column``."""
    slot = Slot(point.capture_id, column, False)
    lc.frames.source_slots.append(slot)
    return known_by_leaves(lc, LineageFrame(lc, df, (slot,), "copy", point=point.capture_id))


def known_by_leaves(lc: Any, made: LineageFrame) -> LineageFrame:
    """``made`` (a source: its plan's leaves are what it reads), known by what those leaves read
    (``LeafIdentity``): a query over its rows (a view of it, a plain frame of them) reads it again,
    with its ids (``frame_plan.captured_query``)."""
    for identity in leaf_identities(lc, made._df):
        lc.frames.captured_leaves[identity] = made
    return made


def orc_frame_source(lc: Any, df: Any, paths: list[str], op: str = "read.orc") -> LineageFrame:
    """A captured DataFrame of the ORC files ``df`` (Spark's read of them) reads, with its schema:
    the rows read in the JVM with their ids (file index, row number), in the tasks of ``df``'s own
    scan. Every column of the schema must be a column of the files (a partitioned
    directory's columns are not)."""
    from capture_agent.record.storage.sources import orc_rows

    def checked_rows(uri: str) -> int:
        rows, names = orc_rows(uri)
        present = {n.lower() for n in names}
        missing = [f.name for f in df.schema.fields if f.name.lower() not in present]
        if missing:
            raise UnsupportedOperation(f"{op} of columns that are not in the ORC files ({', '.join(missing)})",
                                       "read the files without partition directories")
        return rows

    point, files = file_rows_point(lc, df, op, paths, "orc", checked_rows)
    return jvm_rows(lc, "orc", df, op, paths, point, files, lc.frames.fresh_column())


def jvm_rows(lc: Any, fmt: str, df: Any, op: str, paths: list[str], point: Any, files: list[dict[str, Any]],
             column: str, slices: int = 0) -> LineageFrame:
    """The captured DataFrame of source ``point``: the rows of ``fmt``'s ``files`` (orc, parquet),
    which ``df`` reads, read in the JVM with their ids in ``column`` (``frame_jvm.rows_frame``;
    ``slices``: its argument); ``paths``: the folders given to ``op``, or the catalog table's name
    (``read.table``)."""
    from capture_agent.record.capture.frame_io import _qualified

    if op == "read.table":
        name, location = paths[0], None
    else:
        folders = [_qualified(lc, p) or p for p in paths]
        name, location = ",".join(folders), ",".join(folders)
    paths_read = [f["path"] for f in files]

    def remake(plain: Any) -> Any:  # the reader over a plain read of the files (this one, or a later leaf's)
        return rows_frame(lc, fmt, plain, paths_read, column, name, location, slices)

    made = sourced(lc, point, remake(df), column)
    made._remake = remake
    return made


def record_ids(lc: Any, files: list[dict[str, Any]]) -> Any:
    """The column of a row's id: (index of its file in ``files``) << SHIFT | its row index. When no
    two files have the same size, the file's index is found from ``_metadata.file_size`` by a
    balanced tree of comparisons (a long compared per level; a lookup of the path string costs the
    whole query a third more on TPC-H Q1), one SQL expression (a py4j call per Column operation
    would be a round trip each); else by path."""
    from pyspark.sql import functions as F

    sizes = sorted((info["size"], index) for index, info in enumerate(files))
    if len({size for size, _ in sizes}) == len(sizes) and len(sizes) <= SIZE_TREE_FILES:

        def tree(part: list[tuple[int, int]]) -> str:
            if len(part) == 1:
                return str(part[0][1])
            middle = len(part) // 2
            return (f"CASE WHEN _metadata.file_size < {part[middle][0]} THEN {tree(part[:middle])} "
                    f"ELSE {tree(part[middle:])} END")

        return F.expr(f"shiftleft(CAST({tree(sizes) if sizes else 0} AS BIGINT), {SHIFT}) + _metadata.row_index")
    jvm = lc.sc._jvm
    keys = []  # _metadata.file_path spells a path as a URI (a space as %20), a local one file:/x
    for index, info in enumerate(files):
        uri = str(jvm.org.apache.hadoop.fs.Path(info["path"]).toUri().toString())
        for spelling in {uri, "file:/" + uri.removeprefix("file:///")} if uri.startswith("file:///") else {uri}:
            keys += [F.lit(spelling), F.lit(index)]
    found = F.coalesce(F.element_at(F.create_map(*keys), F.col("_metadata.file_path")),  # never a null id
                       F.raise_error(F.concat(F.lit("lineage: no id for a row of "), F.col("_metadata.file_path"),
                                              F.lit(", a file the read did not list"))))
    return F.shiftleft(found.cast("long"), SHIFT) + F.col("_metadata.row_index")


def local_frame(lc: Any, df: Any) -> LineageFrame:
    """``createDataFrame``'s rows, written once to Parquet in the run's folder and read back in
    ``df``'s partitions (its slices of the data), in their order."""
    seq = lc.frames.next_source()
    folder = lc.store.fs.join(lc.store.run_dir, "sources", f"{seq:04d}")
    uri = lc.store.fs.uri(folder)
    df.write.mode("overwrite").parquet(uri)
    slices = df._jdf.rdd().getNumPartitions()
    return source_frame(lc, lc.spark.read.parquet(uri), "createDataFrame", [uri], slices)


def line_source(lc: Any, path: str, fmt: str, parse: Callable[[Any, str], Any] | None, header: bool = False,
                sep: str = ",", quote: str = '"', fields: list[str] | None = None,
                csv_schema: Any = None, json_schema: Any = None) -> LineageFrame | None:
    """A captured DataFrame of what ``parse(lines, hidden)`` makes of the lines of the files (text:
    every line; CSV, JSON: the lines Spark's readers make rows of), read in the JVM in the tasks of
    Spark's own read of them: a DataFrame of columns ``value`` and ``hidden``, the lines' ids (file
    index, byte offset), which it keeps. CSV (``csv_schema``: Spark's schema of the read, a Java
    StructType) is parsed in the JVM as Spark's CSV reader parses it, and JSON (``json_schema``)
    as Spark's JSON reader parses it, ``parse`` unused. None when
    the RDD engine's text input must read them (see the module docstring). ``path``: paths or
    globs, by commas."""
    from pyspark.sql import functions as F

    from capture_agent.record.capture.frame_io import _qualified
    from capture_agent.record.capture.inputs import file_info

    plain = lc.spark.read.text(path.split(","))
    partitions = [c for c in plain.columns if c != "value"]
    if partitions:  # columns of partition directories (key=value): not in the lines
        raise UnsupportedOperation(f"read.{fmt} of partition directories ({', '.join(partitions)})",
                                   "read the files without partition directories")
    column = lc.frames.fresh_column()
    if csv_schema is not None or json_schema is not None:
        location = ",".join(_qualified(lc, p) or p for p in path.split(","))
        if csv_schema is not None:
            options = {"header": str(header).lower(), "sep": sep, "quote": quote}
            df, uris = csv_frame(lc, plain, csv_schema, column, options, location)
        else:
            df, uris = json_frame(lc, plain, json_schema, column, location)
    else:
        assert parse is not None, "lines of text are given by the caller"
        lines, uris = lines_frame(lc, plain, fmt != "text", header)
        df = parse(lines.select("value", F.col("id").alias(column)), column)
    files = [file_info(lc.sc, uri) for uri in uris]
    saves = [p for p in lc.store.points.values() if isinstance(p.layout, Save) and reads_save(files, p)]
    if saves or any(info["size"] >= 1 << SHIFT for info in files):
        return None
    schema = csv_schema if csv_schema is not None else json_schema  # the rows' types (storage.spark_rows)
    layout = FileLines(format=fmt, source=path, files=files, header=header, sep=sep, quote=quote,
                       fields=list(fields or []), schema=str(schema.json()) if schema is not None else "")
    point = lc.store.new_point("input", f"read.{fmt}", layout, [], max(1, len(files)))
    return sourced(lc, point, df, column)


def rdd_frame(lc: Any, rdd: Any, schema: Any = None, samplingRatio: float | None = None) -> LineageFrame:
    """A captured RDD's records as a captured DataFrame (``createDataFrame(captured_rdd)``,
    ``captured_rdd.toDF()``): a stage point where the records leave the RDD job (record (p, i):
    the i-th record of partition p), whose ids the frame's rows carry, so traces go on through the
    RDD job. Records are Rows, tuples or lists (by position), or dicts (by field name)."""
    from pyspark.sql.types import LongType, StructField, StructType

    from capture_agent.record.capture.pipeline import Tail
    from capture_agent.record.storage.layouts import OneLocal
    from capture_agent.record.worker.boundary import stage_capture_agent

    functions_registered(lc)
    spark = lc.spark
    fields = spark.createDataFrame(rdd.plain(), schema, samplingRatio).schema  # PySpark's own inference
    names = [f.name for f in fields.fields]
    compiler = lc.compiler
    pipe = compiler.pipeline(rdd._node)
    point, target = compiler.new_point("stage", "toDF", OneLocal(), [pipe.point], pipe.num_partitions)
    pairs = compiler.sink(pipe, Tail("pairs")).mapPartitionsWithIndex(stage_capture_agent(target))
    column = lc.frames.fresh_column()
    rows = pairs.mapPartitionsWithIndex(with_ids(names))
    df = spark.createDataFrame(rows, StructType([*fields.fields, StructField(column, LongType(), False)]),
                               verifySchema=False)
    return known_by_leaves(lc, LineageFrame(lc, df, (Slot(point.capture_id, column, False),), "copy"))
