"""The embedded broker never shows a worker a message file that is still being written."""
from __future__ import annotations

import os

from kombu import Connection

from lineage_server.celery_broker import AtomicFilesystemTransport


def test_filesystem_urls_use_the_atomic_transport(tmp_path):
    options = {"data_folder_in": str(tmp_path), "data_folder_out": str(tmp_path)}
    with Connection("filesystem://", transport_options=options) as conn:
        assert isinstance(conn.transport, AtomicFilesystemTransport)


def test_messages_round_trip_and_no_partial_file_is_left(tmp_path):
    folder = tmp_path / "queue"
    folder.mkdir()
    options = {"data_folder_in": str(folder), "data_folder_out": str(folder), "processed_folder": str(tmp_path)}
    with Connection("filesystem://", transport_options=options) as conn:
        queue = conn.SimpleQueue("jobs")
        for i in range(20):
            queue.put({"n": i})
        assert not [name for name in os.listdir(folder) if name.startswith(".")]
        got = [queue.get(timeout=1).payload["n"] for _ in range(20)]
        queue.close()
    assert sorted(got) == list(range(20))


def test_a_partial_file_is_not_taken_as_a_message(tmp_path):
    folder = tmp_path / "queue"
    folder.mkdir()
    options = {"data_folder_in": str(folder), "data_folder_out": str(folder), "processed_folder": str(tmp_path)}
    (folder / ".123_x.jobs.msg.partial").write_bytes(b"")  # a write in progress
    with Connection("filesystem://", transport_options=options) as conn:
        queue = conn.SimpleQueue("jobs")
        queue.put({"n": 1})
        assert queue.get(timeout=1).payload == {"n": 1}
        queue.close()
    assert (folder / ".123_x.jobs.msg.partial").exists()
