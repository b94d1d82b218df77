"""The pieces of a compiled job: heads (capture points that start a stage), the narrow chains fused
after them (pipelines, one branch per head side by side under a union), and the tails that end a
fused stage (``codegen.py`` turns a branch and a tail into one Python function)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pyspark.core.rdd import RDD

from capture_agent.record.capture.plan import NarrowOp
from capture_agent.record.storage.manifest import CapturePoint
from capture_agent.record.storage.tables import TableTarget
from capture_agent.record.worker.shuffle import ShuffleSpec


@dataclass
class Head:
    """A compiled head: its RDD, how to read (position, value) from it, its capture point."""

    rdd: RDD
    reader: str  # "offset": (byte offset, line) pairs; "pairs": (position, value) pairs
    point: CapturePoint
    bases: list[int] | None = None
    encode: bool = False  # textFile(use_unicode=False)
    input_target: TableTarget | None = None  # "offset" reader: where the stage keeps each line's byte offset
    wide_offsets: bool = False  # "offset" reader: a split of 4 GiB or more (offsets kept in 8 bytes)
    eager: bool = True  # its table is complete before its first record is yielded (or it has none)
    dense: bool = True  # positions are 0, 1, 2... in the order records are yielded


@dataclass
class Branch:
    head: Head
    ops: list[NarrowOp]
    offset: int  # first partition of this branch in the pipeline's partition space


@dataclass
class Pipeline:
    """Records of a narrow chain, with positions relative to ``point`` (a head or a union)."""

    point: CapturePoint
    branches: list[Branch]
    num_partitions: int

    @property
    def eager(self) -> bool:
        return all(b.head.eager for b in self.branches)


@dataclass
class Tail:
    """How a stage function ends (see ``codegen.tail_code``); ``target``: where its table goes."""

    kind: str
    target: TableTarget | None = None
    limit: int = -1
    drain: bool = True
    side: int = 0
    create: Callable[[Any], Any] | None = None
    merge: Callable[[Any, Any], Any] | None = None
    dense: bool = False  # position == record index: no position array needed
    memory_mb: float = float("inf")  # combine and group: spill past this much worker memory (worker.spill)
    merge_combiners: Callable[[Any, Any], Any] | None = None  # combine: merges spilled runs
    shuffle: ShuffleSpec | None = None  # combine: writes the shuffle's blocks (worker.shuffle)

