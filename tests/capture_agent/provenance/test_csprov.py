"""CSProv end to end on a real local Spark: the index a build writes, and the queries that read it.

One build holds the paper's two worked examples and a few random workflow graphs side by side
(items prefixed so they never meet); a second, incremental build adds triples that merge some of
them. Answers are checked against the paper's tables and against networkx.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import networkx as nx  # type: ignore[import-untyped]  # no types shipped; a test-only reference
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from capture_agent.provenance import BuildOptions, ProvenanceIndex, build_index, layout
from capture_agent.record.storage.fs import StoreFS
from tests.capture_agent.provenance.paper import (
    COMPONENT_C,
    PAPER_SET_DEPS,
    PAPER_SETS,
    PERSON_TRIPLES,
    c_table,
    person_table,
)

pytestmark = pytest.mark.spark

THRESHOLD = 6  # cuts C (12 items) into sets of 3; no person component (at most 5 items) is cut
LAYERS = 5
Triple = tuple[str, str, str, str, str]


def random_workflow(rng: random.Random, prefix: str, n: int) -> list[Triple]:
    """A random DAG shaped like a workflow: items in LAYERS tables, each item of a later table
    derived from 1-3 items of earlier ones (now and then from many, as a UDF over a whole input)."""
    layer = {i: min(LAYERS - 1, i * LAYERS // n) for i in range(n)}
    out: list[Triple] = []
    for i in range(n):
        if layer[i] == 0:
            continue
        earlier = [j for j in range(i) if layer[j] < layer[i]]
        k = rng.choice([1, 1, 2, 3]) if rng.random() > 0.05 else min(len(earlier), 12)
        for j in sorted(rng.sample(earlier, min(k, len(earlier)))):
            out.append((f"{prefix}{j}", f"{prefix}{i}", f"t{layer[i]}", f"{prefix[0]}L{layer[j]}",
                        f"{prefix[0]}L{layer[i]}"))
    return out


def write_batch(path: Path, triples: list[Triple]) -> str:
    columns = list(zip(*triples, strict=True))
    pq.write_table(pa.table({name: list(col) for name, col in zip(
        ["src", "dst", "op", "src_dataset", "dst_dataset"], columns, strict=True)}), path)
    return str(path)


def person() -> list[Triple]:
    return [(f"p{s}", f"p{d}", op, person_table(s), person_table(d)) for s, d, op, _ in PERSON_TRIPLES]


def component_c() -> list[Triple]:
    return [(f"c{s}", f"c{d}", "-", c_table(s), c_table(d)) for s, d in COMPONENT_C]


RNG = random.Random(14)
RANDOM_FIRST = [t for k in range(4) for t in random_workflow(RNG, f"r{k}_", 40)]
# The second batch: new items below r0, r1 and C, and edges joining r2 to r3.
RANDOM_SECOND = (
    [(f"r0_{i}", f"n{i}", "t9", "rL4", "rL5") for i in range(30, 40)]
    + [(f"r1_{i}", f"n{i}", "t9", "rL4", "rL5") for i in range(35, 40)]
    + [("r2_39", "r3_0", "link", "rL4", "rL0"), ("c12", "n100", "-", "C", "D"), ("n100", "n101", "-", "D", "D")]
)


@pytest.fixture(scope="module")
def store(tmp_path_factory: Any) -> StoreFS:
    return StoreFS.resolve(str(tmp_path_factory.mktemp("provenance")))


@pytest.fixture(scope="module")
def first(spark: Any, store: StoreFS) -> ProvenanceIndex:
    batch = write_batch(Path(store.root) / "first.parquet", person() + component_c() + RANDOM_FIRST)
    splits = [["A"], ["B"], ["C"]]  # the paper cuts C by its tables
    build_index(spark, store, [batch], store.join(store.root, "g1"), BuildOptions(THRESHOLD, splits, buckets=4))
    return ProvenanceIndex(store, store.join(store.root, "g1"))


@pytest.fixture(scope="module")
def second(spark: Any, store: StoreFS, first: ProvenanceIndex) -> ProvenanceIndex:
    batch = write_batch(Path(store.root) / "second.parquet", RANDOM_SECOND)
    build_index(spark, store, [batch], store.join(store.root, "g2"),
                BuildOptions(THRESHOLD, [["A"], ["B"], ["C"]], buckets=4), previous=first.folder)
    return ProvenanceIndex(store, store.join(store.root, "g2"))


def test_the_person_example_gives_the_papers_components_and_the_lineage_of_23(first):
    """Table IV: seven components, as its ccid column groups the triples; data-item 23 comes from
    15 and 18 by R2, and they from 3 and 6 by R1; its component is read, nothing else."""
    components: dict[int, set[int]] = {}
    for s, d, _, ccid in PERSON_TRIPLES:
        found = first.locate(f"p{d}")
        assert found is not None and first.locate(f"p{s}") == found
        components.setdefault(found[0], set()).add(ccid)
    assert sorted(map(sorted, components.values())) == [[1], [2], [3], [4], [5], [6], [7]]

    answer = first.lineage("p23")
    assert answer.items == ["p15", "p18", "p3", "p6"]
    assert answer.edges == [("p15", "p23", "R2"), ("p18", "p23", "R2"), ("p3", "p15", "R1"), ("p6", "p18", "R1")]
    assert answer.sets_read == [answer.component]  # a small component is one set
    assert answer.triples_read == 4


def test_component_c_is_cut_into_the_papers_sets_and_item_8_reads_three_of_them(first):
    """Tables VII-VIII: S1-S4 and their dependencies; the lineage of item 8 reads S1, S2 and S3
    (nine triples, three fewer than the component) and not S4."""
    set_of = {i: first.locate(f"c{i}")[1] for i in range(1, 13)}
    ours = {name: {set_of[i] for i in members} for name, members in PAPER_SETS.items()}
    assert all(len(ids) == 1 for ids in ours.values()), ours
    sid = {name: ids.pop() for name, ids in ours.items()}
    deps = {(s, d) for s, d in zip(first._deps.column("src_csid").to_pylist(),
                                   first._deps.column("dst_csid").to_pylist(), strict=True)}
    assert {(a, b) for a, b in PAPER_SET_DEPS} == {(a, b) for a in sid for b in sid if (sid[a], sid[b]) in deps}

    answer = first.lineage("c8")
    assert answer.items == ["c1", "c2", "c3", "c4", "c5", "c7"]
    assert answer.sets_read == sorted([sid["S1"], sid["S2"], sid["S3"]])
    assert answer.triples_read == 9
    assert first.lineage("c4", "descendants").items == ["c10", "c11", "c12", "c5", "c6", "c7", "c8", "c9"]


def reference(triples: list[Triple]) -> nx.DiGraph:
    graph = nx.DiGraph()
    for s, d, op, _, _ in triples:
        graph.add_edge(s, d, op=op)
    return graph


def check_against_networkx(index: ProvenanceIndex, graph: nx.DiGraph, items: list[str]) -> None:
    for item in items:
        for direction, reach in (("ancestors", nx.ancestors), ("descendants", nx.descendants)):
            expected = reach(graph, item)
            closed = expected | {item}
            end = 1 if direction == "ancestors" else 0
            edges = sorted((s, d, graph.edges[s, d]["op"]) for s, d in graph.edges if (s, d)[end] in closed)
            answer = index.lineage(item, direction)
            assert answer.items == sorted(expected), (item, direction)
            assert answer.edges == edges, (item, direction)
            component = nx.node_connected_component(graph.to_undirected(as_view=True), item)
            assert answer.triples_read <= graph.subgraph(component).number_of_edges()


def test_random_workflows_answer_as_networkx_does(first):
    graph = reference(RANDOM_FIRST)
    check_against_networkx(first, graph, sorted(graph.nodes)[::3])
    sizes = [len(c) for c in nx.weakly_connected_components(graph)]
    assert first.meta["counts"]["components"] == len(sizes) + 7 + 1  # + the person components + C
    assert first.meta["counts"]["largest_set"] < max(sizes)  # large components were cut


def test_an_incremental_build_merges_components_and_answers_as_networkx_does(second):
    graph = reference(RANDOM_FIRST + RANDOM_SECOND + component_c())
    check_against_networkx(second, graph, sorted(graph.nodes)[::2])
    assert second.meta["incremental"] is True
    assert second.meta["counts"]["new_triples"] == len(RANDOM_SECOND)
    # The person components were not touched: still their own sets, still answered.
    assert second.lineage("p23").items == ["p15", "p18", "p3", "p6"]


def test_an_unknown_item_is_not_found(first):
    answer = first.lineage("nowhere")
    assert not answer.found and answer.items == [] and answer.sets_read == []


def test_buckets_agree_between_spark_and_python(first, store):
    """Spark wrote each item in the bucket Python looks in (crc32 of its UTF-8 bytes)."""
    for item in ("p1", "c12", "r0_5"):
        bucket = layout.item_bucket(item, 4)
        folder = store.join(first.folder, layout.bucket_folder(layout.ITEMS, bucket))
        names = [n for n, _ in store.list_files(folder) if n.endswith(".parquet")]
        rows = pa.concat_tables([pq.read_table(f"{folder}/{n}") for n in names]).column("item").to_pylist()
        assert item in rows
