"""The embedded broker never shows a worker a message file that is still being written."""
from __future__ import annotations

import os

from kombu import Connection

from lineage_server.celery_broker import AtomicFilesystemTransport


def _options(tmp_path, queue_folder):
    """Every folder the transport uses under the test's own tmp_path (never the working directory)."""
    (tmp_path / "control").mkdir(exist_ok=True)
    (tmp_path / "processed").mkdir(exist_ok=True)
    return {"data_folder_in": str(queue_folder), "data_folder_out": str(queue_folder),
            "processed_folder": str(tmp_path / "processed"), "control_folder": str(tmp_path / "control")}


def test_filesystem_urls_use_the_atomic_transport(tmp_path):
    with Connection("filesystem://", transport_options=_options(tmp_path, tmp_path)) as conn:
        assert isinstance(conn.transport, AtomicFilesystemTransport)


def test_messages_round_trip_and_no_partial_file_is_left(tmp_path):
    folder = tmp_path / "queue"
    folder.mkdir()
    options = _options(tmp_path, folder)
    with Connection("filesystem://", transport_options=options) as conn:
        queue = conn.SimpleQueue("jobs")
        for i in range(20):
            queue.put({"n": i})
        assert not [name for name in os.listdir(folder) if name.startswith(".")]
        got = [queue.get(timeout=1).payload["n"] for _ in range(20)]
        queue.close()
    assert sorted(got) == list(range(20))

