"""Captured DataFrames: record lineage of DataFrame jobs, computed inside the JVM.

    orders = lc.read.parquet("orders/")          # read.orc/table/text/csv/json, lc.createDataFrame, rdd.toDF
    totals = orders.join(customers, "customer_id").groupBy("country").agg(F.sum("amount"))
    totals.collect()                                     # PySpark's rows; lineage written
    totals.getLineage().filter(lambda r: r.country == "JP").goBackAll().collect()   # input Rows

A captured DataFrame is a plain DataFrame with one hidden column per source it reads (``Slot``):
a row's record id there (bigint). An aggregate over at most three sources' ids stays Spark's own
(a code-generated hash aggregate): below it, a tap (``java/lineage/sql/Tap.java``, which Spark's
generated code calls with primitive longs) passes each row through and remembers which ids went
into which group, and each map task writes that as a table of a ``combiner`` point
(``storage/layouts/groups.py``); the aggregate brings out the group's 63-bit hash (xxhash64 of
its columns), which is then the row's id at that point, so the point is a source like any other
for what follows (another aggregate taps it in turn).
Elsewhere (a window, a source on both sides of a join, an aggregate over more sources) a row
holds the set of ids of every row it was computed from (a Roaring bitmap, built in the JVM by
``lineage_ids``/``lineage_union``, see ``java/lineage/sql/IdSets.java``). Each method applies
PySpark's own to that DataFrame and keeps the hidden columns through it:

| methods | hidden columns |
|---|---|
| select(Expr), withColumn(s), with(Columns)Renamed, drop, toDF, filter/where, explode | kept |
| sample, orderBy/sort, sortWithinPartitions, limit, repartition, coalesce, cache, hint | kept |
| groupBy(...).agg/count/sum/avg/min/max, agg, distinct, dropDuplicates | its group's (or per source: the group's ids) |
| join: inner, cross, outer (broadcast through ``hint``) | both sides' (a source on both: their union) |
| join: semi / anti | left's, and the matching right rows' / left's |
| union, unionAll, unionByName | aligned by source (a missing source: none) |
| dropna, fillna | kept (applied to the visible columns only) |

Spark runs the query as it would (adaptive execution on); lineage is a function of each row, so
it is exact whatever partitions Spark coalesces or splits. An action writes an ``output`` point
(``capture/frame_io.py``): row i <- per slot, its id set. A trace goes from there through the
aggregates' combiner points to the sources. Two groups whose hashes collide (odds about n^2/2^64
for n groups) would share their inputs.

What-ifs of DataFrame outputs give the fates lineage decides: the output's rule is ``·`` (a row
dies with any of its source rows) when no aggregate, outer or semi join made it, else ``+`` (a
row dies when all its source rows die; otherwise it is changed). Exactly, in the process that ran
it: the output's own plan runs again with a ``lineage_keep`` filter of the deleted ids above each
source (``frame_io.replayed``, ``java/lineage/sql/Kept.java``); an aggregate's output pairs old
and new rows by its group columns.

Window functions partitioned and ordered by columns are kept too: a windowed row traces to
itself and the rows of its frame as Spark resolved it (a running sum: the rows up to it; rank,
row_number: the rows ordered before it; lag/lead: the row at the offset), or to its whole window
partition where the value depends on it all (cume_dist, percent_rank, ntile, unbounded frames).
Every other DataFrame method raises ``UnsupportedOperation`` before anything runs: pandas UDFs
that map whole partitions (mapInPandas, applyInPandas), pivot, cube/rollup, observe, streaming.
SQL (``lc.sql``) is captured at its plan in the JVM (``capture/frame_plan.py``), a view of a
captured frame read as its sources. A projection is checked after analysis: a window partitioned or
ordered by an expression is refused.

A write's output point is a ``frame_write`` listing the Parquet part files it made: a captured
read of them, in this run or another, has it as its parent, so traces and what-ifs go on into
the job that wrote them.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from capture_agent.record.capture import frame_io
from capture_agent.record.errors import NotCaptured, UnsupportedOperation
from capture_agent.record.worker.frames import id_sets

if TYPE_CHECKING:
    from capture_agent.record.query.lineage_rdd import LineageRDD

HIDDEN = "__lineage_"
RULES = ("copy", "product", "sum")  # a frame's deletion rule, weakest last
JOINS = {"inner": "inner", "cross": "inner", "outer": "outer", "full": "outer", "fullouter": "outer",
         "full_outer": "outer", "left": "outer", "leftouter": "outer", "left_outer": "outer", "right": "outer",
         "rightouter": "outer", "right_outer": "outer", "semi": "semi", "leftsemi": "semi", "left_semi": "semi",
         "anti": "anti", "leftanti": "anti", "left_anti": "anti"}
REFUSED_NODES = ("Pivot", "MapInPandas", "FlatMapGroupsInPandas", "MapInArrow",
                 "FlatMapCoGroupsInPandas", "CollectMetrics", "Expand")


@dataclass(frozen=True)
class Slot:
    """One source's hidden column: its ids (bigint) or id sets (binary)."""

    source: str  # the source's capture id
    column: str
    is_set: bool


