"""A query captured at its plan: a DataFrame whose rows carry their lineage in hidden columns.

``frame_plan.captured_query`` rewrites a query's plan in the JVM so that each row carries, per
source it reads, the id of the source row it was computed from (bigint) or the set of ids (a
Roaring bitmap) where several made it: one hidden column per source (a ``Slot``). A
``LineageFrame`` is that rewritten DataFrame with its slots and its deletion rule; its actions
(``collect``, ``toPandas``, ``write``, ``rdd``) run it and write an ``output`` point
(``capture/frame_io.py``): row i <- per slot, its id set. A trace goes from there through the
aggregates' combiner points to the sources. What the user holds is a plain DataFrame (an
unmodified job's) or a ``CapturedDataFrame`` (``capture/captured_frames.py``, the explicit API);
both are captured here when an action runs.

What-ifs of DataFrame outputs give the fates lineage decides: the output's rule is ``·`` (a row
dies with any of its source rows) when no aggregate, outer or semi join made it, else ``+`` (a
row dies when all its source rows die; otherwise it is changed). Exactly, in the process that ran
it: the output's own plan runs again with a ``lineage_keep`` filter of the deleted ids above each
source (``frame_io.replayed``, ``java/lineage/sql/Kept.java``); an aggregate's output pairs old
and new rows by its group columns (``_keys``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from capture_agent.record.capture import frame_io
from capture_agent.record.worker.frames import id_sets

HIDDEN = "__lineage_"


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
        self.captured_leaves: dict[str, LineageFrame] = {}
        # the slot of the first source made for a leaf no captured source holds, by what the leaf reads
        # (kind, options, schema, files: ``frame_plan._known_source``): a later leaf reading the same
        # files the same way (a view read by several actions, a table joined with itself) takes it
        self.read_sources: dict[str, Slot] = {}
        # for such a first source read in the JVM: its reader over another leaf's rows of the same
        # files (``frame_plan._read_again``)
        self.remakes: dict[str, Callable[[Any], Any]] = {}

    def fresh_column(self) -> str:
        self._columns += 1
        return f"{HIDDEN}{self._columns}"

    def next_source(self) -> int:
        self._sources += 1
        return self._sources


class LineageFrame:
    """A DataFrame whose rows carry their lineage (see the module docstring)."""

    def __init__(self, lc: Any, df: Any, slots: tuple[Slot, ...], rule: str,
                 point: str | None = None) -> None:
        self._lc = lc
        self._df = df
        self._slots = slots
        self._rule = rule  # copy or product: no aggregate, outer or semi join made its rows; sum: else
        self._point = point  # the source's point, then the last action's output
        self._keys: tuple[str, ...] | None = None  # the group's columns of an aggregate (what-if pairing)
        # the JVM analyzed plan whose column lineage its outputs keep (None: this frame's own)
        self._columns_plan: Any = None
        # a source read in the JVM: the same reader over another plain read of its files (a
        # DataFrame of its rows, ids in the same column, a relation of its own)
        self._remake: Callable[[Any], Any] | None = None

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

    def __repr__(self) -> str:
        return f"LineageFrame[{', '.join(f'{n}: {t}' for n, t in self.dtypes)}]"

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

    # ------------------------------------------------------------------ actions
    def collect(self, op: str = "collect") -> list[Any]:
        return frame_io.collected(self, op)

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
