"""The running agent: one per SparkContext, a drain thread, and a sink."""

from __future__ import annotations

import atexit
import logging
import os
import re
import threading
import time
from typing import Any

from capture_agent import python_ops
from capture_agent.config import Settings, load_settings
from capture_agent.events import EventConverter
from capture_agent.listener import AttachedListener, attach_listener
from capture_agent.paths import DatasetSizer, make_qualifier
from capture_agent.protocol import Event
from capture_agent.sinks import NoopSink, Sink, make_sink

log = logging.getLogger("capture_agent")

_SECRET = re.compile(r"(?i)secret|password|passwd|token|credential|access.?key|private.?key|"
                     r"auth|signature|session.?key")
_DRAIN_BATCH = 2000


def _spark_context(spark_or_sc: Any) -> Any:
    sc = getattr(spark_or_sc, "sparkContext", spark_or_sc)
    if getattr(sc, "_jsc", None) is None:
        raise TypeError("enable() needs an active classic SparkSession or SparkContext")
    return sc


class Agent:
    """Captures one SparkContext's coarse lineage into a sink; ``enabled`` is False for a
    disabled (no-op) agent."""

    def __init__(self, settings: Settings, sink: Sink | None = None, sc: Any = None) -> None:
        self.settings = settings
        self.sink: Sink = sink or NoopSink()
        self.sc = sc
        self.enabled = sc is not None and settings.active
        self.listener_kind = ""
        self.app_id = ""
        self._listener: AttachedListener | None = None
        self._converter: EventConverter | None = None
        self._sizer: DatasetSizer | None = None
        self._recorder = python_ops.OperatorRecorder()
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._closed = not self.enabled
        self._stopped = threading.Event()
        if self._closed:
            self._stopped.set()
        self.events_emitted = 0

    @property
    def running(self) -> bool:
        return not self._closed

    def start(self) -> Agent:
        sc = self.sc
        self.app_id = str(sc.applicationId)
        jvm_sc = sc._jsc.sc()
        hadoop_conf = sc._jsc.hadoopConfiguration()
        default_fs = str(hadoop_conf.get("fs.defaultFS") or "file:///")
        self._converter = EventConverter(self.app_id, make_qualifier(default_fs, os.getcwd()))
        if self.settings.dataset_sizes:
            self._sizer = DatasetSizer(sc._jvm, hadoop_conf)
        self._listener = attach_listener(sc, self.settings)
        self.listener_kind = self._listener.kind
        python_ops.install(self._recorder, operators=self.settings.python_operators)
        attempt = jvm_sc.applicationAttemptId()
        conf = {k: v for k, v in sc.getConf().getAll() if not _SECRET.search(k)}
        self._emit([self._converter.application_start(
            name=str(sc.appName), user=str(sc.sparkUser()), spark_version=str(sc.version),
            master=str(sc.master), start_time=int(sc.startTime),
            attempt_id=str(attempt.get()) if attempt.isDefined() else None, spark_conf=conf)])
        self._thread = threading.Thread(target=self._run, name="lineage-drain", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.settings.flush_interval):
            try:
                self._pump()
            except Exception as exc:
                if _jvm_gone(exc):
                    return
                log.warning("lineage: drain failed: %s", exc, exc_info=True)
            converter = self._converter
            if converter is not None and converter.application_ended:
                # sc.stop(): the listener bus has delivered everything it ever will.
                self.stop()
                return

    def _pump(self) -> None:
        with self._lock:
            if self._listener is None or self._converter is None:
                return
            events: list[Event] = []
            for rdd_id, operators, when in self._recorder.drain():
                events.append(self._converter.python_operators(rdd_id, operators, when))
            while True:
                lines = self._listener.drain(_DRAIN_BATCH)
                events.extend(self._converter.convert_lines(lines))
                if len(lines) < _DRAIN_BATCH:
                    break
            if self._sizer is not None:
                self._sizer.fill(events)
            self._emit(events)

    def _emit(self, events: list[Event]) -> None:
        if events:
            self.events_emitted += len(events)
            try:
                self.sink.emit(events)
            except Exception:
                log.warning("lineage: sink %s failed", type(self.sink).__name__, exc_info=True)

    def emit(self, events: list[Event]) -> None:
        """Sends v1 events built elsewhere (e.g. record-level ``capture_point`` events) through
        this agent's sink; a disabled or stopped agent drops them."""
        if not self._closed:
            self._emit(list(events))

    def flush(self, timeout: float | None = None) -> None:
        """Drains what Spark has reported so far and waits (bounded) for the sink."""
        if self._closed:
            return
        try:
            # Listener-bus delivery is asynchronous: wait (bounded) until Spark has handed over
            # every event of the actions that already returned.
            self.sc._jsc.sc().listenerBus().waitUntilEmpty(int(self.settings.close_timeout * 1000))
        except Exception as exc:  # noqa: BLE001
            log.debug("lineage: listener bus did not empty: %s", exc)
        try:
            self._pump()
        except Exception as exc:  # noqa: BLE001
            log.debug("lineage: flush drain failed: %s", exc)
        self.sink.flush(self.settings.close_timeout if timeout is None else timeout)

    def stop(self, at_exit: bool = False) -> None:
        """Detaches from Spark, delivers what is left within ``close_timeout``, spools the rest."""
        with self._lock:
            already = self._closed
            self._closed = True
        if already:
            # Another thread is closing (e.g. after sc.stop()); at exit, let it finish.
            if self._thread is not threading.current_thread():
                self._stopped.wait(self.settings.close_timeout + 1.0)
            return
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(self.settings.close_timeout)
        python_ops.uninstall()
        listener, self._listener = self._listener, None
        try:
            if listener is not None:
                # Stop first, then drain once more: nothing can arrive after the last drain.
                listener.detach()
                self._listener = listener
                self._pump()
        except Exception as exc:  # noqa: BLE001
            log.debug("lineage: final drain failed: %s", exc)
        finally:
            self._listener = None
        converter = self._converter
        if at_exit and converter is not None and not converter.application_ended:
            # The driver JVM dies with this Python process, so the application ends now.
            self._emit([converter.application_end(int(time.time() * 1000))])
        try:
            self.sink.close(self.settings.close_timeout)
        except Exception:
            log.warning("lineage: closing the sink failed", exc_info=True)
        finally:
            self._stopped.set()


