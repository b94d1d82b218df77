"""The guard of capture by configuration (``capture.implicit``, ``capture.implicit_rdd``): which
calls are the job's own, the implicit LineageContext of a SparkContext, and the report of what
ran plain."""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
from collections.abc import Iterator
from typing import Any

from capture_agent.record.errors import UnsupportedOperation

log = logging.getLogger("capture_agent")

CONTEXT = "_lineage_records"  # the SparkContext's attribute holding its LineageContext
_local = threading.local()


@contextlib.contextmanager
def uncaptured() -> Iterator[None]:
    """Actions of this thread inside the block run plain, not captured."""
    busy = getattr(_local, "busy", False)
    _local.busy = True
    try:
        yield
    finally:
        _local.busy = busy


def records_context(spark_or_sc: Any) -> Any:
    """The LineageContext capturing ``spark_or_sc``'s actions, or None when records are off."""
    sc = getattr(spark_or_sc, "sparkContext", spark_or_sc)
    return sc.__dict__.get(CONTEXT)


def active_context(sc: Any) -> Any:
    """The LineageContext capturing ``sc``'s actions now (None when records are off, or while the
    agent itself runs Spark on this thread)."""
    if getattr(_local, "busy", False):
        return None
    lc = sc.__dict__.get(CONTEXT)
    return lc if lc is not None and lc.enabled else None


def from_user_code() -> bool:
    """Whether the wrapped call comes from the job's code: PySpark's own calls (createDataFrame
    parallelizes its rows, toPandas collects) and the agent's (a trace or a what-if's replay runs
    queries in the job's process) run plain."""
    frame: Any = sys._getframe(1)
    wrappers = (__name__, "functools", "capture_agent.record.capture.implicit",
                "capture_agent.record.capture.implicit_rdd")
    while frame is not None and frame.f_globals.get("__name__") in wrappers:
        frame = frame.f_back
    caller = "" if frame is None else str(frame.f_globals.get("__name__", ""))
    return not caller.startswith(("pyspark.", "capture_agent.", "py4j."))


def why_plain(exc: BaseException) -> str:
    """Why an action runs plain: what the capture refused (named), or how it failed."""
    if isinstance(exc, UnsupportedOperation):
        return str(exc)
    text = str(exc).strip()
    java = getattr(exc, "java_exception", None)  # py4j's error: its Java exception's own words
    if java is not None:
        try:
            text = str(java.toString()).strip() or text
        except Exception:  # noqa: BLE001 - the gateway may be gone; py4j's text says less but stands
            pass
    return f"the capture failed: {type(exc).__name__}: {text.splitlines()[0] if text else ''}"


def report_plain(lc: Any, op: str, why: str) -> None:
    """Records that ``op`` (a DataFrame action's name, or ``RDD.join``, ``SparkContext.textFile``...)
    ran plain, and why: in the run's store, and with the server."""
    shown = op if op.startswith(("RDD.", "SparkContext.", "DataFrame.")) else f"DataFrame.{op}"
    log.warning("lineage: %s runs without record lineage: %s", shown, why)
    try:
        entry = lc.store.add_not_captured(op, why)
        lc.store.save()
    except OSError as exc:
        log.warning("lineage: cannot update the lineage store %s: %s", lc.run_dir, exc)
        return
    try:
        from capture_agent.record.capture import events

        batch = [events.not_captured_event(lc.app_id, lc.store, entry)]
        if events.deliver(lc.sc, batch):  # the coarse agent's sink spools it when the server is down
            lc.events_sent += len(batch)
    except Exception as exc:  # noqa: BLE001 - the job must run whatever the capture does
        log.warning("lineage: the not-captured output of %s was not registered: %s", shown, exc)
