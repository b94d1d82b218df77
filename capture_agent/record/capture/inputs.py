"""Input agents: text files (ids from byte offsets), parallelize, Parquet rows and CSV lines.

Text is read with Hadoop's (old API) ``TextInputFormat`` exactly as ``SparkContext.textFile``
reads it (same splits, same ``minPartitions`` rule), but keeps each line's key, its byte offset.
A line's id is ``(split, line number in the split)``; the input capture point records each
split's file and start, each file's size and modification time, and (table) each line's byte
offset from its split's start, so a traced line is fetched with one lookup and one seek and a
trace over a changed file says so. Line numbers rather than byte offsets in the ids keep the
bitmaps of later capture points dense: 21% instead of 53% of the input for word count.

The JVM sends the (offset, line) pairs pickled in batches of ``TEXT_BATCH`` lines (PySpark's
``textFile`` streams lines one by one): its automatic batching grows batches to 1-10 MB, which a
Python worker unpickles into 30-40 MB of tuples at once, a third of a small task's memory.
"""

from __future__ import annotations

from typing import Any

from pyspark.core.rdd import RDD
from pyspark.serializers import AutoBatchedSerializer, CPickleSerializer

from capture_agent.record.capture.compiler import Compiler
from capture_agent.record.capture.pipeline import Head
from capture_agent.record.capture.plan import Node
from capture_agent.record.storage.fs import hadoop_path
from capture_agent.record.storage.layouts import Rows, Save, Text, Values
from capture_agent.record.storage.layouts.inputs import reads_save
from capture_agent.record.storage.manifest import CapturePoint
from capture_agent.record.worker.frames import frame_rows_agent
from capture_agent.record.worker.inputs import csv_input_agent, parquet_input_agent, values_input_agent

TEXT_BATCH = 1024  # lines per batch from the JVM (module docstring)
_TEXT_INPUT_FORMAT = "org.apache.hadoop.mapred.TextInputFormat"
_LONG_WRITABLE = "org.apache.hadoop.io.LongWritable"
_TEXT = "org.apache.hadoop.io.Text"


def _jclass(sc: Any, name: str) -> Any:
    return sc._jvm.org.apache.spark.util.Utils.classForName(name, True, False)


def file_status(sc: Any, uri: str) -> tuple[int, int]:
    """(size, modification time in ms) of a file, through Hadoop's FileSystem."""
    jvm = sc._jvm
    path = jvm.org.apache.hadoop.fs.Path(uri)
    status = path.getFileSystem(sc._jsc.hadoopConfiguration()).getFileStatus(path)
    return int(status.getLen()), int(status.getModificationTime())


def file_info(sc: Any, uri: str) -> dict[str, Any]:
    """A file as an input layout lists it: path, size, modification time (``file_status``)."""
    size, mtime = file_status(sc, uri)
    return {"path": uri, "size": size, "mtime": mtime}


class TextInput:
    """``textFile``: (byte offset, line) pairs from Hadoop's TextInputFormat."""

    def __init__(self, sc: Any, name: str, min_partitions: int | None, use_unicode: bool) -> None:
        """Split as ``sc.textFile`` splits."""
        self.sc = sc
        self.name = name
        self.min_partitions = min_partitions or min(sc.defaultParallelism, 2)
        self.use_unicode = use_unicode
        classes = (_jclass(sc, _TEXT_INPUT_FORMAT), _jclass(sc, _LONG_WRITABLE), _jclass(sc, _TEXT))
        self._raw = sc._jsc.sc().hadoopFile(name, *classes, self.min_partitions)
        self.files: list[dict[str, Any]] = []
        self.splits: list[list[int]] = []
        index: dict[str, int] = {}
        for partition in self._raw.partitions():
            split = partition.inputSplit().value()
            uri = split.getPath().toString()
            if uri not in index:
                index[uri] = len(self.files)
                self.files.append(file_info(sc, uri))
            self.splits.append([index[uri], int(split.getStart()), int(split.getLength())])
        self.bases = [start for _, start, _ in self.splits]

    @property
    def num_partitions(self) -> int:
        return len(self.splits)

    def pairs_rdd(self) -> RDD:
        jvm = self.sc._jvm
        conf = jvm.org.apache.spark.util.SerializableConfiguration(self.sc._jsc.hadoopConfiguration())
        converter = jvm.org.apache.spark.api.python.WritableToJavaConverter(self.sc._jsc.broadcast(conf))
        converted = jvm.org.apache.spark.api.python.PythonHadoopUtil.convertRDD(self._raw, converter, converter)
        jrdd = jvm.org.apache.spark.api.python.SerDeUtil.pairRDDToPython(converted, TEXT_BATCH).toJavaRDD()
        return RDD(jrdd, self.sc, AutoBatchedSerializer(CPickleSerializer()))

    def layout(self) -> Text:
        return Text(format="text", source=self.name, files=self.files, splits=self.splits)

    def upstream(self, compiler: Compiler) -> list[CapturePoint]:
        """saveAsTextFile outputs of the same context whose part files this input reads: the
        input's lines are those records, so lineage chains through them into the earlier job."""
        return [point for point in compiler.store.points.values()
                if isinstance(point.layout, Save) and reads_save(self.files, point)]

    def compile(self, compiler: Compiler, node: Node) -> Head:
        point, target = compiler.new_point("input", node.op, self.layout(), self.upstream(compiler),
                                           self.num_partitions)
        head = Head(self.pairs_rdd(), "offset", point, bases=self.bases, encode=not self.use_unicode,
                    input_target=target, wide_offsets=any(length >= 1 << 32 for _, _, length in self.splits))
        return compiler.finish_head(head)


