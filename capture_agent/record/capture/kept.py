"""The job kept in its run's folder, so that a what-if asked elsewhere (the server's worker) can
replay it (``query.stored_job``).

After each action, the recipes (``recipes.Recipe``) of the nodes its output is computed from and
the action's ``recipes.Redo`` are written to ``<run>/job/job.json``. Arguments that are small JSON
values stay there; module-level functions of PySpark, of this package and of the standard
library's operator, builtins and math modules are kept by name; every
other function or value (a lambda, a zero value, a parallelized collection) is cloudpickled once,
as PySpark pickles it to ship it to executors, to ``<run>/job/<sha256>.pkl``. Kept functions are
the job's code: a replay loads them only inside Spark tasks (``worker.stored``).

Bounded by ``LINEAGE_KEEP_FUNCTIONS_MB`` (``keep_functions_mb``, default 64; 0 keeps nothing). An
output whose functions do not fit, cannot be pickled, or reads an input that cannot be rebuilt is
listed under ``not_kept`` with the reason, which a replay of it reports.

| job.json key | holds |
|---|---|
| ``version`` | 1 |
| ``nodes`` | {seq: {"op", "partitions", "input", "combiner", "reducer", "recipe": {...}}} (below) |
| ``outputs`` | {output capture id: {"node": seq, "redo": {"method", "args", "shape", "side_effects"}}} |
| ``frames`` | {output capture id: {"plan": digest, "columns": {source capture id: hidden column}, "names": [...]}} |
| ``not_kept`` | {output capture id: why it cannot be replayed from the folder} |
| ``functions`` | {digest: size in bytes} of the pickled files and kept plans |

A source names its capture point (``input``), a combine its map side's (``combiner``, whose kept
aggregates a what-if reads in place of the input: ``query.selective``) and its reduce side's
(``reducer``, whose kept outputs a what-if reads in place of merging those: ``query.delta``), and a
groupByKey its reduce side's (``reducer``, whose kept groups a what-if patches: ``query.regroup``).
A recipe is ``{"on", "method", "args", "kwargs", "attr"}``, ``on`` being ``{"ref": seq}``,
``"sc"`` or ``"read"``. An argument is ``{"value": JSON}``, ``{"ref": seq}`` (another node's
plain RDD), ``{"name": "module:qualname"}`` or ``{"pickled": digest}``. A parallelized
collection's recipe is ``sc.slices(<pickled worker.functions.Slices>, n)``.

A captured DataFrame's output keeps its analyzed plan instead (``frames``), in
``<run>/job/<sha256>.plan`` (``capture.frame_jvm.saved_plan``), with the hidden column where each
file source makes its ids and the output's column names; a plan that reads what cannot be made
again in another process (an RDD turned into a DataFrame) is listed under ``not_kept``.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from capture_agent.record.capture.frame_jvm import not_kept_reason
from capture_agent.record.capture.plan import CombineNode, GroupNode, Node
from capture_agent.record.query.recipes import SC, Given, Recipe, Redo, Ref
from capture_agent.record.query.stored_job import FOLDER, JOB_FILE, NAMED_MODULES, NAMED_PACKAGES, VERSION
from capture_agent.record.storage.manifest import LineageStore
from capture_agent.record.worker.functions import Slices

log = logging.getLogger("capture_agent")

MAX_INLINE = 64 * 1024  # bytes of JSON kept inline; a bigger value is pickled


class NotKeepable(Exception):
    """A recipe holds something that cannot be kept (the reason is the message)."""


def _is_json(value: Any) -> bool:
    if value is None or isinstance(value, (bool, int, str)):
        return True
    if isinstance(value, float):
        return value == value and value not in (float("inf"), float("-inf"))
    if type(value) is list:
        return all(_is_json(v) for v in value)
    if type(value) is dict:
        return all(isinstance(k, str) and _is_json(v) for k, v in value.items())
    return False


def name_of(obj: Any) -> str | None:
    """``module:qualname`` of a module-level function of PySpark, this package or the standard
    library's operator, builtins and math modules, else None."""
    module = getattr(obj, "__module__", None) or ""
    qualname = getattr(obj, "__qualname__", None) or ""
    named = module.startswith(NAMED_PACKAGES) or module in NAMED_MODULES
    if not callable(obj) or not named or "<" in qualname or "." in qualname:
        return None
    try:
        found = getattr(importlib.import_module(module), qualname)
    except (ImportError, AttributeError):
        return None
    return f"{module}:{qualname}" if found is obj else None


