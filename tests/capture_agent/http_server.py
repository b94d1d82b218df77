"""A tiny real HTTP ingest server (http.server in a thread) that records what it receives."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


class IngestRecorder(ThreadingHTTPServer):
    """Answers POSTs with ``status`` and keeps every decoded body and Authorization header."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.status = 200
        self.bodies: list[dict[str, Any]] = []
        self.authorizations: list[str] = []
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def events(self) -> list[dict[str, Any]]:
        with self.lock:
            return [event for body in self.bodies for event in body["events"]]


class _Handler(BaseHTTPRequestHandler):
    server: IngestRecorder

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        status = self.server.status
        with self.server.lock:
            if 200 <= status < 300:
                self.server.bodies.append(body)
            self.server.authorizations.append(self.headers.get("Authorization", ""))
        answer: dict[str, object] = {"events": "bad"}
        if 200 <= status < 300:
            answer = {"accepted": len(body["events"]), "duplicates": 0}
        payload = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def ingest_server() -> Iterator[IngestRecorder]:
    server = IngestRecorder()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
