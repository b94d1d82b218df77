"""Lineage queries over a CSProv index (the paper's Algorithm 2), answered in this process.

To find the ancestors of item q: find q's connected set cs (one file of ``items``); its set
lineage, the sets that derive cs directly or not, by recursive querying over the small set
dependency table; read the triples whose derived item lies in cs or its set lineage (one bucket
file per set, only the row groups whose ``dst_csid`` range holds the set); then the recursive
query over those triples alone. Descendants are the mirror image: the sets cs derives, and the
triples whose derived item lies in them (an edge leaving a descendant ends in a descendant, whose
set cs derives). A small component is one set: the query reads only its component.
"""

from __future__ import annotations

import bisect
import json
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from capture_agent.provenance import layout
from capture_agent.record.storage.fs import StoreFS

DIRECTIONS = ("ancestors", "descendants")
_OPEN_LIMIT = 8  # index generations kept open per process (their set dependencies and file footers)


@dataclass
class LineageAnswer:
    """The answer to one query, with what it read."""

    item: str
    direction: str
    found: bool = False
    component: int | None = None
    connected_set: int | None = None
    items: list[str] = field(default_factory=list)  # the ancestors (or descendants), q excluded
    edges: list[tuple[str, str, str]] = field(default_factory=list)  # (src, dst, op) of the lineage
    sets_read: list[int] = field(default_factory=list)
    triples_read: int = 0
    timings: dict[str, float] = field(default_factory=dict)