class KeptJob:
    """Writes the job of one LineageContext to its run's folder as actions run."""

    def __init__(self, store: LineageStore, sc: Any, max_mb: int) -> None:
        self.store = store
        self.sc = sc
        self.max_bytes = max_mb * 1024 * 1024
        self.nodes: dict[str, dict[str, Any]] = {}
        self.outputs: dict[str, dict[str, Any]] = {}
        self.not_kept: dict[str, str] = {}
        self.frames: dict[str, dict[str, Any]] = {}
        self.functions: dict[str, int] = {}  # written, digest -> bytes
        self._digests: dict[int, tuple[Any, str]] = {}  # id(obj) -> (obj, digest): pickled once
        self._thread: ThreadPoolExecutor | None = None
        self._folder = store.fs.join(store.run_dir, FOLDER)

    @property
    def kept_bytes(self) -> int:
        return sum(self.functions.values())

    def keep(self, capture_id: str, node: Node, redo: Redo, input_of: Any) -> None:
        """Keeps what replays ``capture_id`` (the output of ``redo`` on ``node``); ``input_of(node)``
        is the input capture id of a source node. Never raises: a failure is logged and noted."""
        if self.max_bytes <= 0:
            return
        try:
            self._keep(capture_id, node, redo, input_of)
        except NotKeepable as exc:
            self.not_kept[capture_id] = str(exc)
            self.outputs.pop(capture_id, None)
            self._save()
        except Exception as exc:  # noqa: BLE001 - never the job's failure: the output is just not replayable
            log.warning("lineage: cannot keep the job's functions for %s: %s: %s", capture_id, type(exc).__name__,
                        exc)

    def ahead(self, make: Callable[[], bytes]) -> Callable[[], bytes]:
        """``make`` begun now on the kept job's own thread, so that a DataFrame's plan is saved
        while its action runs (a save takes about 50 ms, a task's time on a core that an action's
        last tasks leave idle); the callable returned waits for the bytes, or raises what ``make``
        raised. Nothing is begun when nothing is kept."""
        if self.max_bytes <= 0:
            return make
        if self._thread is None:
            self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lineage-kept")
        return self._thread.submit(make).result

    def keep_frame(self, capture_id: str, plan: Callable[[], bytes], columns: dict[str, str],
                   names: list[str]) -> None:
        """Keeps what replays the DataFrame output ``capture_id``: ``plan()``'s bytes, the hidden
        ``columns`` of its sources, its column ``names``. Never raises."""
        if self.max_bytes <= 0:
            return
        try:
            try:
                data = plan()
            except Exception as exc:  # noqa: BLE001 - py4j's error: the plan reads what cannot be kept
                raise NotKeepable(not_kept_reason(exc)) from None
            digest = hashlib.sha256(data).hexdigest()
            self._write({digest: data}, "plan")
            self.frames[capture_id] = {"plan": digest, "columns": columns, "names": names}
            self.not_kept.pop(capture_id, None)
        except NotKeepable as exc:
            self.not_kept[capture_id] = str(exc)
            self.frames.pop(capture_id, None)
        except Exception as exc:  # noqa: BLE001 - never the job's failure: the output is just not replayable
            log.warning("lineage: cannot keep the query plan of %s: %s: %s", capture_id, type(exc).__name__, exc)
            return
        self._save()

    def _keep(self, capture_id: str, node: Node, redo: Redo, input_of: Any) -> None:
        pending: dict[str, bytes] = {}
        nodes: dict[str, dict[str, Any]] = {}
        todo = [node]
        while todo:
            current = todo.pop()
            key = str(current.seq)
            if key in nodes or key in self.nodes:
                continue
            nodes[key] = self._node(current, pending, input_of)
            todo.extend(current.recipe.refs())
        encoded_redo = {"method": redo.method, "args": [self._arg(a, pending) for a in redo.args],
                        "shape": redo.shape, "side_effects": redo.side_effects}
        self._write(pending, "pkl")
        self.nodes.update(nodes)
        self.outputs[capture_id] = {"node": node.seq, "redo": encoded_redo}
        self.not_kept.pop(capture_id, None)
        self._save()

    def _write(self, pending: dict[str, bytes], suffix: str) -> None:
        """Writes ``pending`` ({digest: bytes}) not written yet as ``<digest>.<suffix>``, unless
        they would take the kept files over the bound (NotKeepable)."""
        new = {d: b for d, b in pending.items() if d not in self.functions}
        size = self.kept_bytes + sum(len(b) for b in new.values())
        if size > self.max_bytes:
            raise NotKeepable(f"the job's functions, values and plans need {size / 2**20:.1f} MB, over "
                              f"LINEAGE_KEEP_FUNCTIONS_MB={self.max_bytes // 2**20}")
        self.store.fs.make_dirs(self._folder)
        for digest, data in new.items():
            self.store.fs.write_bytes(self.store.fs.join(self._folder, f"{digest}.{suffix}"), data)
            self.functions[digest] = len(data)

    def _node(self, node: Node, pending: dict[str, bytes], input_of: Any) -> dict[str, Any]:
        recipe: Recipe = node.recipe
        if isinstance(recipe, Given):
            raise NotKeepable(f"the job reads {recipe.what}, which is not kept")
        entry: dict[str, Any] = {"op": node.op, "partitions": node.num_partitions}
        if node.kind == "source":
            entry["input"] = input_of(node)
        if isinstance(node, CombineNode) and node.combiner_point:
            entry["combiner"] = node.combiner_point
            entry["reducer"] = node.reducer_point
        if isinstance(node, GroupNode) and node.reducer_point:
            entry["reducer"] = node.reducer_point
        if recipe.on == SC and recipe.method == "parallelize":
            data, slices = recipe.args
            sliced = Slices(data, slices, getattr(self.sc, "_batchSize", 0) or 0)
            entry["recipe"] = {"on": SC, "method": "slices", "args": [self._pickled(sliced, pending), slices],
                               "kwargs": {}, "attr": None}
            return entry
        on = {"ref": recipe.on.node.seq} if isinstance(recipe.on, Ref) else recipe.on
        entry["recipe"] = {"on": on, "method": recipe.method, "args": [self._arg(a, pending) for a in recipe.args],
                           "kwargs": {k: self._arg(v, pending) for k, v in recipe.kwargs.items()},
                           "attr": recipe.attr}
        return entry

    def _arg(self, value: Any, pending: dict[str, bytes]) -> dict[str, Any]:
        if isinstance(value, Ref):
            return {"ref": value.node.seq}
        name = name_of(value)
        if name is not None:
            return {"name": name}
        if _is_json(value) and len(json.dumps(value)) <= MAX_INLINE:
            return {"value": value}
        return self._pickled(value, pending)

    def _pickled(self, value: Any, pending: dict[str, bytes]) -> dict[str, Any]:
        seen = self._digests.get(id(value))
        if seen is not None and seen[0] is value and seen[1] in self.functions:
            return {"pickled": seen[1]}
        from pyspark import cloudpickle

        try:
            data = bytes(cloudpickle.dumps(value, protocol=5))
        except Exception as exc:  # noqa: BLE001 - whatever pickling raises, the job goes on
            raise NotKeepable(f"{type(value).__name__} {value!r:.80} cannot be pickled ({type(exc).__name__}: "
                              f"{exc})") from None
        digest = hashlib.sha256(data).hexdigest()
        self._digests[id(value)] = (value, digest)
        pending[digest] = data
        return {"pickled": digest}

    def document(self) -> dict[str, Any]:
        """What ``job.json`` holds (as ``query.stored_job.StoredJob`` reads it)."""
        return {"version": VERSION, "nodes": self.nodes, "outputs": self.outputs, "frames": self.frames,
                "not_kept": self.not_kept, "functions": self.functions}

    def _save(self) -> None:
        self.store.fs.make_dirs(self._folder)
        self.store.fs.write_bytes(self.store.fs.join(self._folder, JOB_FILE), json.dumps(self.document()).encode())
