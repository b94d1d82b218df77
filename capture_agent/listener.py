"""Attaching the coarse-lineage Spark listener: the JVM one, or a pure-Python fallback.

The JVM listener (capture_agent/java) is loaded through a URLClassLoader created over py4j, so
it attaches to an already running SparkContext without ``spark.jars``. It keeps task events in
the JVM and queues every other event as JSON; Python drains the queue in one py4j call.
"""

from __future__ import annotations

import collections
import logging
from pathlib import Path
from typing import Any, Protocol

from capture_agent.config import Settings

log = logging.getLogger("capture_agent")

LISTENER_CLASS = "lineage.agent.LineageListener"
_MAX_QUEUED_CHARS = 64 * 1024 * 1024


class AttachedListener(Protocol):
    kind: str

    def drain(self, max_events: int) -> list[str]: ...

    def detach(self) -> None: ...


_JARS_CHECKED: set[Path] = set()


def ensure_jar(settings: Settings) -> Path | None:
    """The listener jar of ``settings``, the agent's own one built first if it is missing or older
    than its Java sources: once a process. A jar rebuilt while a job runs (a source edited in a
    checkout) would have the job load its classes a second time, and the two could not mix."""
    # Imported here so that `python -m capture_agent.build_jar` runs a fresh module.
    from capture_agent.build_jar import (
        DEFAULT_JAR,
        JarBuildError,
        build_jar,
        find_javac,
        jar_is_stale,
    )

    jar = Path(settings.jar)
    resolved = jar.resolve()
    own_jar = resolved == DEFAULT_JAR.resolve()
    if own_jar and resolved not in _JARS_CHECKED and jar_is_stale(jar) and find_javac() is not None:
        try:
            build_jar(jar)
        except (JarBuildError, OSError) as exc:
            log.warning("lineage: cannot build the listener jar: %s", exc)
    if jar.exists():
        _JARS_CHECKED.add(resolved)
        return jar
    return None


def jvm_class(sc: Any, jar: Path, name: str = LISTENER_CLASS) -> Any:
    """Loads a class of the agent's jar, through one class loader per JVM and jar (a second
    loader of the same jar would be a leak, and its classes would not mix with the first's: the
    jar rebuilt while the JVM runs is not loaded again)."""
    gateway = sc._gateway
    cache: dict[str, Any] = gateway.__dict__.setdefault("_lineage_listener_classes", {})
    key = str(jar.resolve())
    if key not in cache:
        jvm = sc._jvm
        urls = gateway.new_array(jvm.java.net.URL, 1)
        urls[0] = jvm.java.io.File(str(jar)).toURI().toURL()
        parent = sc._jsc.sc().getClass().getClassLoader()
        cache[key] = jvm.java.net.URLClassLoader(urls, parent)
    return cache[key].loadClass(name)


class JvmListener:
    """The compiled listener, registered on the SparkContext's listener bus."""

    kind = "jvm"

    def __init__(self, sc: Any, jar: Path, max_queue: int) -> None:
        gateway = sc._gateway
        cls = jvm_class(sc, jar)
        no_types = gateway.new_array(gateway.jvm.java.lang.Class, 0)
        no_args = gateway.new_array(gateway.jvm.java.lang.Object, 0)
        self._listener = cls.getDeclaredConstructor(no_types).newInstance(no_args)
        self._listener.setLimits(max_queue, _MAX_QUEUED_CHARS)
        self._spark_context = sc._jsc.sc()
        self._spark_context.addSparkListener(self._listener)

    def drain(self, max_events: int) -> list[str]:
        text = self._listener.drain(max_events)
        return text.split("\n") if text else []

    def detach(self) -> None:
        self._spark_context.removeSparkListener(self._listener)


_IGNORED = (
    "onTaskStart onTaskGettingResult onTaskEnd onEnvironmentUpdate onBlockManagerAdded "
    "onBlockManagerRemoved onUnpersistRDD onApplicationStart onExecutorMetricsUpdate "
    "onStageExecutorMetrics onExecutorAdded onExecutorRemoved onExecutorBlacklisted "
    "onExecutorExcluded onExecutorBlacklistedForStage onExecutorExcludedForStage "
    "onNodeBlacklistedForStage onNodeExcludedForStage onExecutorUnblacklisted "
    "onExecutorUnexcluded onNodeBlacklisted onNodeExcluded onNodeUnblacklisted onNodeUnexcluded "
    "onUnschedulableTaskSetAdded onUnschedulableTaskSetRemoved onBlockUpdated "
    "onSpeculativeTaskSubmitted onOtherEvent onResourceProfileAdded"
).split()
_FORWARDED = ("onJobStart", "onJobEnd", "onStageSubmitted", "onStageCompleted", "onApplicationEnd")


class _PyListener:
    """py4j implementation of SparkListenerInterface; every method must exist."""

    def __init__(self, json_protocol: Any, max_queue: int) -> None:
        self._json_protocol = json_protocol
        self.queue: collections.deque[str] = collections.deque()
        self.max_queue = max_queue
        self.dropped = 0

    def _forward(self, event: Any) -> None:
        try:
            if len(self.queue) >= self.max_queue:
                self.dropped += 1
                return
            self.queue.append(self._json_protocol.sparkEventToJsonString(event))
        except Exception:  # noqa: BLE001 - never raise back into Spark's listener bus
            self.dropped += 1

    def _ignore(self, *args: Any) -> None:
        return None

    class Java:
        implements = ["org.apache.spark.scheduler.SparkListenerInterface"]


for _name in _FORWARDED:
    setattr(_PyListener, _name, _PyListener._forward)
for _name in _IGNORED:
    setattr(_PyListener, _name, _PyListener._ignore)


class PythonListener:
    """Fallback when the jar is unavailable: task events still cross py4j (slower) and SQL
    datasets are not captured."""

    kind = "python"

    def __init__(self, sc: Any, max_queue: int) -> None:
        from pyspark.java_gateway import ensure_callback_server_started

        ensure_callback_server_started(sc._gateway)
        self._impl = _PyListener(sc._jvm.org.apache.spark.util.JsonProtocol, max_queue)
        self._spark_context = sc._jsc.sc()
        self._spark_context.addSparkListener(self._impl)
        self._reported = 0

    def drain(self, max_events: int) -> list[str]:
        lines: list[str] = []
        if self._impl.dropped != self._reported:
            lines.append(f'{{"Event":"lineage.Dropped","Count":{self._impl.dropped - self._reported}}}')
            self._reported = self._impl.dropped
        while self._impl.queue and len(lines) < max_events:
            lines.append(self._impl.queue.popleft())
        return lines

    def detach(self) -> None:
        self._spark_context.removeSparkListener(self._impl)


def attach_listener(sc: Any, settings: Settings) -> AttachedListener:
    """Registers the JVM listener, or the Python fallback (with a warning) when no jar exists."""
    jar = ensure_jar(settings)
    if jar is not None:
        try:
            return JvmListener(sc, jar, settings.max_queue)
        except Exception as exc:  # noqa: BLE001
            log.warning("lineage: cannot load %s (%s); using the slower Python listener", jar, exc)
    else:
        log.warning("lineage: listener jar %s missing and javac unavailable; using the slower "
                    "Python listener (run python -m capture_agent.build_jar)", settings.jar)
    return PythonListener(sc, settings.max_queue)
