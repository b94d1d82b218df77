"""Where captured DataFrames begin: their sources.

Sources (``lc.read.parquet``, ``lc.read.table`` of a Parquet table, ``lc.createDataFrame``) are
``input`` points of the ``file_rows`` layout: a record's id is (index of its file, its row index
in the file), both from Spark's ``_metadata`` columns, so ids do not depend on how Spark splits
files into partitions, and nothing is written at capture. Local data given to
``createDataFrame`` is written once to Parquet in the run's folder and read from there. The
first source of a session registers the JVM functions that build id sets
(``java/lineage/sql/IdSets.java``) and ships the agent's jar to the executors.
"""

from __future__ import annotations

from typing import Any

from capture_agent.record.capture.frames import CapturedDataFrame, Slot
from capture_agent.record.errors import LineageError, UnsupportedOperation
from capture_agent.record.storage.ids import SHIFT
from capture_agent.record.storage.layouts import FileRows

ID_SETS_CLASS = "lineage.sql.IdSets"


def _functions_registered(lc: Any) -> None:
    """Registers the JVM id-set functions (``lineage.sql.IdSets``) with the session, once, and
    ships the jar to the executors."""
    from capture_agent.listener import ensure_jar, jvm_class

    spark = lc.spark
    registered = spark.__dict__.setdefault("_lineage_id_sets", False)
    if registered:
        return
    jar = ensure_jar(lc.settings)
    if jar is None:
        raise LineageError("DataFrame capture needs the agent's jar: run python -m capture_agent.build_jar "
                           "(a JDK's javac builds it)")
    sc, gateway = lc.sc, lc.sc._gateway
    cls = jvm_class(sc, jar, ID_SETS_CLASS)
    instance = cls.getDeclaredConstructor(gateway.new_array(sc._jvm.java.lang.Class, 0)) \
        .newInstance(gateway.new_array(sc._jvm.java.lang.Object, 0))
    sc._jsc.sc().addJar(str(jar))
    instance.register(spark._jsparkSession)
    spark.__dict__["_lineage_id_sets"] = True


def _parquet_rows(uri: str) -> int:
    import pyarrow.parquet as pq

    from capture_agent.record.storage.sources import open_source

    with open_source(uri) as f:
        return int(pq.ParquetFile(f).metadata.num_rows)


def source_frame(lc: Any, df: Any, op: str, paths: list[str]) -> CapturedDataFrame:
    """A captured DataFrame over ``df`` (read from Parquet files only), its rows' ids added."""
    from pyspark.sql import functions as F

    from capture_agent.record.capture.inputs import file_status

    _functions_registered(lc)
    files = []
    for uri in sorted(df.inputFiles()):
        size, mtime = file_status(lc.sc, uri)
        files.append({"path": uri, "size": size, "mtime": mtime, "rows": _parquet_rows(uri)})
    point = lc.store.new_point("input", op, FileRows(paths=paths, files=files), [], max(1, len(files)))
    jvm = lc.sc._jvm
    keys = []  # _metadata.file_path spells a path as Hadoop's Path does (file:/x for file:///x)
    for index, info in enumerate(files):
        keys += [F.lit(str(jvm.org.apache.hadoop.fs.Path(info["path"]).toString())), F.lit(index)]
    file_index = F.element_at(F.create_map(*keys), F.col("_metadata.file_path")) if keys else F.lit(0)
    record_id = F.shiftleft(file_index.cast("long"), SHIFT) + F.col("_metadata.row_index")
    column = lc.frames.fresh_column()
    captured = df.select("*", record_id.alias(column))
    return CapturedDataFrame(lc, captured, (Slot(point.capture_id, column, False),), "copy",
                             point=point.capture_id)


def local_frame(lc: Any, df: Any) -> CapturedDataFrame:
    """``createDataFrame``'s rows, written once to Parquet in the run's folder and read back."""
    seq = lc.frames.next_source()
    folder = lc.store.fs.join(lc.store.run_dir, "sources", f"{seq:04d}")
    uri = lc.store.fs.uri(folder)
    df.write.mode("overwrite").parquet(uri)
    return source_frame(lc, lc.spark.read.parquet(uri), "createDataFrame", [uri])


class CapturedReader:
    """``lc.read``: Parquet files and Parquet tables of the catalog, captured."""

    def __init__(self, lc: Any) -> None:
        self._lc = lc
        self._options: dict[str, Any] = {}

    def option(self, key: str, value: Any) -> CapturedReader:
        self._options[key] = value
        return self

    def options(self, **options: Any) -> CapturedReader:
        self._options.update(options)
        return self

    def parquet(self, *paths: str, **options: Any) -> Any:
        df = self._lc.spark.read.options(**self._options).parquet(*paths, **options)
        return source_frame(self._lc, df, "read.parquet", list(paths))

    def table(self, name: str) -> Any:
        df = self._lc.spark.read.table(name)
        fmt = self._lc.spark.sql(f"DESCRIBE TABLE EXTENDED {name}").where("col_name = 'Provider'").collect()
        if not fmt or fmt[0]["data_type"].lower() != "parquet":
            raise UnsupportedOperation(f"read.table({name!r})", "tables stored as Parquet only, so far")
        return source_frame(self._lc, df, "read.table", [name])

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise UnsupportedOperation(f"read.{name}", "DataFrame capture reads Parquet (read.parquet, read.table) "
                                   "and createDataFrame so far; lc.textFile/lc.csv capture text as RDDs")
