"""Any DataFrame's query captured at its plan, in the JVM.

The query's optimized plan is rewritten by the agent's jar (``java/lineage/sql/provenance``: one
rewrite class per logical operator, in a registry, the way Perm and GProM rewrite queries) so that
each row carries, per source it reads, the id of the source row it was computed from (bigint) or
the set of ids (a Roaring bitmap) where several made it. Expressions stay Catalyst's own, never
SQL text; Spark plans and runs the rewritten query as any other, adaptive execution on. Because
the optimizer has already turned subqueries into joins, INTERSECT and EXCEPT into semi and anti
joins, DISTINCT into aggregates and CTEs into their uses, the rewrite sees few kinds of operators:

| operator | a row's ids |
|---|---|
| Project, Filter, Sort, Limit, Sample, Repartition, Generate, Python UDFs | its input row's |
| Aggregate over 1-32 sources' ids | its group's hash, the id at a combiner point its map tasks write (the tap) |
| Aggregate over more sources or sets | per source, the set of its group's rows' ids |
| Join inner, cross, outer | both sides' (a source on both sides: the list of its two ids, or the union) |
| Join left semi, existence (IN, EXISTS, INTERSECT) | its own and the matched right rows' |
| Join left anti (NOT IN, NOT EXISTS, EXCEPT) | its own |
| Union | its side's, aligned by source |
| Expand (GROUPING SETS, ROLLUP, CUBE) | its input row's |
| Window | its own and its frame's rows' (its partition for cume_dist, ntile...; up to it for running frames) |

Leaves become the agent's sources (``capture.frame_sources``: one class per kind below, chosen by
the leaf's format): files of Parquet, ORC, CSV, JSON Lines and text read in the JVM with their ids,
local rows, RDD rows and ranges written once to Parquet in the run's folder; a cached frame is read
as the query that filled its cache. Anything else (a cached frame that is not deterministic, pandas
UDFs over whole partitions, a reader option the agent's readers do not know...) is refused by name
before anything runs (``UnsupportedOperation``):
the caller runs the query plain and reports it not captured.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from capture_agent.record.capture.frame_jvm import (
    _new,
    as_python,
    functions_registered,
    java_strings,
    jvm_type,
    static_method,
)
from capture_agent.record.capture.frames import LineageFrame, Slot
from capture_agent.record.errors import UnsupportedOperation
from capture_agent.record.storage.layouts import FrameGroups, FramePrefix

PROVENANCE_CLASS = "lineage.sql.provenance.Provenance"
SESSION_CLASS = "org.apache.spark.sql.classic.SparkSession"
PLAN_CLASS = "org.apache.spark.sql.catalyst.plans.logical.LogicalPlan"


def captured_query(lc: Any, df: Any) -> LineageFrame:
    """``df``'s query as a captured DataFrame: its plan rewritten to carry each row's ids.

    Raises:
        UnsupportedOperation: an operator, expression or source of the query cannot be captured
            (named, with why).
    """
    from pyspark.sql import DataFrame

    functions_registered(lc)
    spark, gateway = lc.spark, lc.sc._gateway
    plan = df._jdf.queryExecution().optimizedPlan()
    provenance = _new(lc, PROVENANCE_CLASS, (SESSION_CLASS, spark._jsparkSession), (PLAN_CLASS, plan))
    refused = provenance.refused()
    if refused is not None:
        operator, _, why = str(refused).partition(": ")
        raise UnsupportedOperation(operator, why)
    leaves = provenance.leaves()  # a Java list: a leaf is fetched only when read again (one call)
    sources = []
    for i in range(leaves.size()):
        info = as_python(lc, provenance.describe(i))
        known = lc.frames.captured_leaves.get(info.get("identity", ""))
        if known is None:
            rows = DataFrame(_rows(lc, leaves.get(i)), spark)
            key = _source_key(info)
            known = _read_again(lc, key, rows)
            if known is None:
                known = _known_source(lc, key, source_of(lc, info, rows))
        sources.append(known)
    plans = gateway.new_array(jvm_type(lc.sc, PLAN_CLASS), len(sources))
    for i, source in enumerate(sources):
        plans[i] = source._df._jdf.queryExecution().analyzed()
    columns = java_strings(lc.sc, [source._slots[0].column for source in sources])
    ids = java_strings(lc.sc, [source._slots[0].source for source in sources])
    # a combiner point for each aggregate or window the rewrite may tap; those it did not take are dropped
    taps = [lc.store.new_point("combiner", "agg", FrameGroups(), [], 1) for _ in range(provenance.taps())]
    tapped: list[list[str]] = []
    try:
        tap_dirs = java_strings(lc.sc, [lc.store.fs.uri(p.location) for p in taps])
        rewritten = provenance.rewrite(plans, columns, ids, tap_dirs,
                                       java_strings(lc.sc, [p.capture_id for p in taps]))
        tapped = as_python(lc, provenance.tapped())
    finally:
        for point in taps[len(tapped):]:
            lc.store.points.pop(point.capture_id, None)
    for point, parents, prefix in zip(taps, tapped, as_python(lc, provenance.prefixTaps()), strict=False):
        point.parents = parents
        if prefix:  # a window's running frame: its rows are places, read as prefixes of partitions
            point.layout = FramePrefix()
    slots = tuple(Slot(str(s), str(c), bool(b)) for s, c, b in
                  zip(*(as_python(lc, a) for a in (provenance.slotSources(), provenance.slotColumns(),
                                                    provenance.slotSets())), strict=True))
    captured = LineageFrame(lc, DataFrame(rewritten, spark), slots, str(provenance.rule()))
    analyzed = df._jdf.queryExecution().analyzed()
    captured._columns_plan = analyzed  # the query as written reads the datasets
    captured._keys = group_keys(analyzed)
    return captured


# Operators an aggregate's rows pass through one for one (a what-if pairs its old and new rows by group)
ROW_FOR_ROW = ("Project", "Filter", "Sort", "GlobalLimit", "LocalLimit", "Offset", "SubqueryAlias",
               "Repartition", "RepartitionByExpression", "ResolvedHint")


def group_keys(plan: Any) -> tuple[str, ...] | None:
    """The output columns of the analyzed ``plan`` that name its rows' groups: the grouping
    columns of the aggregate (or DISTINCT) its rows come from one for one, when each is an output
    column as it is (not renamed); None else (a what-if pairs rows by their whole values)."""
    output = plan.output()
    names = {int(output.apply(i).exprId().id()): str(output.apply(i).name()) for i in range(output.size())}
    node = plan
    while node.getClass().getSimpleName() in ROW_FOR_ROW:
        node = node.child()
    kind = node.getClass().getSimpleName()
    if kind == "Distinct":
        grouping = node.output()
    elif kind == "Deduplicate":
        grouping = node.keys()
    elif kind == "Aggregate":
        grouping = node.groupingExpressions()
    else:
        return None
    keys = []
    for i in range(grouping.size()):
        expr = grouping.apply(i)
        if expr.getClass().getSimpleName() != "AttributeReference" or int(expr.exprId().id()) not in names:
            return None
        keys.append(names[int(expr.exprId().id())])
    return tuple(keys)


def _source_key(info: dict[str, str]) -> str | None:
    """What a leaf of files reads, as a key: its description (kind, options, schema, files:
    ``SourceLeaf.describe``). None for any other leaf: local rows (each ``createDataFrame`` is rows
    of its own), and a table the agent does not read (``source_of`` refuses it)."""
    return json.dumps(sorted(info.items())) if "files" in info else None


def _known_source(lc: Any, key: str | None, made: LineageFrame) -> LineageFrame:
    """``made`` (a captured source of files) as the source of the first leaf of this run that read
    the same files the same way (``key``: a view read by several actions, a table joined with
    itself): one input point, its ids in one column name wherever it is read, so that a trace finds
    each record once and a what-if's replay deletes it from every read (``frame_replay``)."""
    if key is None:
        return made
    (slot,) = made._slots
    first = lc.frames.read_sources.setdefault(key, slot)
    if first == slot:
        if made._remake is not None:
            lc.frames.remakes[key] = made._remake
        return made
    lc.store.points.pop(slot.source, None)
    lc.frames.source_slots.remove(slot)
    return LineageFrame(lc, made._df.withColumnRenamed(slot.column, first.column), (first,), made._rule,
                             point=first.source)


