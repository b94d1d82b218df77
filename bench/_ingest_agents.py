"""Simulated capture agents: each posts its applications' event batches and re-sends some, as retrying agents do."""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from _ingest_events import Event, SimulatedApplication, batches, simulated_application

from capture_agent.transport import PostResult, post_events

RETRIES = 5


class Answer(NamedTuple):
    """The server's counts for one batch; ``failed`` when an attempt failed first (it may have applied some)."""

    accepted: int
    duplicates: int
    failed: bool


@dataclass
class AgentStats:
    """What one simulated agent sent and what the server answered."""

    applications: list[SimulatedApplication] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    requests: int = 0
    events_posted: int = 0
    accepted: int = 0
    duplicates: int = 0
    resent_events: int = 0
    overlapping_resends: int = 0
    racing_batches: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    answers: Counter[int] = field(default_factory=Counter)  # status of each successful request: 200 applied, 202 left
    mismatches: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class LoadProfile:
    """How the agents behave: batch sizes and how often a batch is sent again."""

    largest_batch: int = 40
    resend: float = 0.15  # the response was lost: the whole batch is sent again after it succeeded
    overlap: float = 0.05  # the request timed out while the server still worked on it: the retry overlaps
    spool_race: float = 0.05  # a spooled batch is delivered (flush-spool) while the agent sends the next one


class SimulatedAgent:
    """One agent running applications one after another until the deadline, posting as the capture agent does."""

    path = "/api/v1/ingest/events/"

    def __init__(self, index: int, url: str, token: str, run_tag: str, profile: LoadProfile) -> None:
        self.index, self.url, self.token = index, url + self.path, token
        self.run_tag, self.profile = run_tag, profile
        self.rng = random.Random(f"{run_tag}-{index}")
        self.stats = AgentStats()
        self._lock = threading.Lock()

    def run(self, deadline: float, shared_inputs: list[str]) -> AgentStats:
        """Start applications until ``deadline``; the one running then is finished, so every application is whole."""
        n = 0
        while time.monotonic() < deadline:
            apps, events = self.workflow(n, shared_inputs)
            self.stats.applications.extend(apps)
            pending = batches(events, self.rng, self.profile.largest_batch)
            while pending:
                batch = pending.pop(0)
                # The batch holding application_end never races an earlier one: a job_end applied
                # after the worker finalized the application would leave the job failed (known issue).
                if pending and not _ends(pending[0]) and self.rng.random() < self.profile.spool_race:
                    self._deliver_racing(batch, pending.pop(0))
                else:
                    self._deliver(batch)
            n += 1
        return self.stats

    def workflow(self, n: int, shared_inputs: list[str]) -> tuple[list[SimulatedApplication], list[Event]]:
        """The next applications this agent reports, and their events in the order it sends them."""
        app = simulated_application(f"bench-{self.run_tag}-a{self.index:02d}-{n:04d}", self.rng, shared_inputs)
        return [app], app.events

    def send(self, batch: Sequence[Event], timeout: float) -> PostResult:
        return post_events(self.url, self.token, batch, timeout=timeout)

    def _deliver(self, batch: list[Event]) -> None:
        roll = self.rng.random()
        if roll < self.profile.overlap:
            self._deliver_overlapping(batch)
            return
        self._expect(batch, "first send", [self._post(batch)], accepted=len(batch))
        if roll < self.profile.overlap + self.profile.resend:
            self._add(resent_events=len(batch))
            self._expect(batch, "re-send", [self._post(batch)], accepted=0)

    def _deliver_overlapping(self, batch: list[Event]) -> None:
        """The original and its retry in flight together: between them each event is accepted exactly once."""
        answers: list[Answer] = []
        thread = threading.Thread(target=lambda: answers.append(self._post(batch)))
        thread.start()
        time.sleep(self.rng.uniform(0, 0.01))
        answers.append(self._post(batch))
        thread.join()
        self._add(resent_events=len(batch), overlapping_resends=1)
        self._expect(batch, "overlapping sends", answers, accepted=len(batch))

    def _expect(self, batch: list[Event], what: str, answers: list[Answer], accepted: int) -> None:
        """Each answer counts every event; together they accept ``accepted`` (fewer after a failed attempt)."""
        total = sum(a.accepted for a in answers)
        counted = all(a.accepted + a.duplicates == len(batch) for a in answers)
        failed = any(a.failed for a in answers)
        if not counted or total > accepted or (total != accepted and not failed):
            self._mismatch(batch, f"{what}: {answers}")

    def _deliver_racing(self, spooled: list[Event], live: list[Event]) -> None:
        """Two consecutive batches in flight together, as when flush-spool races the agent's own sender."""
        thread = threading.Thread(target=self._deliver, args=(spooled,))
        thread.start()
        self._deliver(live)
        thread.join()
        self._add(racing_batches=1)

    def _post(self, batch: list[Event]) -> Answer:
        """POST with the agent's own transport until it succeeds, retrying 5xx and connection errors as it does."""
        for attempt in range(RETRIES):
            started = time.perf_counter()
            result = self.send(batch, timeout=60.0)
            if result.kind == "ok":
                self._count(started, len(batch), accepted=result.accepted, duplicates=result.duplicates,
                            status=result.status or 0)
                return Answer(result.accepted, result.duplicates, failed=attempt > 0)
            self._count(started, len(batch), error=f"{result.status or ''} {result.detail[:200]}".strip())
            if result.kind != "retry":
                break
            time.sleep(0.2 * 2**attempt)
        return Answer(0, 0, failed=True)

    def _count(self, started: float, events: int, accepted: int = 0, duplicates: int = 0, error: str = "",
               status: int = 0) -> None:
        with self._lock:
            if status:
                self.stats.answers[status] += 1
            self.stats.latencies.append(time.perf_counter() - started)
            self.stats.requests += 1
            self.stats.events_posted += events
            self.stats.accepted += accepted
            self.stats.duplicates += duplicates
            if error:
                self.stats.errors[error] += 1

    def _add(self, **counts: int) -> None:
        with self._lock:
            for name, n in counts.items():
                setattr(self.stats, name, getattr(self.stats, name) + n)

    def _mismatch(self, batch: list[Event], what: str) -> None:
        with self._lock:
            first = batch[0]
            self.stats.mismatches.append(f"{first.get('app_id', first.get('run'))} {first.get('event_id')}..: {what}")


def _ends(batch: list[Event]) -> bool:
    return any(e.get("type") == "application_end" for e in batch)
