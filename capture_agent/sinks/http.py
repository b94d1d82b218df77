"""HTTP sink: a background sender that batches, retries, and spools what the server cannot take."""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from capture_agent.config import Settings
from capture_agent.protocol import Event
from capture_agent.sinks.base import Sink
from capture_agent.spool import Spool
from capture_agent.transport import Poster, chunk_events, make_poster

log = logging.getLogger("capture_agent")

_MAX_BACKOFF = 8.0
_MAX_DOWN_WINDOW = 60.0


@dataclass
class SpoolReport:
    """What one pass over the spool achieved."""

    batches_delivered: int = 0
    events_delivered: int = 0
    duplicates: int = 0
    batches_rejected: int = 0
    batches_remaining: int = 0
    busy: bool = False
    last_error: str = ""


def deliver_spool(spool: Spool, post: Poster, deadline: float | None = None) -> SpoolReport:
    """Sends spooled batches oldest first; stops at the first transient failure.

    Args:
        spool: the spool to empty.
        post: sends one batch.
        deadline: ``time.monotonic()`` value after which no new batch is started.

    Returns:
        Counts of delivered, rejected and remaining batches.
    """
    report = SpoolReport()
    with spool.delivery_lock() as mine:
        if not mine:
            report.busy = True
            report.batches_remaining = len(spool.batches())
            return report
        work: collections.deque[Path] = collections.deque(spool.batches())
        while work:
            if deadline is not None and time.monotonic() > deadline:
                break
            path = work.popleft()
            events = spool.read(path)
            if events is None:
                continue
            result = post(events)
            if result.kind == "ok":
                spool.remove(path)
                report.batches_delivered += 1
                report.events_delivered += len(events)
                report.duplicates += result.duplicates
            elif result.kind == "too_large" and len(events) > 1:
                half = len(events) // 2
                parts = [spool.write(events[:half]), spool.write(events[half:])]
                spool.remove(path)
                work.extendleft(p for p in reversed(parts) if p is not None)
            elif result.kind in ("rejected", "too_large"):
                log.error("lineage: server rejected spooled batch %s: %s %s",
                          path.name, result.status, result.detail[:500])
                spool.reject(path, f"HTTP {result.status}: {result.detail}")
                report.batches_rejected += 1
            else:
                report.last_error = f"{result.status or ''} {result.detail}".strip()
                break
        report.batches_remaining = len(spool.batches())
    return report