def _read_again(lc: Any, key: str | None, rows: Any) -> LineageFrame | None:
    """The source of a leaf reading what an earlier source of the run read (``key``), made again
    by the agent's reader in the JVM over this leaf's rows (a relation of its own, its columns new
    attributes: a table joined with itself) with the first source's point and id column, without
    listing the files, their sizes and the point again; None when no such source was read in the
    JVM."""
    remake = lc.frames.remakes.get(key) if key is not None else None
    if remake is None:
        return None
    first = lc.frames.read_sources[key]
    return LineageFrame(lc, remake(rows), (first,), "copy", point=first.source)


def _rows(lc: Any, leaf: Any) -> Any:
    """The Dataset of a leaf's rows (what a plain read of it gives)."""
    return static_method(lc.sc, "org.apache.spark.sql.classic.Dataset", "ofRows")(lc.spark._jsparkSession, leaf)


class SourceKind:
    """How the agent reads one kind of leaf with ids: ``frame`` gives its captured source."""

    kind: ClassVar[str]
    options: ClassVar[tuple[str, ...]] = ()  # the reader options the agent's reader of the kind takes

    def frame(self, lc: Any, df: Any, info: dict[str, str]) -> LineageFrame:
        raise NotImplementedError

    def chosen(self, info: dict[str, str]) -> dict[str, str]:
        """The leaf's reader options (lower-case names); any the agent's reader does not take
        raises UnsupportedOperation naming it."""
        given = {k.removeprefix("option.").lower(): v for k, v in info.items() if k.startswith("option.")}
        given.pop("path", None)
        given.pop("paths", None)
        other = sorted(k for k in given if k not in {o.lower() for o in self.options})
        if other:
            takes = ", ".join(self.options) or "none"
            raise UnsupportedOperation(f"read.{self.kind} with the option {other[0]}",
                                       f"options the agent's {self.kind} reader takes: {takes}")
        return given

    @staticmethod
    def paths(info: dict[str, str]) -> list[str]:
        return info.get("paths", "").split("\n")