def _jvm_gone(exc: BaseException) -> bool:
    return type(exc).__name__ in ("Py4JNetworkError", "Py4JError") and "connect" in str(exc).lower()


_current: Agent | None = None
_current_lock = threading.Lock()


def enable(spark_or_sc: Any, **overrides: Any) -> Agent:
    """Starts capturing lineage of a SparkSession/SparkContext (idempotent per SparkContext).

    Args:
        spark_or_sc: the SparkSession or SparkContext to watch.
        **overrides: settings by name (see capture_agent.config); ``sink`` may also be a Sink.

    Returns:
        The running agent, or a disabled one when the settings say ``disabled`` (or ``enabled``
        false).

    Raises:
        ConfigError: a setting has a bad value.
    """
    global _current
    sink_override = overrides.pop("sink", None)
    if isinstance(sink_override, Sink):
        settings = load_settings(overrides)
    else:
        if sink_override is not None:
            overrides["sink"] = sink_override
        settings = load_settings(overrides)
        sink_override = None
    if not settings.active:
        return Agent(settings)
    try:
        sc = _spark_context(spark_or_sc)
    except Exception as exc:  # noqa: BLE001 - e.g. a Spark Connect session has no SparkContext
        log.error("lineage: cannot capture %r: %s; the job runs without lineage", spark_or_sc, exc)
        return Agent(settings)
    with _current_lock:
        if _current is not None and _current.running:
            if _current.sc is sc:
                return _current
            _current.stop()
        agent = Agent(settings, sink_override or make_sink(settings), sc)
        try:
            agent.start()
        except Exception as exc:
            log.warning("lineage: cannot start the capture agent: %s", exc, exc_info=True)
            agent.stop()
            return Agent(settings)
        _current = agent
        return agent


def disable() -> None:
    """Stops the running agent, if any, delivering or spooling what it holds."""
    global _current
    with _current_lock:
        agent, _current = _current, None
    if agent is not None:
        agent.stop()


def current_agent() -> Agent | None:
    return _current


def _stop_at_exit() -> None:
    agent = _current
    if agent is not None:
        agent.stop(at_exit=True)


atexit.register(_stop_at_exit)
