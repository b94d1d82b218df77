"""``lc.read``: the explicit API's readers. Each makes its source's input point when called
(``capture.frame_sources``) and gives the user the source's plain rows as a ``CapturedDataFrame``
(``capture.captured_frames``), whose actions read that same point again."""

from __future__ import annotations

from typing import Any

from capture_agent.record.capture.captured_frames import CapturedDataFrame, user_frame
from capture_agent.record.capture.frame_sources import line_source, orc_frame_source, rdd_frame, source_frame
from capture_agent.record.errors import UnsupportedOperation
from capture_agent.record.worker.frames import one_field


class CapturedReader:
    """``lc.read``: Parquet files, Parquet tables of the catalog, text, CSV and JSON Lines, captured."""

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
        return user_frame(self._lc, source_frame(self._lc, df, "read.parquet", list(paths)))

    def orc(self, *paths: str, **options: Any) -> Any:
        """ORC files, with Spark's schema of the read; ids and positions (file, row number), read in
        the JVM (``java/lineage/sql/Orc.java``: Spark gives no row index of ORC files)."""
        df = self._lc.spark.read.options(**self._options).orc(*paths, **options)
        return user_frame(self._lc, orc_frame_source(self._lc, df, list(paths)))

    def table(self, name: str) -> Any:
        df = self._lc.spark.read.table(name)
        fmt = self._lc.spark.sql(f"DESCRIBE TABLE EXTENDED {name}").where("col_name = 'Provider'").collect()
        provider = fmt[0]["data_type"].lower() if fmt else ""
        if provider == "orc":
            return user_frame(self._lc, orc_frame_source(self._lc, df, [name], "read.table"))
        if provider != "parquet":
            raise UnsupportedOperation(f"read.table({name!r})", "tables stored as Parquet or ORC only, so far")
        return user_frame(self._lc, source_frame(self._lc, df, "read.table", [name]))

    def text(self, path: str) -> Any:
        """Lines as rows of one ``value`` column; ids and positions (file, byte offset) of the lines."""
        self._line_options("read.text", {}, {})
        lines = line_source(self._lc, path, "text", lambda lines, hidden: lines)
        if lines is None:
            lines = rdd_frame(self._lc, self._lc.textFile(path).map(one_field), "value string")
        return user_frame(self._lc, lines)

    def _line_options(self, op: str, known: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
        """The reader options of ``op`` (``known``: name -> default; ``given``: its arguments, None
        for not given): an argument, else the option set with ``option()``, else the default. Any
        other option set raises UnsupportedOperation: the lines are read by the agent's reader,
        which knows only these."""
        aliases = {"delimiter": "sep"}
        options = {aliases.get(k, k): v for k, v in self._options.items()}
        other = sorted(k for k in options if k not in known)
        if other:
            raise UnsupportedOperation(f"{op} with the option {other[0]}",
                                       f"options of a captured {op}: {', '.join(sorted(known))}")
        out = {}
        for name, default in known.items():
            value = given.get(name)
            value = options.get(name, default) if value is None else value
            out[name] = str(value).lower() == "true" if isinstance(default, bool) else value
        return out

    def csv(self, path: str, schema: Any = None, header: bool | None = None, sep: str | None = None,
            quote: str | None = None, inferSchema: bool | None = None) -> Any:
        """CSV lines parsed as Spark's reader parses them, with the given or inferred schema (the
        header's names, string fields otherwise); ids and positions of the lines. ``header``,
        ``sep`` (``delimiter``), ``quote`` and ``inferSchema`` may be set with ``option()`` too."""
        from pyspark.sql import functions as F

        chosen = self._line_options("read.csv", {"header": False, "sep": ",", "quote": '"', "inferSchema": False},
                                    {"header": header, "sep": sep, "quote": quote, "inferSchema": inferSchema})
        header, sep, quote, inferSchema = chosen["header"], chosen["sep"], chosen["quote"], chosen["inferSchema"]

        read = self._lc.spark.read.csv(path, schema=schema, header=header, sep=sep, quote=quote,
                                       inferSchema=inferSchema)
        shape = read.schema
        names = [f.name for f in shape.fields]
        lines = line_source(self._lc, path, "csv", None, header=header, sep=sep, quote=quote, fields=names,
                            csv_schema=read._jdf.schema())
        if lines is not None:
            return user_frame(self._lc, lines)
        strings = rdd_frame(self._lc, self._lc.csv(path, header, sep, quote).map(tuple),
                            ", ".join(f"`{n}` string" for n in names))
        typed = strings.plain().select(*[F.col(f"`{f.name}`").cast(f.dataType).alias(f.name) for f in shape.fields])
        return CapturedDataFrame(self._lc, typed, source=strings)

    def json(self, path: str, schema: Any = None) -> Any:
        """JSON Lines parsed as Spark's reader parses them (an array's objects are rows of their
        line too), with the given (a StructType or DDL string) or Spark's inferred schema; ids and
        positions of the lines."""
        from pyspark.sql import functions as F

        self._line_options("read.json", {}, {})
        read = self._lc.spark.read.json(path, schema=schema)
        shape = read.schema
        lines = line_source(self._lc, path, "json", None, json_schema=read._jdf.schema())
        if lines is not None:
            return user_frame(self._lc, lines)
        row = F.from_json("value", shape)  # the RDD engine's lines: an array's objects make one malformed row
        text = rdd_frame(self._lc, self._lc.textFile(path).map(one_field), "value string")
        parsed = text.plain().select(*[row.getField(n).alias(n) for n in shape.fieldNames()])
        return CapturedDataFrame(self._lc, parsed, source=text)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise UnsupportedOperation(f"read.{name}", "DataFrame capture reads parquet, orc, table (Parquet, ORC), "
                                   "text, csv and json")