class FrameState:
    """Per LineageContext: fresh hidden column names, source folders, the sources made."""

    def __init__(self) -> None:
        self._columns = 0
        self._sources = 0
        self.source_slots: list[Slot] = []  # where each source made its ids (what-if replays filter there)
        # each source by what its plan's leaves read (``LeafIdentity``): a query over its rows reads it again
        self.captured_leaves: dict[str, CapturedDataFrame] = {}

    def fresh_column(self) -> str:
        self._columns += 1
        return f"{HIDDEN}{self._columns}"

    def next_source(self) -> int:
        self._sources += 1
        return self._sources


def _weakest(*rules: str) -> str:
    return max(rules, key=RULES.index)


def _plan_nodes(df: Any) -> Counter[str]:
    """How many nodes of each kind a DataFrame's analyzed plan has."""
    tree = str(df._jdf.queryExecution().analyzed().treeString())
    return Counter(m.group(1) for m in re.finditer(r"^[\s:+\-|]*([A-Za-z]+)", tree, re.MULTILINE))


# A window's lineage: its partition columns (None: an expression), then, for a frame narrower than
# the partition, the order ((column or None, descending, nulls first), ...) and the frame (rows or
# range, lower, upper; None: unbounded).
WindowLineage = tuple[tuple[str | None, ...], tuple[tuple[str | None, bool, bool], ...],
                      tuple[str, int | None, int | None] | None]
TAPPED_SOURCES = 3  # an aggregate over at most this many sources' ids keeps Spark's own aggregate (``_tapped``)
WHOLE_PARTITION = ("CumeDist", "PercentRank", "NTile")  # values that depend on the partition's size


def _window_specs(df: Any) -> Counter[WindowLineage]:
    """The lineage of each window expression of a DataFrame's analyzed plan: the rows of its frame
    as Spark resolved it (a running sum: the rows up to this one; rank, row_number: the rows
    ordered before; lag and lead: the row at the offset), or of the whole partition (cume_dist,
    percent_rank, ntile, frames unbounded both ways)."""
    out: Counter[WindowLineage] = Counter()
    todo = [df._jdf.queryExecution().analyzed()]
    while todo:
        node = todo.pop()
        if node.getClass().getSimpleName() == "Window":
            expressions = node.windowExpressions()
            for i in range(expressions.size()):
                window = expressions.apply(i)
                while window.getClass().getSimpleName() == "Alias":
                    window = window.child()
                out[_window_lineage(window)] += 1
        children = node.children()
        todo.extend(children.apply(i) for i in range(children.size()))
    return out


def _column_name(expr: Any) -> str | None:
    return str(expr.name()) if expr.getClass().getSimpleName() == "AttributeReference" else None


def _bound(expr: Any) -> int | None:
    kind = expr.getClass().getSimpleName()
    if kind.startswith("Unbounded"):
        return None
    if kind.startswith("CurrentRow"):
        return 0
    value = expr.eval(None) if expr.foldable() else None
    if not isinstance(value, int):
        raise UnsupportedOperation(f"a window frame bounded by {expr.toString()}", "bound frames by row counts")
    return value


def _window_lineage(window: Any) -> WindowLineage:
    spec = window.windowSpec()
    partition = spec.partitionSpec()
    parts = tuple(_column_name(partition.apply(i)) for i in range(partition.size()))
    frame = spec.frameSpecification()
    if window.windowFunction().getClass().getSimpleName() in WHOLE_PARTITION or \
            frame.getClass().getSimpleName() != "SpecifiedWindowFrame":
        return parts, (), None
    lower, upper = _bound(frame.lower()), _bound(frame.upper())
    if lower is None and upper is None:
        return parts, (), None
    order = spec.orderSpec()
    orders = tuple((_column_name(o.child()), str(o.direction().sql()) == "DESC",
                    str(o.nullOrdering().sql()) == "NULLS FIRST")
                   for o in (order.apply(i) for i in range(order.size())))
    kind = "rows" if frame.frameType().getClass().getSimpleName().startswith("RowFrame") else "range"
    return parts, orders, (kind, lower, upper)


