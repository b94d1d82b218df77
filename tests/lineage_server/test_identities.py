"""Capture points are titled by the operator that made them and their kind, not their table id."""
from __future__ import annotations

from lineage_server.catalog.identities import CapturePointKey


def test_a_capture_point_is_titled_by_its_operator_and_kind():
    assert CapturePointKey("local-17958/0002-combiner-reduceByKey").title("combiner") == "reduceByKey · combiner"
    assert CapturePointKey("local-17958/0001-input-textFile").title("input") == "textFile · input"


def test_an_id_of_another_shape_is_shown_as_it_is():
    assert CapturePointKey("s0-input").title("input") == "input s0-input"
    assert CapturePointKey("run/0003-stage").title("stage") == "stage run/0003-stage"


def test_an_input_is_titled_by_the_files_it_read():
    key = CapturePointKey("local-17958/0001-input-textFile")
    assert key.title("input", ["file:/data/events.txt"]) == "textFile events.txt"
    assert key.title("input", ["s3://b/orders/part-0.parquet", "s3://b/orders/part-1.parquet"]) == \
        "textFile part-0.parquet +1"
    assert key.title("input", []) == "textFile · input"
