"""A bucket of a local S3-compatible server (moto's, on loopback) for lineage store tests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest


@contextmanager
def local_bucket(name: str = "lineage") -> Iterator[str]:
    """Starts moto's server on a free loopback port with one bucket; yields a store URL under it
    (``s3://key:secret@bucket/runs?endpoint_override=...``) that pyarrow.fs opens as it is."""
    boto3 = pytest.importorskip("boto3")
    server_module = pytest.importorskip("moto.server")
    server = server_module.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        client = boto3.client("s3", endpoint_url=f"http://{host}:{port}", aws_access_key_id="lineage",
                              aws_secret_access_key="secret", region_name="us-east-1")
        client.create_bucket(Bucket=name)
        yield f"s3://lineage:secret@{name}/runs?endpoint_override={host}:{port}&scheme=http&region=us-east-1"
    finally:
        server.stop()