def _window(spec: WindowLineage) -> Any:
    """The pyspark Window of a window's lineage."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    parts, orders, frame = spec
    window = Window.partitionBy(*[F.col(f"`{c}`") for c in parts])
    if frame is None:
        return window
    columns = []
    for name, descending, nulls_first in orders:
        column = F.col(f"`{name}`")
        if descending:
            columns.append(column.desc_nulls_first() if nulls_first else column.desc_nulls_last())
        else:
            columns.append(column.asc_nulls_first() if nulls_first else column.asc_nulls_last())
    kind, lower, upper = frame
    window = window.orderBy(*columns)
    low = Window.unboundedPreceding if lower is None else lower
    high = Window.unboundedFollowing if upper is None else upper
    return window.rowsBetween(low, high) if kind == "rows" else window.rangeBetween(low, high)


def _as_set(slot: Slot) -> Any:
    """A slot's column as id sets (an id column converted by ``lineage_set``)."""
    from pyspark.sql import functions as F

    return F.col(slot.column) if slot.is_set else F.expr(f"lineage_set(`{slot.column}`)")


def _set_aggregate(slot: Slot, alias: bool = True) -> Any:
    from pyspark.sql import functions as F

    fn = "lineage_union" if slot.is_set else "lineage_ids"
    aggregate = F.expr(f"{fn}(`{slot.column}`)")
    return aggregate.alias(slot.column) if alias else aggregate