class ParquetFiles(SourceKind):
    kind = "parquet"
    options = ("mergeSchema",)

    def frame(self, lc: Any, df: Any, info: dict[str, str]) -> LineageFrame:
        from capture_agent.record.capture.frame_sources import source_frame

        self.chosen(info)
        if "table" in info:
            return source_frame(lc, df, "read.table", [info["table"]])
        return source_frame(lc, df, "read.parquet", self.paths(info))


class OrcFiles(SourceKind):
    kind = "orc"
    options = ("mergeSchema",)

    def frame(self, lc: Any, df: Any, info: dict[str, str]) -> LineageFrame:
        from capture_agent.record.capture.frame_sources import orc_frame_source

        self.chosen(info)
        if "table" in info:
            return orc_frame_source(lc, df, [info["table"]], "read.table")
        return orc_frame_source(lc, df, self.paths(info))


class LineFiles(SourceKind):
    """Text, CSV and JSON Lines: lines read in the JVM with ids (file, byte offset)."""

    def lines(self, lc: Any, df: Any, info: dict[str, str], **kwargs: Any) -> LineageFrame:
        from capture_agent.record.capture.frame_sources import line_source

        made = line_source(lc, ",".join(self.paths(info)), self.kind, **kwargs)
        if made is None:
            raise UnsupportedOperation(f"read.{self.kind} of files of 4 GiB or more, or written by saveAsTextFile "
                                       "in this run", "the RDD engine's text input reads those")
        return made


class CsvFiles(LineFiles):
    kind = "csv"
    options = ("header", "sep", "delimiter", "quote", "inferSchema")

    def frame(self, lc: Any, df: Any, info: dict[str, str]) -> LineageFrame:
        given = self.chosen(info)
        return self.lines(lc, df, info, parse=None, header=given.get("header", "false").lower() == "true",
                          sep=given.get("sep", given.get("delimiter", ",")), quote=given.get("quote", '"'),
                          fields=list(df.columns), csv_schema=df._jdf.schema())


class JsonFiles(LineFiles):
    kind = "json"

    def frame(self, lc: Any, df: Any, info: dict[str, str]) -> LineageFrame:
        self.chosen(info)
        return self.lines(lc, df, info, parse=None, json_schema=df._jdf.schema())


class TextFiles(LineFiles):
    kind = "text"
    options = ("wholetext",)  # spark.read.text names it, false by default

    def frame(self, lc: Any, df: Any, info: dict[str, str]) -> LineageFrame:
        if self.chosen(info).get("wholetext", "false").lower() != "false":
            raise UnsupportedOperation("read.text with wholetext", "the agent's text reader reads lines")
        return self.lines(lc, df, info, parse=lambda lines, hidden: lines)


class LocalRows(SourceKind):
    """Local rows (createDataFrame), an RDD's rows and ranges: written once to Parquet in the
    run's folder and read back with ids."""

    kind = "local"

    def frame(self, lc: Any, df: Any, info: dict[str, str]) -> LineageFrame:
        from capture_agent.record.capture.frame_sources import local_frame

        return local_frame(lc, df)


class CapturedTable(SourceKind):
    """A table of Spark's data source API the agent did not read itself: none of its readers knows
    its rows' ids (the agent's own tables are known by their identity: ``captured_query``)."""

    kind = "table"

    def frame(self, lc: Any, df: Any, info: dict[str, str]) -> LineageFrame:
        raise UnsupportedOperation(f"{info.get('node', 'a table')} of a data source the agent did not read",
                                   "only files, catalog tables of files, local rows and the agent's own reads "
                                   "are read with ids")


SOURCE_KINDS: dict[str, SourceKind] = {k.kind: k for k in (ParquetFiles(), OrcFiles(), CsvFiles(), JsonFiles(),
                                                          TextFiles(), LocalRows(), CapturedTable())}


def source_of(lc: Any, info: dict[str, str], df: Any) -> LineageFrame:
    """The captured source of a leaf (``info``: the JVM's description of it; ``df``: its rows)."""
    kind = SOURCE_KINDS.get(info.get("kind", ""))
    if kind is None:
        raise UnsupportedOperation(f"{info.get('node', 'a leaf')} of {info.get('kind')}")
    return kind.frame(lc, df, info)
