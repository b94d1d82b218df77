"""Python-side operator detail: which map/filter/flatMap... PySpark fused into each PythonRDD,
and which path an RDD save writes.

PySpark pipelines consecutive Python transformations into one ``PipelinedRDD`` and creates a
single JVM ``PythonRDD`` for the chain, so the JVM only ever sees "PythonRDD". A small wrapper
around ``PipelinedRDD.__init__`` remembers the public method (and the user's call site) behind
each step; the ``_jrdd`` property wrapper records the chain under the JVM rdd id once it exists.
RDD save methods are wrapped to name their output in a Spark local property, which the job-start
event then carries. Every wrapper swallows its own errors: the job must not notice it.
"""

from __future__ import annotations

import collections
import functools
import os
import sys
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import Any, cast

import pyspark
from pyspark.core.rdd import RDD, PipelinedRDD

from capture_agent.protocol import OUTPUT_FORMAT_PROPERTY, OUTPUT_PATH_PROPERTY

_PYSPARK_DIR = os.path.dirname(os.path.abspath(pyspark.__file__)) + os.sep
_AGENT_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_PARTITION_BUILDERS = ("mapPartitions", "mapPartitionsWithIndex", "mapPartitionsWithSplit")
_ANONYMOUS = ("func", "f", "<lambda>", "wrapper", "")
_SAVE_FORMATS = {
    "saveAsTextFile": "text",
    "saveAsPickleFile": "pickle",
    "saveAsSequenceFile": "sequence",
    "saveAsHadoopFile": "hadoop",
    "saveAsNewAPIHadoopFile": "hadoop",
}

OperatorChain = tuple[tuple[str, str], ...]


class OperatorRecorder:
    """Bounded buffer of (rdd_id, operators, time) waiting for the agent's sender thread."""

    def __init__(self, max_items: int = 10000) -> None:
        self._items: collections.deque[tuple[int, OperatorChain, int]] = collections.deque(
            maxlen=max_items
        )

    def add(self, rdd_id: int, operators: OperatorChain) -> None:
        self._items.append((rdd_id, operators, int(time.time() * 1000)))

    def drain(self) -> list[tuple[int, OperatorChain, int]]:
        items = []
        while self._items:
            try:
                items.append(self._items.popleft())
            except IndexError:
                break
        return items


def _describe_step(func: Any) -> tuple[str, str]:
    """Names the public PySpark method behind a new PipelinedRDD and the user's call site."""
    frame: FrameType | None = sys._getframe(2)
    outermost = ""
    builder_func: Any = None
    depth = 0
    while frame is not None and depth < 60:
        filename = frame.f_code.co_filename
        if filename.startswith(_PYSPARK_DIR):
            outermost = frame.f_code.co_name
            if outermost in _PARTITION_BUILDERS:
                builder_func = frame.f_locals.get("f", builder_func)
        elif not filename.startswith(_AGENT_DIR):
            break
        frame = frame.f_back
        depth += 1
    call_site = f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame is not None else ""
    name = outermost or getattr(func, "__name__", "pipeline")
    # Internal steps (reduceByKey's combineLocally, partitionBy's add_shuffle_key...) share the
    # user's method name; the builder's function name tells them apart.
    step = getattr(builder_func, "__name__", "")
    if outermost not in _PARTITION_BUILDERS and step not in _ANONYMOUS:
        name = f"{name}:{step}"
    return name, call_site


class _Installation:
    def __init__(self, recorder: OperatorRecorder) -> None:
        self.recorder = recorder
        self.originals: dict[tuple[type, str], Any] = {}


_installed: _Installation | None = None
_install_lock = threading.Lock()
_save_depth = threading.local()


def _wrap_init(original: Callable[..., None]) -> Callable[..., None]:
    @functools.wraps(original)
    def __init__(self: PipelinedRDD, prev: Any, func: Any, *args: Any, **kwargs: Any) -> None:
        original(self, prev, func, *args, **kwargs)
        try:
            step = _describe_step(func)
            fused = isinstance(prev, PipelinedRDD) and self._prev_jrdd is prev._prev_jrdd
            before: OperatorChain = getattr(prev, "_lineage_ops", ()) if fused else ()
            self._lineage_ops = before + (step,)  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001 - lineage detail is optional, the job is not
            pass

    return __init__


def _wrap_jrdd(original: property) -> property:
    getter = original.fget
    assert getter is not None

    def _jrdd(self: PipelinedRDD) -> Any:
        fresh = self._jrdd_val is None
        jrdd = getter(self)
        if fresh and _installed is not None:
            try:
                operators = getattr(self, "_lineage_ops", None)
                if operators:
                    if self._id is None:
                        self._id = jrdd.id()
                    _installed.recorder.add(int(self._id), operators)
            except Exception:  # noqa: BLE001
                pass
        return jrdd

    return property(_jrdd, original.fset, original.fdel, original.__doc__)


def _wrap_save(original: Callable[..., Any], output_format: str) -> Callable[..., Any]:
    @functools.wraps(original)
    def save(self: RDD[Any], path: str, *args: Any, **kwargs: Any) -> Any:
        depth = getattr(_save_depth, "value", 0)
        if depth or _installed is None:
            return original(self, path, *args, **kwargs)
        previous: tuple[Any, Any] | None = None
        try:
            sc = self.ctx
            previous = (sc.getLocalProperty(OUTPUT_PATH_PROPERTY),
                        sc.getLocalProperty(OUTPUT_FORMAT_PROPERTY))
            sc.setLocalProperty(OUTPUT_PATH_PROPERTY, str(path))
            sc.setLocalProperty(OUTPUT_FORMAT_PROPERTY, output_format)
        except Exception:  # noqa: BLE001
            previous = None
        _save_depth.value = depth + 1
        try:
            return original(self, path, *args, **kwargs)
        finally:
            _save_depth.value = depth
            if previous is not None:
                try:
                    # None (no outer save) clears the property, which PySpark's hints do not say.
                    self.ctx.setLocalProperty(OUTPUT_PATH_PROPERTY, cast(str, previous[0]))
                    self.ctx.setLocalProperty(OUTPUT_FORMAT_PROPERTY, cast(str, previous[1]))
                except Exception:  # noqa: BLE001
                    pass

    return save


def install(recorder: OperatorRecorder, operators: bool = True) -> None:
    """Installs the wrappers (idempotent); ``operators=False`` wraps only the save methods."""
    global _installed
    with _install_lock:
        if _installed is not None:
            _installed.recorder = recorder
            return
        installation = _Installation(recorder)
        if operators:
            installation.originals[(PipelinedRDD, "__init__")] = PipelinedRDD.__dict__["__init__"]
            installation.originals[(PipelinedRDD, "_jrdd")] = PipelinedRDD.__dict__["_jrdd"]
            PipelinedRDD.__init__ = _wrap_init(PipelinedRDD.__dict__["__init__"])  # type: ignore[method-assign]
            PipelinedRDD._jrdd = _wrap_jrdd(PipelinedRDD.__dict__["_jrdd"])  # type: ignore[method-assign,assignment]
        for method, output_format in _SAVE_FORMATS.items():
            original = RDD.__dict__[method]
            installation.originals[(RDD, method)] = original
            setattr(RDD, method, _wrap_save(original, output_format))
        _installed = installation


def uninstall() -> None:
    """Restores PySpark's own methods."""
    global _installed
    with _install_lock:
        if _installed is None:
            return
        for (owner, name), original in _installed.originals.items():
            setattr(owner, name, original)
        _installed = None