class CapturedDataFrame:
    """A DataFrame whose rows carry their lineage (see the module docstring)."""

    def __init__(self, lc: Any, df: Any, slots: tuple[Slot, ...], rule: str,
                 point: str | None = None) -> None:
        self._lc = lc
        self._df = df
        self._slots = slots
        self._rule = rule
        self._point = point  # the source's point, then the last action's output
        self._keys: tuple[str, ...] | None = None  # the group's columns after an aggregate (what-if pairing)
        # the JVM analyzed plan whose column lineage its outputs keep (None: this frame's own)
        self._columns_plan: Any = None

    # ------------------------------------------------------------------ plumbing
    def _hidden(self) -> set[str]:
        return {s.column for s in self._slots}

    def _positions(self) -> tuple[list[int], list[int]]:
        """Indexes of the visible columns, and of the hidden ones in slot order."""
        columns = self._df.columns
        hidden = self._hidden()
        return ([i for i, c in enumerate(columns) if c not in hidden],
                [columns.index(s.column) for s in self._slots])

    def _layout(self) -> Any:
        """The ``sets`` layout of a point holding this frame's rows: rule · while no aggregate,
        outer or semi join made them, else +."""
        from capture_agent.record.storage.layouts import Sets

        keys = list(self._keys) if self._keys is not None and set(self._keys) <= set(self.columns) else None
        return Sets(mode="product" if self._rule in ("copy", "product") else "sum", keys=keys)

    def _with(self, df: Any, slots: tuple[Slot, ...] | None = None, rule: str | None = None) -> CapturedDataFrame:
        out = CapturedDataFrame(self._lc, df, self._slots if slots is None else slots,
                                self._rule if rule is None else rule)
        out._keys = self._keys if slots is None else None  # rows 1:1 with this frame's keep their group
        return out

    def _checked(self, df: Any, operation: str, aggregates: bool = True) -> Counter[str]:
        """Raises UnsupportedOperation when ``df`` (this frame transformed by ``operation``) has a
        refused node this frame does not have, or (unless ``aggregates``) a new aggregate; else
        gives ``df``'s nodes (``_plan_nodes``)."""
        before, after = _plan_nodes(self._df), _plan_nodes(df)
        refused = {node for node in REFUSED_NODES if after[node] > before[node]}
        if refused:
            raise UnsupportedOperation(f"DataFrame.{operation} with {', '.join(sorted(refused))}",
                                       "pivots and pandas UDFs over whole partitions are not captured yet")
        if not aggregates and after["Aggregate"] > before["Aggregate"]:
            raise UnsupportedOperation(f"DataFrame.{operation} with an aggregate", "use agg() or groupBy().agg()")
        return after

    def __repr__(self) -> str:
        return f"CapturedDataFrame[{', '.join(f'{n}: {t}' for n, t in self.dtypes)}]"

    # ------------------------------------------------------------------ plain metadata
    @property
    def columns(self) -> list[str]:
        hidden = self._hidden()
        return [c for c in self._df.columns if c not in hidden]

    @property
    def schema(self) -> Any:
        from pyspark.sql.types import StructType

        hidden = self._hidden()
        return StructType([f for f in self._df.schema.fields if f.name not in hidden])

    @property
    def dtypes(self) -> list[tuple[str, str]]:
        hidden = self._hidden()
        return [(n, t) for n, t in self._df.dtypes if n not in hidden]

    def plain(self) -> Any:
        """The plain DataFrame of the visible columns (what PySpark alone would compute)."""
        from pyspark.sql import functions as F

        return self._df.select(*[F.col(f"`{c}`") for c in self.columns]) if self._slots else self._df

    def printSchema(self, level: int | None = None) -> None:
        self.plain().printSchema(level)

    def explain(self, *args: Any, **kwargs: Any) -> None:
        self._df.explain(*args, **kwargs)

    def show(self, *args: Any, **kwargs: Any) -> None:
        """Shows the rows, as PySpark does (a display: no output point)."""
        self.plain().show(*args, **kwargs)

    @property
    def sparkSession(self) -> Any:
        return self._df.sparkSession

    @property
    def is_cached(self) -> bool:
        return bool(self._df.is_cached)

    @property
    def storageLevel(self) -> Any:
        return self._df.storageLevel

    def inputFiles(self) -> list[str]:
        return list(self._df.inputFiles())

    def isEmpty(self) -> bool:
        return bool(self._df.isEmpty())

    def __getitem__(self, item: Any) -> Any:
        if isinstance(item, str):
            return self._df[item]
        if isinstance(item, int):
            return self._df[self.columns[item]]
        raise UnsupportedOperation("DataFrame[...] with a list or Column", "use select() or filter()")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name in self.__dict__.get("_df", object()).columns and not name.startswith(HIDDEN):
            return self._df[name]
        raise UnsupportedOperation(f"DataFrame.{name}", "see capture_agent.record.capture.frames for what is "
                                   "captured; .plain() gives the uncaptured DataFrame")

    # ------------------------------------------------------------------ projections and filters
    def _keep(self, df: Any, operation: str, aggregates: bool = False, build: Any = None) -> CapturedDataFrame:
        """``df`` (this frame transformed by ``operation``) as a captured frame, once checked:
        no refused node, no aggregate it did not make (``aggregates``), every hidden column kept.
        A projection bringing window functions is built again (``build``, given the plain frame)
        over this frame with each row's ids replaced by those of its window partition."""
        nodes = self._checked(df, operation, aggregates)
        windows = _window_specs(df) - _window_specs(self._df) if nodes["Window"] else Counter()
        if windows and build is not None:
            known = set(self.columns)  # Spark names a partition expression _w0...: a column only
            if any(c not in known for spec in windows for c in spec[0]):
                raise UnsupportedOperation(f"DataFrame.{operation} with a window partitioned by an expression",
                                           "partition the window by columns")
            if any(c not in known for spec in windows for c, _, _ in spec[1]):
                raise UnsupportedOperation(f"DataFrame.{operation} with a window ordered by an expression",
                                           "order the window by columns")
            over = self._over(list(windows))
            return over._keep(build(over._df), operation, aggregates)
        missing = [s.column for s in self._slots if s.column not in df.columns]
        if missing:
            raise UnsupportedOperation(f"DataFrame.{operation} dropping the lineage columns")
        return self._with(df)

    def _over(self, specs: list[WindowLineage]) -> CapturedDataFrame:
        """This frame with each row's ids replaced by its own and those of every row of its
        windows' frames (``_window_specs``), all gathered from the ids before."""
        from pyspark.sql import functions as F

        columns = {}
        for s in self._slots:
            ids = _as_set(s)
            for spec in specs:
                ids = F.call_function("lineage_or", ids, _set_aggregate(s, alias=False).over(_window(spec)))
            columns[s.column] = ids
        df = self._df.withColumns(columns)
        return self._with(df, tuple(Slot(s.source, s.column, True) for s in self._slots), "sum")

    def select(self, *cols: Any) -> CapturedDataFrame:
        from pyspark.sql import functions as F

        if len(cols) == 1 and isinstance(cols[0], list):
            cols = tuple(cols[0])
        trial = self._df.select(*cols)
        if _plan_nodes(trial)["Aggregate"] > _plan_nodes(self._df)["Aggregate"]:
            return self.agg(*cols)
        def build(df: Any) -> Any:
            missing = [F.col(s.column) for s in self._slots if s.column not in df.select(*cols).columns]
            return df.select(*cols, *missing)

        return self._keep(build(self._df), "select", build=build)

    def selectExpr(self, *exprs: str) -> CapturedDataFrame:
        from pyspark.sql import functions as F

        if len(exprs) == 1 and isinstance(exprs[0], list):
            exprs = tuple(exprs[0])
        return self.select(*[F.expr(e) for e in exprs])

    def withColumn(self, colName: str, col: Any) -> CapturedDataFrame:
        return self._keep(self._df.withColumn(colName, col), "withColumn",
                          build=lambda df: df.withColumn(colName, col))

    def withColumns(self, *colsMap: dict[str, Any]) -> CapturedDataFrame:
        return self._keep(self._df.withColumns(*colsMap), "withColumns", build=lambda df: df.withColumns(*colsMap))

    def withColumnRenamed(self, existing: str, new: str) -> CapturedDataFrame:
        return self._keep(self._df.withColumnRenamed(existing, new), "withColumnRenamed")

    def withColumnsRenamed(self, colsMap: dict[str, str]) -> CapturedDataFrame:
        return self._keep(self._df.withColumnsRenamed(colsMap), "withColumnsRenamed")

    def drop(self, *cols: Any) -> CapturedDataFrame:
        return self._keep(self._df.drop(*cols), "drop")

    def toDF(self, *cols: str) -> CapturedDataFrame:
        return self._keep(self._df.toDF(*cols, *[s.column for s in self._slots]), "toDF")

    def filter(self, condition: Any) -> CapturedDataFrame:
        return self._keep(self._df.filter(condition), "filter")

    where = filter

    def dropna(self, how: str = "any", thresh: int | None = None, subset: Any = None) -> CapturedDataFrame:
        return self._keep(self._df.dropna(how, thresh, subset if subset is not None else self.columns), "dropna")

    def fillna(self, value: Any, subset: Any = None) -> CapturedDataFrame:
        return self._keep(self._df.fillna(value, subset if subset is not None else self.columns), "fillna")

    def alias(self, alias: str) -> CapturedDataFrame:
        return self._with(self._df.alias(alias))

    def hint(self, name: str, *parameters: Any) -> CapturedDataFrame:
        return self._with(self._df.hint(name, *parameters))

    def sample(self, *args: Any, **kwargs: Any) -> CapturedDataFrame:
        return self._with(self._df.sample(*args, **kwargs))

    def orderBy(self, *cols: Any, **kwargs: Any) -> CapturedDataFrame:
        return self._with(self._df.orderBy(*cols, **kwargs))

    sort = orderBy

    def sortWithinPartitions(self, *cols: Any, **kwargs: Any) -> CapturedDataFrame:
        return self._with(self._df.sortWithinPartitions(*cols, **kwargs))

    def limit(self, num: int) -> CapturedDataFrame:
        limited = self._with(self._df.limit(num))
        limited._columns_plan = self._columns_plan  # the same columns (take, head and show)
        return limited

    def repartition(self, *args: Any) -> CapturedDataFrame:
        return self._with(self._df.repartition(*args))

    def repartitionByRange(self, *args: Any) -> CapturedDataFrame:
        return self._with(self._df.repartitionByRange(*args))

    def coalesce(self, numPartitions: int) -> CapturedDataFrame:
        return self._with(self._df.coalesce(numPartitions))

    def cache(self) -> CapturedDataFrame:
        self._df.cache()
        return self

    def persist(self, *args: Any) -> CapturedDataFrame:
        self._df.persist(*args)
        return self

    def unpersist(self, blocking: bool = False) -> CapturedDataFrame:
        self._df.unpersist(blocking)
        return self

    # ------------------------------------------------------------------ aggregates
    def groupBy(self, *cols: Any) -> CapturedGroupedData:
        if len(cols) == 1 and isinstance(cols[0], list):
            cols = tuple(cols[0])
        return CapturedGroupedData(self, cols)

    groupby = groupBy

    def agg(self, *exprs: Any) -> CapturedDataFrame:
        return self.groupBy().agg(*exprs)

    def distinct(self) -> CapturedDataFrame:
        from pyspark.sql import functions as F

        return self.groupBy(*[F.col(f"`{c}`") for c in self.columns]).agg()

    def dropDuplicates(self, subset: list[str] | None = None) -> CapturedDataFrame:
        from pyspark.sql import functions as F

        if not subset:
            return self.distinct()
        others = [c for c in self.columns if c not in subset]
        grouped = self.groupBy(*subset).agg(*[F.first(F.col(f"`{c}`")).alias(c) for c in others])
        return grouped._keep(grouped._df.select(*[F.col(f"`{c}`") for c in self.columns],
                                                *[F.col(s.column) for s in grouped._slots]), "dropDuplicates")

    drop_duplicates = dropDuplicates

    # ------------------------------------------------------------------ joins and unions
    def _captured(self, other: Any, operation: str) -> CapturedDataFrame:
        if not isinstance(other, CapturedDataFrame) or other._lc is not self._lc:
            raise UnsupportedOperation(f"DataFrame.{operation} with a DataFrame not read through this "
                                       "LineageContext", "read both sides with lc.read / lc.createDataFrame")
        return other

    def _shared(self, other: CapturedDataFrame) -> tuple[CapturedDataFrame, dict[str, tuple[Slot, Slot]]]:
        """``other`` with the hidden columns of sources both frames read renamed apart, and
        {source: (this frame's slot, other's renamed slot)}."""
        mine = {s.source: s for s in self._slots}
        shared: dict[str, tuple[Slot, Slot]] = {}
        df, slots = other._df, []
        for slot in other._slots:
            if slot.source in mine:
                renamed = Slot(slot.source, self._lc.frames.fresh_column(), slot.is_set)
                df = df.withColumnRenamed(slot.column, renamed.column)
                shared[slot.source] = (mine[slot.source], renamed)
                slots.append(renamed)
            else:
                slots.append(slot)
        return other._with(df, tuple(slots)), shared

    def _merged(self, df: Any, slots: list[Slot], shared: dict[str, tuple[Slot, Slot]]) -> tuple[Any, list[Slot]]:
        """Each source read on both sides as one set column (the union of the two sides' ids)."""
        from pyspark.sql import functions as F

        for source, (left, right) in shared.items():
            a, b = _as_set(left), _as_set(right)
            df = df.withColumn(left.column, F.call_function("lineage_or", a, b)).drop(right.column)
            slots = [Slot(source, left.column, True) if s.source == source and s.column == left.column else s
                     for s in slots if s.column != right.column]
        return df, slots

    def join(self, other: Any, on: Any = None, how: str | None = None) -> CapturedDataFrame:
        other = self._captured(other, "join")
        kind = JOINS.get((how or "inner").lower().replace(" ", ""))
        if kind is None:
            raise UnsupportedOperation(f"DataFrame.join(how={how!r})")
        renamed, shared = self._shared(other)
        if kind == "anti":  # the right side's aggregates are its own, not this join's
            return self._keep(self._df.join(renamed._df, on, how), "join", aggregates=True)
        if kind == "semi":
            return self._semi_join(renamed, on, how, shared)
        df = self._df.join(renamed._df, on, how)
        slots = list(self._slots) + list(renamed._slots)
        df, slots = self._merged(df, slots, shared)
        rule = _weakest(self._rule, other._rule, "product" if kind == "inner" and not shared else "sum")
        return self._with(df, tuple(slots), rule)._keep(df, "join", aggregates=True)

    def _semi_join(self, other: CapturedDataFrame, on: Any, how: str | None,
                   shared: dict[str, tuple[Slot, Slot]]) -> CapturedDataFrame:
        """A semi join's rows with, per right source, the ids of the right rows they matched."""
        names = [on] if isinstance(on, str) else list(on) if isinstance(on, (list, tuple)) else None
        if not names or not all(isinstance(n, str) for n in names):
            raise UnsupportedOperation("DataFrame.join(how='semi') on an expression", "join on column names")
        matched = other.groupBy(*names).agg()
        df = self._df.join(matched._df, names, "inner")
        slots = list(self._slots) + list(matched._slots)
        df, slots = self._merged(df, slots, shared)
        return self._with(df, tuple(slots), "sum")._keep(df, "join", aggregates=True)

    def crossJoin(self, other: Any) -> CapturedDataFrame:
        return self.join(other, None, "cross")

    def _aligned(self, sources: list[tuple[str, bool]]) -> Any:
        """The visible columns, then one hidden column per source (null where not read)."""
        from pyspark.sql import functions as F

        mine = {s.source: s for s in self._slots}
        names = {source: f"{HIDDEN}u{k}" for k, (source, _) in enumerate(sources)}
        cols = [F.col(f"`{c}`") for c in self.columns]
        for source, is_set in sources:
            slot = mine.get(source)
            if slot is None:
                cols.append(F.lit(None).cast("binary" if is_set else "long").alias(names[source]))
            elif is_set and not slot.is_set:
                cols.append(_as_set(slot).alias(names[source]))
            else:
                cols.append(F.col(slot.column).alias(names[source]))
        return self._df.select(*cols)

    def _union(self, other: Any, operation: str, by_name: bool, allow_missing: bool = False) -> CapturedDataFrame:
        other = self._captured(other, operation)
        kinds: dict[str, bool] = {}
        for slot in (*self._slots, *other._slots):
            kinds[slot.source] = kinds.get(slot.source, False) or slot.is_set
        sources = list(kinds.items())
        left, right = self._aligned(sources), other._aligned(sources)
        df = left.unionByName(right, allowMissingColumns=allow_missing) if by_name else left.union(right)
        slots = tuple(Slot(source, f"{HIDDEN}u{k}", is_set) for k, (source, is_set) in enumerate(sources))
        renamed = df
        final: list[Slot] = []
        for slot in slots:
            fresh = self._lc.frames.fresh_column()
            renamed = renamed.withColumnRenamed(slot.column, fresh)
            final.append(Slot(slot.source, fresh, slot.is_set))
        return self._with(renamed, tuple(final), _weakest(self._rule, other._rule))

    def union(self, other: Any) -> CapturedDataFrame:
        return self._union(other, "union", False)

    unionAll = union

    def unionByName(self, other: Any, allowMissingColumns: bool = False) -> CapturedDataFrame:
        return self._union(other, "unionByName", True, allowMissingColumns)

    # ------------------------------------------------------------------ actions
    def collect(self) -> list[Any]:
        return frame_io.collected(self, "collect")

    def take(self, num: int) -> list[Any]:
        return frame_io.collected(self.limit(num), "take")

    def head(self, n: int | None = None) -> Any:
        rows = frame_io.collected(self.limit(1 if n is None else n), "head")
        return (rows[0] if rows else None) if n is None else rows

    def first(self) -> Any:
        return self.head()

    def tail(self, num: int) -> list[Any]:
        raise UnsupportedOperation("DataFrame.tail", "orderBy the reverse order and take()")

    def count(self) -> int:
        from pyspark.sql import functions as F

        counted = self.agg(F.count(F.lit(1)).alias("count"))
        rows = frame_io.collected(counted, "count")
        self._point = counted._point
        return int(rows[0][0])

    def toPandas(self) -> Any:
        from pyspark.sql.types import _create_row

        names = self.columns
        visible, hidden = self._positions()
        plan = frame_io.plan_ahead(self)
        full = self._df.toPandas()
        plain = full.iloc[:, visible]
        plain.columns = names
        ids = full.iloc[:, hidden].astype(object)
        # pandas spells an outer join's missing ids NaN: no ids, as None is everywhere else
        records = list(ids.where(ids.notna(), None).itertuples(index=False, name=None))
        values = [_create_row(names, list(r)) for r in plain.itertuples(index=False, name=None)]
        frame_io.record(self, "toPandas", values, id_sets(records, [s.is_set for s in self._slots]), plan)
        return plain.reset_index(drop=True)

    @property
    def write(self) -> frame_io.CapturedWriter:
        return frame_io.CapturedWriter(self)

    def createOrReplaceTempView(self, name: str) -> None:
        """A temporary view of the visible columns, which ``lc.sql`` queries captured (reading this
        frame's sources with their ids: ``frame_plan.captured_query``); ``spark.sql`` sees the same
        view, uncaptured."""
        self.plain().createOrReplaceTempView(name)

    def createTempView(self, name: str) -> None:
        self.plain().createTempView(name)  # raises as PySpark does when the view exists

    @property
    def rdd(self) -> Any:
        """The rows as a captured RDD (Rows of the visible columns): its records trace back to
        this frame's sources, and the RDD job's outputs forward from them."""
        from capture_agent.record.capture.inputs import FrameInput
        from capture_agent.record.capture.plan import SourceNode
        from capture_agent.record.query.recipes import Given

        source = FrameInput(self)
        plain = self.plain()
        node = SourceNode(self._lc.sc, "rdd", source, source.num_partitions,
                          Given(lambda: plain.rdd, "a captured DataFrame's rows (.rdd)"))
        return self._lc.rdd_type(self._lc._rt, node)

    # ------------------------------------------------------------------ lineage
    def getLineage(self) -> LineageRDD:
        """A LineageRDD at this frame's last action's output (a source: at its records)."""
        from capture_agent.record.query.lineage_rdd import LineageRDD

        if self._point is None:
            raise NotCaptured("run an action on this DataFrame first (collect, count, write...)")
        return LineageRDD.at_point(self._lc.lineage_session, self._point)