class HttpSink(Sink):
    """Posts batches from a background thread; never blocks or raises into the caller."""

    def __init__(self, settings: Settings, poster: Poster | None = None) -> None:
        self.settings = settings
        self.spool = Spool(settings.spool_dir, settings.spool_max_bytes)
        self._post = poster or make_poster(settings.ingest_url, settings.token, settings.timeout)
        self._pending: collections.deque[Event] = collections.deque()
        self._cond = threading.Condition()
        self._wake = threading.Event()
        self._closing = False
        self._deadline: float | None = None
        self._busy = False
        self._down_until = 0.0
        self._down_window = 1.0
        self._spooled_since_ok = True  # so that a previous run's spool goes first
        self._auth_warned = False
        self.delivered = 0
        self.spooled = 0
        self._thread = threading.Thread(target=self._run, name="lineage-http-sender", daemon=True)
        self._thread.start()

    @classmethod
    def from_settings(cls, settings: Settings) -> HttpSink:
        return cls(settings)

    def emit(self, events: Sequence[Event]) -> None:
        overflow: list[Event] = []
        with self._cond:
            self._pending.extend(events)
            while len(self._pending) > self.settings.max_queue:
                overflow.append(self._pending.popleft())
            self._cond.notify_all()
        if overflow:
            # Bounded memory: the backlog goes to disk rather than being lost.
            self._spool(overflow)

    def flush(self, timeout: float) -> None:
        end = time.monotonic() + timeout
        with self._cond:
            while (self._pending or self._busy) and time.monotonic() < end:
                self._cond.wait(min(0.05, max(0.0, end - time.monotonic())))

    def close(self, timeout: float = 10.0) -> None:
        with self._cond:
            if not self._closing:
                self._closing = True
                self._deadline = time.monotonic() + timeout
            self._cond.notify_all()
        self._wake.set()
        self._thread.join(timeout + 1.0)
        with self._cond:
            left = list(self._pending)
            self._pending.clear()
        if left:
            self._spool(left)

    def _run(self) -> None:
        try:
            while True:
                with self._cond:
                    while not self._pending and not self._closing:
                        self._cond.wait(1.0)
                    if not self._pending and self._closing:
                        return
                    batch = [self._pending.popleft()
                             for _ in range(min(len(self._pending), self.settings.batch_size))]
                    self._busy = True
                try:
                    if self._spooled_since_ok and self._server_maybe_up():
                        self._deliver_spool()
                    for chunk in chunk_events(batch, self.settings.batch_size):
                        self._send(chunk)
                finally:
                    with self._cond:
                        self._busy = False
                        self._cond.notify_all()
        except Exception:
            log.exception("lineage: HTTP sender stopped; undelivered events are spooled")
            with self._cond:
                left = list(self._pending)
                self._pending.clear()
            self._spool(left)

    def _server_maybe_up(self) -> bool:
        return time.monotonic() >= self._down_until and not self._past_deadline()

    def _past_deadline(self) -> bool:
        return self._deadline is not None and time.monotonic() >= self._deadline

    def _deliver_spool(self) -> None:
        report = deliver_spool(self.spool, self._post, self._deadline)
        if report.batches_delivered:
            log.info("lineage: delivered %d spooled batches", report.batches_delivered)
        if report.last_error:
            self._server_down(report.last_error)
        else:
            # Another process holding the spool lock delivers it; we need not try again.
            self._spooled_since_ok = report.batches_remaining > 0 and not report.busy

    def _send(self, events: list[Event]) -> None:
        attempt = 0
        while True:
            if not self._server_maybe_up():
                self._spool(events)
                return
            result = self._post(events)
            if result.kind == "ok":
                self.delivered += len(events)
                self._down_window = 1.0
                return
            if result.kind == "too_large" and len(events) > 1:
                half = len(events) // 2
                self._send(events[:half])
                self._send(events[half:])
                return
            if result.kind in ("rejected", "too_large"):
                log.error("lineage: server rejected a batch of %d events (HTTP %s): %s",
                          len(events), result.status, result.detail[:500])
                self.spool.reject_events(events, f"HTTP {result.status}: {result.detail}")
                return
            if result.kind == "auth":
                if not self._auth_warned:
                    log.error("lineage: server refused the agent token (HTTP 401); "
                              "batches are spooled, check LINEAGE_TOKEN")
                    self._auth_warned = True
                self._server_down("HTTP 401")
                self._spool(events)
                return
            # A server that was just failing gets no retries: it is still down until proven up.
            if attempt >= self.settings.max_retries or self._closing or self._spooled_since_ok:
                self._server_down(f"{result.status or ''} {result.detail}".strip())
                self._spool(events)
                return
            delay = result.retry_after or min(_MAX_BACKOFF, 0.5 * (2**attempt))
            attempt += 1
            self._wake.wait(delay)

    def _server_down(self, reason: str) -> None:
        if time.monotonic() >= self._down_until:
            log.warning("lineage: server %s unreachable (%s); spooling to %s",
                        self.settings.server_url, reason[:200], self.spool.directory)
        self._down_until = time.monotonic() + self._down_window
        self._down_window = min(_MAX_DOWN_WINDOW, self._down_window * 2)

    def _spool(self, events: list[Event]) -> None:
        if not events:
            return
        for chunk in chunk_events(events, self.settings.batch_size):
            if self.spool.write(chunk) is not None:
                self.spooled += len(chunk)
        self._spooled_since_ok = True

    def stats(self) -> dict[str, Any]:
        return {"delivered": self.delivered, "spooled": self.spooled, "pending": len(self._pending)}
