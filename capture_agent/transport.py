"""One HTTP POST of an event batch to the ingest endpoint (standard library only)."""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from capture_agent.protocol import MAX_BATCH_EVENTS, MAX_BODY_BYTES

# Our own bound stays under the server's limit so that a 413 means a genuinely odd event.
TARGET_BODY_BYTES = MAX_BODY_BYTES * 4 // 5


@dataclass(frozen=True)
class PostResult:
    """How one POST went: ``ok``, ``retry`` (transient), ``auth``, ``too_large`` or ``rejected``."""

    kind: str
    status: int | None = None
    detail: str = ""
    accepted: int = 0
    duplicates: int = 0
    retry_after: float | None = None


Poster = Callable[[Sequence[dict[str, Any]]], PostResult]


def encode_body(events: Sequence[dict[str, Any]]) -> bytes:
    return json.dumps({"events": list(events)}, separators=(",", ":")).encode("utf-8")


def chunk_events(
    events: Sequence[dict[str, Any]], batch_size: int, max_bytes: int = TARGET_BODY_BYTES
) -> list[list[dict[str, Any]]]:
    """Splits events into request-sized batches by count and by encoded size."""
    chunks: list[list[dict[str, Any]]] = []
    current: list[dict[str, Any]] = []
    size = 16
    limit = min(batch_size, MAX_BATCH_EVENTS)
    for event in events:
        event_size = len(json.dumps(event, separators=(",", ":"))) + 1
        if current and (len(current) >= limit or size + event_size > max_bytes):
            chunks.append(current)
            current, size = [], 16
        current.append(event)
        size += event_size
    if current:
        chunks.append(current)
    return chunks


def _retry_after(headers: Any) -> float | None:
    try:
        value = headers.get("Retry-After") if headers is not None else None
        return min(60.0, float(value)) if value else None
    except (TypeError, ValueError):
        return None


def post_events(
    url: str, token: str, events: Sequence[dict[str, Any]], timeout: float
) -> PostResult:
    """POSTs one batch; classifies the answer instead of raising."""
    headers = {"Content-Type": "application/json", "User-Agent": "lineage-capture-agent/1"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=encode_body(events), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            payload = response.read(1 << 16)
            counts: dict[str, Any] = {}
            try:
                counts = json.loads(payload) if payload else {}
            except ValueError:
                pass
            return PostResult(
                "ok",
                response.status,
                accepted=int(counts.get("accepted", len(events)) or 0),
                duplicates=int(counts.get("duplicates", 0) or 0),
            )
    except urllib.error.HTTPError as exc:
        status = exc.code
        try:
            detail = exc.read(4000).decode("utf-8", "replace")
        except (OSError, http.client.HTTPException):
            detail = ""
        if status == 401:
            return PostResult("auth", status, detail)
        if status == 413:
            return PostResult("too_large", status, detail)
        if status == 429 or status >= 500:
            return PostResult("retry", status, detail, retry_after=_retry_after(exc.headers))
        if 400 <= status < 500:
            return PostResult("rejected", status, detail)
        return PostResult("retry", status, detail)
    except (TimeoutError, urllib.error.URLError, http.client.HTTPException, OSError) as exc:
        return PostResult("retry", None, f"{type(exc).__name__}: {exc}")
    except ValueError as exc:
        # A URL urllib cannot use is a configuration problem: keep the batch for a fixed setting.
        return PostResult("retry", None, f"cannot post to {url!r}: {exc}")


def make_poster(url: str, token: str, timeout: float) -> Poster:
    def post(events: Sequence[dict[str, Any]]) -> PostResult:
        return post_events(url, token, events, timeout)

    return post