class CapturedGroupedData:
    """``groupBy(...)``: aggregates that also gather each source's ids of every group."""

    def __init__(self, frame: CapturedDataFrame, cols: tuple[Any, ...]) -> None:
        self._frame = frame
        self._cols = cols

    def agg(self, *exprs: Any) -> CapturedDataFrame:
        from pyspark.sql import functions as F

        frame = self._frame
        if len(exprs) == 1 and isinstance(exprs[0], dict):
            exprs = tuple(F.expr(f"{fn}(`{c}`)").alias(f"{fn}({c})") for c, fn in exprs[0].items())
        if 0 < len(frame._slots) <= TAPPED_SOURCES and not any(s.is_set for s in frame._slots):
            return self._tapped(exprs)
        sets = [_set_aggregate(s) for s in frame._slots]
        df = frame._df.groupBy(*self._cols).agg(*exprs, *sets) if (exprs or sets) else \
            frame._df.groupBy(*self._cols).agg(F.count(F.lit(1))).drop("count(1)")
        frame._checked(df, "agg")
        slots = tuple(Slot(s.source, s.column, True) for s in frame._slots)
        out = frame._with(df, slots, "sum")
        if all(isinstance(c, str) for c in self._cols):
            out._keys = tuple(self._cols)  # one row per value of these columns
        return out

    def _tapped(self, exprs: tuple[Any, ...]) -> CapturedDataFrame:
        """The aggregate as Spark's own, which also brings out a 63-bit hash of the group columns, with
        a ``combiner`` point of the ``frame_groups`` layout below it: each map task writes which
        ids of each source went into which group (``frame_jvm.tap_column``, ``java/lineage/sql/Tap.java``),
        and each output row carries its group's hash as its id there."""
        from capture_agent.record.capture.frame_jvm import tap_column
        from capture_agent.record.storage.layouts import FrameGroups

        frame, lc = self._frame, self._frame._lc
        parents = [lc.store.point(s.source) for s in frame._slots]
        point = lc.store.new_point("combiner", "agg", FrameGroups(), parents, 1)
        group = lc.frames.fresh_column()
        tap = tap_column(lc, point.location, frame._df, self._cols, [s.column for s in frame._slots])
        df = frame._df.groupBy(*self._cols).agg(*exprs, tap.alias(group))
        frame._checked(df, "agg")
        out = frame._with(df, (Slot(point.capture_id, group, False),), "sum")
        if all(isinstance(c, str) for c in self._cols):
            out._keys = tuple(self._cols)  # one row per value of these columns
        return out

    def count(self) -> CapturedDataFrame:
        from pyspark.sql import functions as F

        return self.agg(F.count(F.lit(1)).alias("count"))

    def _numeric(self, fn: str, label: str, cols: tuple[str, ...]) -> CapturedDataFrame:
        from pyspark.sql import functions as F
        from pyspark.sql.types import NumericType

        frame = self._frame
        if not cols:
            grouping = {c for c in self._cols if isinstance(c, str)}
            cols = tuple(f.name for f in frame.schema.fields
                         if isinstance(f.dataType, NumericType) and f.name not in grouping)
        return self.agg(*[getattr(F, fn)(F.col(f"`{c}`")).alias(f"{label}({c})") for c in cols])

    def sum(self, *cols: str) -> CapturedDataFrame:
        return self._numeric("sum", "sum", cols)

    def avg(self, *cols: str) -> CapturedDataFrame:
        return self._numeric("avg", "avg", cols)

    mean = avg

    def min(self, *cols: str) -> CapturedDataFrame:
        return self._numeric("min", "min", cols)

    def max(self, *cols: str) -> CapturedDataFrame:
        return self._numeric("max", "max", cols)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise UnsupportedOperation(f"GroupedData.{name}")