class ProvenanceIndex:
    """One index generation, opened for queries (footers and set dependencies read once)."""

    def __init__(self, store: StoreFS, folder: str) -> None:
        self.store = store
        self.folder = folder
        self.meta: dict[str, Any] = json.loads(store.read_bytes(store.join(folder, layout.META)))
        self.buckets = int(self.meta["buckets"])
        self._files: dict[tuple[str, int], list[_SortedFile]] = {}
        self._lock = threading.Lock()
        self._deps = self._read_table(layout.SET_DEPS, ["src_csid", "dst_csid"])

    _open: OrderedDict[tuple[str, str], ProvenanceIndex] = OrderedDict()
    _open_lock = threading.Lock()

    @classmethod
    def open(cls, store: StoreFS, folder: str) -> ProvenanceIndex:
        """The generation in ``folder``, kept open for the next queries (generations are never changed)."""
        key = (store.describe(), folder)
        with cls._open_lock:
            found = cls._open.get(key)
            if found is not None:
                cls._open.move_to_end(key)
                return found
        index = cls(store, folder)
        with cls._open_lock:
            cls._open[key] = index
            while len(cls._open) > _OPEN_LIMIT:
                cls._open.popitem(last=False)
        return index

    # ------------------------------------------------------------------ the query
    def lineage(self, item: str, direction: str = "ancestors") -> LineageAnswer:
        """The ancestors (or descendants) of ``item`` with the triples between them."""
        if direction not in DIRECTIONS:
            raise ValueError(f"direction must be one of {', '.join(DIRECTIONS)}")
        answer = LineageAnswer(item, direction)
        t = time.monotonic()
        located = self.locate(item)
        t = _lap(answer, "locate", t)
        if located is None:
            return answer
        answer.found = True
        answer.component, answer.connected_set = located
        sets = self.set_lineage(answer.connected_set, direction)
        t = _lap(answer, "set_lineage", t)
        triples = self.triples_of(sets)
        answer.sets_read = sorted(sets)
        answer.triples_read = triples.num_rows
        t = _lap(answer, "read", t)
        answer.items, answer.edges = recursive_query(triples, item, direction)
        _lap(answer, "recursive_query", t)
        return answer

    def locate(self, item: str) -> tuple[int, int] | None:
        """(component, connected set) of an item, or None when no triple names it."""
        import pyarrow.compute as pc

        bucket = layout.item_bucket(item, self.buckets)
        for part in self._bucket_files(layout.ITEMS, bucket, "item"):
            groups = part.groups_holding([item])
            if not groups:
                continue
            table = part.file.read_row_groups(groups, columns=["item", "ccid", "csid"])
            hit = table.filter(pc.equal(table.column("item"), item))
            if hit.num_rows:
                return int(hit.column("ccid")[0].as_py()), int(hit.column("csid")[0].as_py())
        return None

    def set_lineage(self, csid: int, direction: str) -> set[int]:
        """``csid`` and every set that derives it (ancestors) or that it derives (descendants)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        here, there = ("dst_csid", "src_csid") if direction == "ancestors" else ("src_csid", "dst_csid")
        seen = {csid}
        frontier = [csid]
        while frontier:
            rows = self._deps.filter(pc.is_in(self._deps.column(here), value_set=pa.array(frontier, pa.int64())))
            frontier = [s for s in set(rows.column(there).to_pylist()) if s not in seen]
            seen.update(frontier)
        return seen

    def triples_of(self, sets: set[int]) -> Any:
        """The triples whose derived item is in one of ``sets``: one bucket per set, its row groups only."""
        import pyarrow as pa
        import pyarrow.compute as pc

        by_bucket: dict[int, list[int]] = {}
        for s in sets:
            by_bucket.setdefault(layout.set_bucket(s, self.buckets), []).append(s)
        parts = []
        columns = ["src", "dst", "op", "dst_csid"]
        for bucket, wanted in by_bucket.items():
            for part in self._bucket_files(layout.TRIPLES, bucket, "dst_csid"):
                groups = part.groups_holding(wanted)
                if groups:
                    table = part.file.read_row_groups(groups, columns=columns)
                    parts.append(table.filter(pc.is_in(table.column("dst_csid"),
                                                       value_set=pa.array(wanted, pa.int64()))))
        if not parts:
            return pa.table({c: pa.array([], pa.string()) for c in columns[:3]})
        return pa.concat_tables(parts).select(columns[:3])

    # ------------------------------------------------------------------ files
    def _bucket_files(self, table: str, bucket: int, key_column: str) -> list[_SortedFile]:
        key = (table, bucket)
        with self._lock:
            if key not in self._files:
                folder = self.store.join(self.folder, layout.bucket_folder(table, bucket))
                self._files[key] = [_SortedFile(self._parquet(self.store.join(folder, name)), key_column)
                                    for name, _ in sorted(self.store.list_files(folder)) if name.endswith(".parquet")]
            return self._files[key]

    def _parquet(self, path: str) -> Any:
        import pyarrow.parquet as pq

        source = path if self.store.is_local else self.store.fs.open_input_file(path)
        return pq.ParquetFile(source)

    def _read_table(self, table: str, columns: list[str]) -> Any:
        import pyarrow as pa

        folder = self.store.join(self.folder, table)
        parts = [self._parquet(self.store.join(folder, name)).read(columns=columns)
                 for name, _ in sorted(self.store.list_files(folder)) if name.endswith(".parquet")]
        return pa.concat_tables(parts) if parts else pa.table({c: pa.array([], pa.int64()) for c in columns})


def recursive_query(triples: Any, item: str, direction: str) -> tuple[list[str], list[tuple[str, str, str]]]:
    """Recursive querying over an Arrow table of triples held in memory: the items reached from
    ``item`` against (ancestors) or along (descendants) the edges, and the edges crossed."""
    src = triples.column("src").to_pylist()
    dst = triples.column("dst").to_pylist()
    op = triples.column("op").to_pylist()
    step: dict[str, list[int]] = {}
    for i, key in enumerate(dst if direction == "ancestors" else src):
        step.setdefault(key, []).append(i)
    far = src if direction == "ancestors" else dst
    reached: set[str] = set()
    edges: list[tuple[str, str, str]] = []
    frontier = [item]
    while frontier:
        nxt = []
        for node in frontier:
            for i in step.get(node, ()):
                edges.append((src[i], dst[i], op[i] or ""))
                if far[i] not in reached and far[i] != item:
                    reached.add(far[i])
                    nxt.append(far[i])
        frontier = nxt
    return sorted(reached), sorted(set(edges))


class _SortedFile:
    """A Parquet file sorted by ``column``, with each row group's range of it (from the footer)."""

    def __init__(self, file: Any, column: str) -> None:
        self.file = file
        meta = file.metadata
        index = file.schema_arrow.get_field_index(column)
        self.mins: list[Any] = []
        self.maxs: list[Any] = []
        self.unknown: list[int] = []  # row groups without statistics: always read
        for g in range(meta.num_row_groups):
            stats = meta.row_group(g).column(index).statistics
            if stats is None or not stats.has_min_max:
                self.unknown.append(g)
                self.mins.append(None)
                self.maxs.append(None)
            else:
                self.mins.append(stats.min)
                self.maxs.append(stats.max)
        self._known = [g for g in range(meta.num_row_groups) if g not in set(self.unknown)]
        self._known_maxs = [self.maxs[g] for g in self._known]

    def groups_holding(self, values: list[Any]) -> list[int]:
        """The row groups whose range holds any of ``values`` (ranges are in order: a bisection each)."""
        found = set(self.unknown)
        for value in values:
            i = bisect.bisect_left(self._known_maxs, value)
            while i < len(self._known) and self.mins[self._known[i]] <= value:
                found.add(self._known[i])
                i += 1
        return sorted(found)


def _lap(answer: LineageAnswer, name: str, started: float) -> float:
    now = time.monotonic()
    answer.timings[name] = round((now - started) * 1000, 3)
    return now