class CsvInput(TextInput):
    """CSV read as text lines (ids = byte offsets), each line parsed like Spark's CSV reader
    (string fields, empty -> None, header line of each file skipped when ``header``)."""

    def __init__(self, sc: Any, spark: Any, path: str, header: bool, sep: str, quote: str) -> None:
        super().__init__(sc, path, None, True)
        self.header = header
        self.sep = sep
        self.quote = quote
        self.columns = list(spark.read.csv(path, header=header, sep=sep, quote=quote).columns)

    def layout(self) -> Text:
        return Text(format="csv", source=self.name, files=self.files, splits=self.splits, header=self.header,
                    sep=self.sep, quote=self.quote, fields=self.columns)

    def compile(self, compiler: Compiler, node: Node) -> Head:
        point, target = compiler.new_point("input", node.op, self.layout(), [], self.num_partitions)
        agent = csv_input_agent(target, self.bases, self.header, self.columns, self.sep, self.quote)
        return compiler.finish_head(Head(self.pairs_rdd().mapPartitionsWithIndex(agent), "pairs", point,
                                         bases=self.bases, eager=False, dense=not self.header))


class ParallelizeInput:
    """``parallelize``: ids (partition, index); each task keeps its partition's values."""

    def __init__(self, rdd: RDD) -> None:
        self.rdd = rdd

    @property
    def num_partitions(self) -> int:
        return self.rdd.getNumPartitions()

    def compile(self, compiler: Compiler, node: Node) -> Head:
        point, target = compiler.new_point("input", node.op, Values(), [], self.num_partitions)
        rdd = self.rdd.mapPartitionsWithIndex(values_input_agent(target))
        return compiler.finish_head(Head(rdd, "pairs", point, eager=False))


class ParquetInput:
    """Parquet through the DataFrame reader; ids (partition, i), kept as (file, row index)
    segments from ``_metadata``, which do not depend on how Spark packs files into partitions."""

    def __init__(self, sc: Any, spark: Any, paths: tuple[str, ...]) -> None:
        self.sc = sc
        self.df = spark.read.parquet(*paths)
        self.paths = paths
        self._meta = self.df.select("*", self.df["_metadata.file_path"].alias("__lineage_file"),
                                    self.df["_metadata.row_index"].alias("__lineage_row"))
        self.files = [file_info(sc, hadoop_path(uri)) for uri in self.df.inputFiles()]

    @property
    def num_partitions(self) -> int:
        return self._meta.rdd.getNumPartitions()

    def compile(self, compiler: Compiler, node: Node) -> Head:
        point, target = compiler.new_point("input", node.op, Rows(paths=list(self.paths), files=self.files), [],
                                           self.num_partitions)
        rdd = self._meta.rdd.mapPartitionsWithIndex(parquet_input_agent(target))
        return compiler.finish_head(Head(rdd, "pairs", point, eager=False))


class FrameInput:
    """A captured DataFrame's rows (``frame.rdd``): records (partition, i) of its plain RDD, a
    stage point whose rows hold each record's ids per source of the frame (``sets`` layout)."""

    def __init__(self, frame: Any) -> None:
        self.frame = frame
        self.rdd = frame._df.rdd

    @property
    def num_partitions(self) -> int:
        return int(self.rdd.getNumPartitions())

    def compile(self, compiler: Compiler, node: Node) -> Head:
        frame = self.frame
        parents = [compiler.store.point(slot.source) for slot in frame._slots]
        point, target = compiler.new_point("stage", "rdd", frame._layout(), parents, self.num_partitions)
        visible, hidden = frame._positions()
        agent = frame_rows_agent(target, frame.columns, visible, hidden, [s.is_set for s in frame._slots])
        return compiler.finish_head(Head(self.rdd.mapPartitionsWithIndex(agent), "pairs", point, eager=False))
