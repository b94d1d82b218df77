"""HTTP sink and spool against a real local HTTP server (and a closed port)."""

from __future__ import annotations

import io
import socket
import time
from contextlib import redirect_stdout
from pathlib import Path

from capture_agent.cli import main as cli_main
from capture_agent.config import load_settings
from capture_agent.sinks import HttpSink
from capture_agent.spool import Spool
from tests.capture_agent.http_server import IngestRecorder


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def sample_events(count: int, prefix: str = "e") -> list[dict]:
    return [{"event_id": f"{prefix}{i}", "type": "application_end", "app_id": "local-1", "time": i}
            for i in range(count)]


def make_sink(url: str, spool_dir: Path, **extra: object) -> HttpSink:
    return HttpSink(load_settings({"server_url": url, "spool_dir": str(spool_dir), "token": "t0k", **extra},
                                  environ={}))


def test_delivers_in_batches_with_the_token(ingest_server: IngestRecorder, tmp_path: Path) -> None:
    sink = make_sink(ingest_server.url, tmp_path, batch_size=10)
    sink.emit(sample_events(25))
    sink.close(5)
    assert [e["event_id"] for e in ingest_server.events()] == [f"e{i}" for i in range(25)]
    assert all(len(b["events"]) <= 10 for b in ingest_server.bodies)
    assert set(ingest_server.authorizations) == {"Bearer t0k"}
    assert Spool(str(tmp_path), 1 << 20).batches() == []


def test_a_202_is_delivered(ingest_server: IngestRecorder, tmp_path: Path) -> None:
    """The server answers 202 when it accepted a batch and its worker applies it a moment later."""
    ingest_server.status = 202
    sink = make_sink(ingest_server.url, tmp_path, batch_size=10)
    sink.emit(sample_events(15))
    sink.close(5)
    assert len(ingest_server.events()) == 15 and len(ingest_server.bodies) == 2
    assert Spool(str(tmp_path), 1 << 20).batches() == []


def test_unreachable_server_spools_quickly(tmp_path: Path) -> None:
    sink = make_sink(closed_port_url(), tmp_path)
    start = time.monotonic()
    sink.emit(sample_events(30))
    sink.close(5)
    assert time.monotonic() - start < 5  # connection refused fails fast; backoff is cut at close
    spool = Spool(str(tmp_path), 1 << 20)
    assert sum(len(spool.read(p) or []) for p in spool.batches()) == 30


def test_server_error_spools_and_bad_batch_goes_to_rejected(ingest_server: IngestRecorder, tmp_path: Path) -> None:
    ingest_server.status = 503
    sink = make_sink(ingest_server.url, tmp_path / "a", max_retries=1)
    sink.emit(sample_events(3))
    sink.close(5)
    assert len(Spool(str(tmp_path / "a"), 1 << 20).batches()) == 1

    ingest_server.status = 400
    sink = make_sink(ingest_server.url, tmp_path / "b")
    sink.emit(sample_events(3))
    sink.close(5)
    spool = Spool(str(tmp_path / "b"), 1 << 20)
    assert spool.batches() == []
    rejected = sorted(p.name for p in spool.rejected_directory.iterdir())
    assert len(rejected) == 2 and rejected[1].endswith(".reason.txt")


def test_spool_drops_oldest_batches_past_its_bound(tmp_path: Path) -> None:
    spool = Spool(str(tmp_path), max_bytes=2500)
    for index in range(10):
        spool.write(sample_events(10, prefix=f"b{index}-"))
    kept = spool.batches()
    assert 0 < len(kept) < 10 and spool.total_bytes() <= 2500
    assert (spool.read(kept[-1]) or [{}])[0]["event_id"] == "b9-0"


def test_flush_spool_command_delivers_every_event_once(ingest_server: IngestRecorder, tmp_path: Path) -> None:
    spool = Spool(str(tmp_path), 1 << 20)
    for index in range(3):
        spool.write(sample_events(4, prefix=f"b{index}-"))
    out = io.StringIO()
    with redirect_stdout(out):
        code = cli_main(["flush-spool", "--server", ingest_server.url, "--token", "t0k",
                         "--spool-dir", str(tmp_path)])
    assert code == 0
    assert "delivered 12 events in 3 batches" in out.getvalue()
    ids = [e["event_id"] for e in ingest_server.events()]
    assert len(ids) == len(set(ids)) == 12
    assert spool.batches() == []


def test_refused_token_keeps_the_batch_in_the_spool(ingest_server: IngestRecorder, tmp_path: Path) -> None:
    ingest_server.status = 401
    sink = make_sink(ingest_server.url, tmp_path)
    sink.emit(sample_events(5))
    sink.close(5)
    spool = Spool(str(tmp_path), 1 << 20)
    assert sum(len(spool.read(p) or []) for p in spool.batches()) == 5
    assert not spool.rejected_directory.exists()


def test_server_back_mid_run_gets_the_spool_first(ingest_server: IngestRecorder, tmp_path: Path) -> None:
    ingest_server.status = 503
    sink = make_sink(ingest_server.url, tmp_path, max_retries=0)
    sink.emit(sample_events(3, prefix="early"))
    sink.flush(5)
    ingest_server.status = 200
    time.sleep(1.1)  # the sender leaves a failing server alone for a second before trying again
    sink.emit(sample_events(2, prefix="late"))
    sink.close(5)
    assert [e["event_id"] for e in ingest_server.events()] == ["early0", "early1", "early2", "late0", "late1"]
    assert Spool(str(tmp_path), 1 << 20).batches() == []
