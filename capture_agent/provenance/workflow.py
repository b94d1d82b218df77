"""The workflow's dataset graph and its splits: the guide along which large components are cut.

A *split* is a set of datasets (tables) that is weakly connected in the dataset graph (the
paper's G_wf). Algorithm 3 of CSProv cuts a large component along a set of splits, and a part
that is still too large along the *sub-splits* of its split. ``SplitTree`` holds that hierarchy
once for the whole graph, so the Spark job only joins each item's split key with a small table.

Splits are given (``explicit``: the top-level splits, as the paper's Figure 1 draws them) or cut
automatically: a split is cut by depth in the workflow (the longest path from a source dataset),
the shallow half from the deep half, and each half into its weakly connected pieces, so a
dataset's items are grouped with the items of the steps right before and after it. A split of one
dataset has no sub-splits. Keys are short strings: ``"0"``, ``"0.1"``, ``"0.1.0"``...
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class DatasetGraph:
    """Datasets and the (source, derived) dataset pairs that some triple connects."""

    datasets: frozenset[str]
    edges: frozenset[tuple[str, str]]

    @classmethod
    def of(cls, datasets: Iterable[str], edges: Iterable[tuple[str, str]]) -> DatasetGraph:
        edge_set = frozenset((a, b) for a, b in edges)
        return cls(frozenset(datasets) | {d for e in edge_set for d in e}, edge_set)

    def pieces(self, within: Iterable[str]) -> list[frozenset[str]]:
        """The weakly connected pieces of the graph induced by ``within``, in a stable order."""
        members = set(within)
        neighbours: dict[str, set[str]] = defaultdict(set)
        for a, b in self.edges:
            if a in members and b in members:
                neighbours[a].add(b)
                neighbours[b].add(a)
        seen: set[str] = set()
        out = []
        for start in sorted(members):
            if start in seen:
                continue
            piece, todo = {start}, [start]
            while todo:
                for n in neighbours[todo.pop()]:
                    if n not in piece:
                        piece.add(n)
                        todo.append(n)
            seen |= piece
            out.append(frozenset(piece))
        return out

    def depths(self, within: Iterable[str]) -> dict[str, int]:
        """Longest path from a source of the induced subgraph (edges closing a cycle are ignored)."""
        members = set(within)
        preds: dict[str, set[str]] = defaultdict(set)
        for a, b in self.edges:
            if a in members and b in members and a != b:
                preds[b].add(a)
        depth: dict[str, int] = {}
        visiting: set[str] = set()

        def of(d: str) -> int:
            if d in depth:
                return depth[d]
            if d in visiting:  # a cycle: the edge back is ignored
                return -1
            visiting.add(d)
            depth[d] = 1 + max((of(p) for p in preds[d]), default=-1)
            visiting.discard(d)
            return depth[d]

        for d in sorted(members):
            of(d)
        return depth


@dataclass
class SplitTree:
    """Every split and its sub-splits, by key; ``top`` are the keys Algorithm 3 starts from."""

    members: dict[str, frozenset[str]] = field(default_factory=dict)
    children: dict[str, list[str]] = field(default_factory=dict)
    top: list[str] = field(default_factory=list)

    @classmethod
    def build(cls, graph: DatasetGraph, explicit: Sequence[Sequence[str]] | None = None) -> SplitTree:
        """The split hierarchy of ``graph``: top-level splits ``explicit`` (each must be weakly
        connected; datasets they leave out form more splits), else cut automatically.

        Raises:
            ValueError: an explicit split is not weakly connected, or names a dataset twice.
        """
        tree = cls()
        if explicit:
            given = [frozenset(s) for s in explicit if s]
            named = [d for s in given for d in s]
            if len(named) != len(set(named)):
                raise ValueError("a dataset is in two splits")
            for split in given:
                if len(graph.pieces(split)) > 1:
                    raise ValueError(f"split {sorted(split)} is not weakly connected in the dataset graph")
            top = given + graph.pieces(graph.datasets - set(named))
        else:  # each independent workflow cut once: a split holding a whole one would cut nothing
            pieces = graph.pieces(graph.datasets)
            top = [s for piece in pieces for s in (_cut(graph, piece) if len(piece) > 1 else [piece])]
        for i, split in enumerate(top):
            tree._add(graph, str(i), split)
            tree.top.append(str(i))
        return tree

    def _add(self, graph: DatasetGraph, key: str, split: frozenset[str]) -> None:
        self.members[key] = split
        subs = _cut(graph, split) if len(split) > 1 else []
        self.children[key] = [f"{key}.{i}" for i in range(len(subs))]
        for child, sub in zip(self.children[key], subs, strict=True):
            self._add(graph, child, sub)

    def top_key(self, dataset: str) -> str:
        return next(k for k in self.top if dataset in self.members[k])

    def child_key(self, key: str, dataset: str) -> str | None:
        """The sub-split of ``key`` holding ``dataset``; None when ``key`` has no sub-splits."""
        return next((c for c in self.children[key] if dataset in self.members[c]), None)

    def levels(self) -> dict[str, list[str]]:
        """Each dataset's split path: its top split, the sub-split holding it, ... down to a split
        that is not cut further."""
        out = {}
        for top in self.top:
            for dataset in self.members[top]:
                path = [top]
                while (child := self.child_key(path[-1], dataset)) is not None:
                    path.append(child)
                out[dataset] = path
        return out

    def as_json(self) -> dict[str, object]:
        return {"top": self.top, "splits": {k: sorted(v) for k, v in sorted(self.members.items())}}


def _cut(graph: DatasetGraph, split: frozenset[str]) -> list[frozenset[str]]:
    """A split's sub-splits: its shallow and deep halves, each in weakly connected pieces; every
    dataset alone when all are equally deep."""
    depth = graph.depths(split)
    levels = sorted(set(depth.values()))
    if len(levels) < 2:
        return [frozenset([d]) for d in sorted(split)]
    middle = levels[(len(levels) - 1) // 2]
    shallow = {d for d in split if depth[d] <= middle}
    return graph.pieces(shallow) + graph.pieces(split - shallow)
