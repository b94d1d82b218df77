"""Operations whose lineage is not captured raise an error naming them; never silent lineage."""

from __future__ import annotations

import pytest

from capture_agent.record import NotCaptured, UnsupportedOperation

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("name, call", [
    ("barrier", lambda r: r.barrier()),
    ("withResources", lambda r: r.withResources(None)),
    ("cleanShuffleDependencies", lambda r: r.cleanShuffleDependencies()),
])
def test_unsupported_operations_raise_naming_the_operation(lc, name, call):
    rdd = lc.parallelize([(1, 2), (3, 4)], 2)
    with pytest.raises(UnsupportedOperation, match=name):
        call(rdd)


def test_mixing_plain_and_captured_rdds_raises(lc, sc):
    with pytest.raises(UnsupportedOperation, match="join"):
        lc.parallelize([(1, 2)]).join(sc.parallelize([(1, 3)]))
    with pytest.raises(UnsupportedOperation, match="union"):
        lc.parallelize([1]).union(sc.parallelize([2]))


def test_compressed_text_output_raises(lc, tmp_path):
    with pytest.raises(UnsupportedOperation, match="saveAsTextFile"):
        lc.parallelize(["a"]).saveAsTextFile(str(tmp_path / "o"), "org.apache.hadoop.io.compress.GzipCodec")


def test_lineage_before_any_action_raises(lc):
    with pytest.raises(NotCaptured, match="run an action"):
        lc.parallelize([1, 2]).map(str).getLineage()


def test_plain_escape_hatch_runs_without_lineage(lc):
    rdd = lc.parallelize([3, 1, 2], 2)
    assert sorted(rdd.plain().pipe("cat").collect()) == ["1", "2", "3"]
