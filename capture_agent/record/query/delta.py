"""Key-restricted (delta) replay of a what-if: the changed records carried forward through the
stages after the first combine, each later shuffle replaying only the keys they touch.

``selective.kept_combines`` finds the combines whose untouched map-side partitions kept their
aggregates. At each of them only the keys whose aggregate changed in a touched partition can
change: the touched partitions are combined again without the deleted records and compared with
what they kept, in their tasks; those keys' old and new outputs are merged from the kept
aggregates (the changed ones replaced), and the pairs that differ are the combine's delta (old
records out, new records in). Walking the job towards the target's node, a delta goes

- through per-record operations (map, flatMap, filter, mapValues, flatMapValues, keyBy, keys,
  values): the job's functions run on the delta's records alone (in Spark tasks);
- unchanged through operations that only move records (partitionBy, repartition, coalesce,
  sortByKey, repartitionAndSortWithinPartitions) and into unions;
- into a shuffle (reduceByKey, combineByKey and its families, groupByKey, the joins, cogroup,
  groupWith, subtractByKey, and subtract and intersection, whose records are their own keys):
  the keys of the delta's records, a changed record's old key and its new one, are the only keys
  whose output can change. The shuffle is replayed on those keys only, on the old and on the new
  input, and its outputs there that differ are its delta.

To replay a shuffle on keys K, its input is built restricted to K: the restriction goes back
through filters, unions, moves, mapValues and keyed shuffles (their outputs at K come from their
inputs at K); an operation that computes keys (a map, say) needs its whole input, read at a kept
combine from what it kept (all keys, no input read: the outputs its reduce side kept, else its
map side's aggregates merged), or, past a later shuffle, that shuffle's whole output (computed
once, old; the new one is the old with its replayed keys replaced: ``stages_in_full`` names
these). Inputs the deletion does not reach are read as captured.

A combine that is a sum of integers (``subtraction.invertible``) needs less: at a first combine
the deleted records alone are read back, and what they contributed is subtracted from the output
its reduce side kept (lineage's fates say which keys lose every record); at a later one the
changed records' old values are taken off its kept output and their new ones added, so its
input (a join re-keyed by a map, say) is needed at the changed records only, never whole.
A later ``groupByKey`` whose reduce side kept its groups is patched the same way (``regroup``):
its touched groups are their kept members less the records that left, plus those that came.
``paths`` says which way each stage went (``stage_paths``).

The target's new output is its old one, kept at capture, less the old records of the target's
delta plus its new ones. Exact when the job's functions are deterministic; when an old record is
not found in the kept output (a function that is not, a float sum merged in another order),
``DeltaReplay.run`` steps aside (None) as it does for a shape it does not cover: a target whose
action is not ``collect`` or whose output was not kept, a deleted input reaching the target other
than through a kept combine, and any other operation on the way (mapPartitions, zip, cartesian,
sample, ...). The replay then runs every stage after the combines on all keys
(``selective.aggregated_combines``) or the whole job.
"""

from __future__ import annotations

import operator
import pickle
from typing import Any

from pyspark.core.rdd import RDD

from capture_agent.record.query.engine import Frontier
from capture_agent.record.query.multisets import cancelled, patched
from capture_agent.record.query.recipes import Recipe, Ref
from capture_agent.record.query.regroup import groups, regrouped
from capture_agent.record.query.selective import KeptCombine, combine_functions, kept_combines, kept_pairs
from capture_agent.record.query.stage_paths import InFull, KeysReplayed, Recombined, Regrouped, Subtracted
from capture_agent.record.query.subtraction import invertible, lost_sums, subtracted, sums
from capture_agent.record.query.values import kept_results
from capture_agent.record.storage.ids import split_by_partition
from capture_agent.record.storage.tables import aggregates_name, read_rows
from capture_agent.record.worker.functions import ChangedAggregates, KeptAggregates, KeyIn, Tagged, TaggedAggregates

PER_RECORD = ("map", "flatMap", "filter", "mapValues", "flatMapValues", "keyBy", "keys", "values")
KEEP_KEYS = ("mapValues", "flatMapValues")  # a key restriction passes through them
MOVES = ("partitionBy", "repartition", "coalesce", "sortByKey", "repartitionAndSortWithinPartitions")
KEYED = ("reduceByKey", "combineByKey", "groupByKey", "join", "leftOuterJoin", "rightOuterJoin", "fullOuterJoin",
         "cogroup", "groupWith", "subtractByKey")
WHOLE = ("subtract", "intersection")  # shuffles whose records are their own keys
# where a shuffle's recipe has its numPartitions: a restricted replay runs on a few partitions
PARTITIONS_ARG = {"reduceByKey": 1, "combineByKey": 3, "groupByKey": 0, "join": 1, "leftOuterJoin": 1,
                  "rightOuterJoin": 1, "fullOuterJoin": 1, "cogroup": 1, "subtractByKey": 1, "subtract": 1}

Restriction = tuple[bool, frozenset[Any]] | None  # (whole records?, their keys); None: every record
Delta = tuple[RDD, RDD] | None  # (old records out, new records in); None: nothing changes


class NotRestrictable(Exception):
    """The job's shape between its kept combines and the target is not one delta replay covers."""


def _matches(record: Any, restriction: Restriction) -> bool:
    if restriction is None:
        return True
    whole, keys = restriction
    try:
        return (record if whole else record[0]) in keys
    except TypeError:  # an unhashable record is no key
        return False


def _filtered(rdd: RDD, restriction: Restriction) -> RDD:
    return rdd if restriction is None else rdd.filter(KeyIn(restriction[1], restriction[0]))


def _refs(spec: dict[str, Any]) -> list[int]:
    found = [spec["on"]["ref"]] if isinstance(spec["on"], dict) else []
    return found + [a["ref"] for a in (*spec["args"], *spec["kwargs"].values()) if isinstance(a, dict) and "ref" in a]


class DeltaReplay:
    """One key-restricted replay of a kept job's output without some input records (``job``: a
    ``stored_job.StoredJob``, ``build``: its ``Build`` without ``deleted``).

    ``keys_replayed`` ({"op #node": keys}): per kept combine and later shuffle, how many keys it
    replayed; ``stages_in_full``: the later shuffles whose whole old output was needed;
    ``paths`` ({"op #node": a ``stage_paths`` name}): how each was computed. ``fates``: the ids
    lineage says die, per capture point (a sum's keys that die are read from them)."""

    def __init__(self, job: Any, build: Any, deleted: Frontier, fates: Frontier | None = None) -> None:
        self.job = job
        self.sc = job.sc
        self.nodes: dict[str, Any] = job.job["nodes"]
        self.build = build
        self.plain = type(build)(job, {})  # what the deletion does not reach, built as captured
        self.deleted = deleted
        self.fates = fates
        self.keys_replayed: dict[str, int] = {}
        self.stages_in_full: list[str] = []
        self.paths: dict[str, str] = {}
        self._combines: dict[int, KeptCombine] = {}
        self._merge: dict[int, Any] = {}  # a kept combine's mergeCombiners
        self._affected: dict[int, bool] = {}
        self._deltas: dict[int, Delta] = {}
        self._changed: dict[int, tuple[Restriction, list[Any]]] = {}  # keys replayed, the new records there
        self._restricted: dict[tuple[str, int, Restriction], RDD] = {}
        self._cached: list[RDD] = []
        self._sums: dict[int, tuple[frozenset[Any], dict[Any, Any], dict[Any, Any]]] = {}  # keys, old, new sums
        self._groups: dict[int, tuple[frozenset[Any], dict[Any, Any], dict[Any, Any]]] = {}  # keys, old, new groups
        self._local: dict[int, tuple[RDD, list[Any]]] = {}  # RDDs made of this process's records (by id)

    def run(self, target: str) -> list[Any] | None:
        """``target``'s new output, or None when the job's shape or what was kept does not allow it."""
        out = self.job.job["outputs"][target]
        if out["redo"]["method"] != "collect":
            return None
        self._combines = kept_combines(self.job, self.deleted)
        if not self._combines:
            return None
        try:
            if not self._affects(out["node"]):
                return None
        except NotRestrictable:
            return None
        kept = kept_results(self.job.store.fs, self.job.store.point(target))
        if kept is None:
            return None
        try:
            delta = self._delta(out["node"])
            removed, added = cancelled(*self._collected(*delta)) if delta is not None else ([], [])
        finally:
            for rdd in self._cached:
                rdd.unpersist()
        return patched(list(kept.values()), removed, added)

    # ------------------------------------------------------------------ the shape
    def _affects(self, seq: int) -> bool:
        """Whether the deletion reaches node ``seq`` (only through kept combines and covered
        operations, else NotRestrictable)."""
        if seq not in self._affected:
            node = self.nodes[str(seq)]
            if seq in self._combines:
                found = True
            elif "input" in node:
                if node["input"] in self.deleted:
                    raise NotRestrictable(f"the deleted input {node['input']} is read past the kept combines")
                found = False
            else:
                spec = node["recipe"]
                found = any([self._affects(r) for r in _refs(spec)])
                if found and spec["method"] not in (*PER_RECORD, *MOVES, "union", *KEYED, *WHOLE):
                    raise NotRestrictable(f"{spec['method']} is not replayed by keys")
                if found and spec["method"] in PER_RECORD and any("ref" in a for a in spec["args"]):
                    raise NotRestrictable(f"{spec['method']} takes another RDD")
            self._affected[seq] = found
        return self._affected[seq]

    def _label(self, seq: int) -> str:
        return f"{self.nodes[str(seq)]['op']} #{seq}"

    # ------------------------------------------------------------------ deltas, forward
    def _delta(self, seq: int) -> Delta:
        """(old records, new records) of node ``seq`` that differ, or None."""
        if seq not in self._deltas:
            self._deltas[seq] = self._delta_of(seq)
        return self._deltas[seq]

    def _delta_of(self, seq: int) -> Delta:
        if seq in self._combines:
            return self._combine_delta(self._combines[seq])
        if not self._affects(seq):
            return None
        spec = self.nodes[str(seq)]["recipe"]
        method, refs = spec["method"], _refs(spec)
        if method in PER_RECORD:
            delta = self._delta(refs[0])
            if delta is None:
                return None
            return self._apply(seq, {refs[0]: delta[0]}), self._apply(seq, {refs[0]: delta[1]})
        if method in MOVES:
            return self._delta(refs[0])
        deltas = [d for d in (self._delta(r) for r in refs) if d is not None]
        if not deltas:
            return None
        if method == "union":
            return self.sc.union([d[0] for d in deltas]), self.sc.union([d[1] for d in deltas])
        whole = method in WHOLE
        sides = [cancelled(*self._collected(*d)) for d in deltas]
        if invertible(spec) and len(sides) == 1:
            found = self._summed_shuffle(seq, *sides[0])
            if found is not None:
                return self._spread_pair(*cancelled(*found))
        if method == "groupByKey":
            found = self._regrouped_shuffle(seq, *sides[0])
            if found is not None:
                return self._spread_pair(*cancelled(*found))
        records = [r for side in sides for records in side for r in records]
        keys = frozenset(r if whole else r[0] for r in records)
        if not keys:
            return None
        restriction: Restriction = (whole, keys)
        self.keys_replayed[self._label(seq)] = len(keys)
        self.paths.setdefault(self._label(seq), KeysReplayed.name)
        old, new = self._collected(
            self._apply(seq, {r: self.restricted("old", r, restriction) for r in refs}, few=True),
            self._apply(seq, {r: self.restricted("new", r, restriction) for r in refs}, few=True))
        self._changed[seq] = (restriction, new)
        return self._spread_pair(*cancelled(old, new))

    def _combine_delta(self, kept: KeptCombine) -> Delta:
        """A kept combine's old and new output at the keys whose map-side aggregate changed in a
        touched partition (combined again and compared with what it kept, in its task): the old
        merged from every partition's kept aggregates, the new with the changed ones replaced."""
        sc, fs = self.sc, self.job.store.fs
        create, merge, merge_combiners = combine_functions(self.build, kept.combine)
        self._merge[kept.seq] = merge_combiners
        if invertible(kept.combine):
            summed = self._summed_combine(kept)
            if summed is not None:
                return self._spread_pair(*cancelled(*summed))
        self.paths[self._label(kept.seq)] = Recombined.name
        parent = self.build.rdd(kept.combine["on"]["ref"])
        found = sc.runJob(parent.mapPartitionsWithIndex(ChangedAggregates(create, merge, fs, kept.files)),
                          lambda it: it, kept.touched)
        keys = frozenset(key for _, key, _, _ in found)
        self.keys_replayed[self._label(kept.seq)] = len(keys)
        if not keys:
            self._changed[kept.seq] = ((False, keys), [])
            return None
        changed = frozenset((part, key) for part, key, _, _ in found)
        pairs = kept_pairs(sc, self.job.store, sorted(kept.files.items()), TaggedAggregates(fs, keys, changed))
        fresh = [((1, key), new) for _, key, new, present in found if present]  # data: keys and aggregates
        if fresh:
            pairs = pairs.union(self._spread(fresh))
        merged = pairs.reduceByKey(merge_combiners).collect()
        old = [(k, v) for (tag, k), v in merged if tag == 0]
        new = [(k, v) for (tag, k), v in merged if tag == 1]
        self._changed[kept.seq] = ((False, keys), new)
        return self._spread_pair(*cancelled(old, new))

    # ------------------------------------------------------------------ sums, subtracted
    def _summed_combine(self, kept: KeptCombine) -> tuple[list[Any], list[Any]] | None:
        """A kept integer sum's old and new output at the keys the deleted records touch: the old
        sums kept, less what those records contributed (``subtraction``: only they are read
        back), the keys lineage says die gone; None when that cannot be decided here."""
        lost = lost_sums(self.job, self.build, kept.combine, kept.source,
                         self.deleted[self.nodes[str(kept.source)]["input"]])
        if lost is None:
            return None
        keys = frozenset(lost)
        old = self._kept_sums(kept.node, keys, kept)
        new = subtracted(old, lost, {}, self._gone(kept)) if old is not None else None
        if old is None or new is None:
            return None
        return self._summed(kept.seq, keys, old, new)

    def _summed_shuffle(self, seq: int, removed: list[Any], added: list[Any]) -> tuple[list[Any], list[Any]] | None:
        """A later integer sum's old and new output at the keys of the records its input lost
        (``removed``) and gained (``added``): its kept sums less the ones, plus the others; None
        when its output was not kept or a key is left undecided (its stage is replayed on keys)."""
        if not removed and not added:
            return [], []
        minus, plus = sums(removed), sums(added)
        keys = frozenset(minus.keys() | plus.keys())
        old = self._kept_sums(self.nodes[str(seq)], keys)
        new = subtracted(old, minus, plus, None) if old is not None else None
        if old is None or new is None:
            return None
        return self._summed(seq, keys, old, new)

    def _regrouped_shuffle(self, seq: int, removed: list[Any], added: list[Any]
                           ) -> tuple[list[Any], list[Any]] | None:
        """A later groupByKey's old and new groups at the keys of the records its input lost and
        gained: its kept groups less the ones, plus the others (``regroup``); None when its groups
        were not kept or a record that left is not in its kept group (its stage is replayed on keys)."""
        if not removed and not added:
            return [], []
        keys = frozenset(key for key, _ in (*removed, *added))
        old = self._kept_groups(seq, keys)
        new = regrouped(old, removed, added) if old is not None else None
        if old is None or new is None:
            return None
        self.keys_replayed[self._label(seq)] = len(keys)
        self.paths[self._label(seq)] = Regrouped.name
        self._changed[seq] = ((False, keys), groups(new))
        self._groups[seq] = (keys, old, new)
        return groups(old), groups(new)

    def _kept_groups(self, seq: int, keys: frozenset[Any]) -> dict[Any, list[Any]] | None:
        """The groups a groupByKey's reduce side kept at ``keys`` (read in Spark tasks), or None."""
        outputs = self._reducer_outputs(self.nodes[str(seq)])
        if outputs is None:
            return None
        return dict(kept_pairs(self.sc, self.job.store, outputs, KeptAggregates(self.job.store.fs, keys)).collect())

    def _summed(self, seq: int, keys: frozenset[Any], old: dict[Any, Any], new: dict[Any, Any]
                ) -> tuple[list[Any], list[Any]]:
        self._merge[seq] = operator.add
        self.keys_replayed[self._label(seq)] = len(keys)
        self.paths[self._label(seq)] = Subtracted.name
        self._changed[seq] = ((False, keys), list(new.items()))
        self._sums[seq] = (keys, old, new)
        return list(old.items()), list(new.items())

    def _kept_sums(self, node: dict[str, Any], keys: frozenset[Any], kept: KeptCombine | None = None
                   ) -> dict[Any, Any] | None:
        """The output a combine's reduce side kept at ``keys`` (read in Spark tasks), else, for a
        first combine, its map side's aggregates of those keys summed; None when neither was kept."""
        read = KeptAggregates(self.job.store.fs, keys)
        outputs = self._reducer_outputs(node)
        if outputs is not None:
            return dict(kept_pairs(self.sc, self.job.store, outputs, read).collect())
        if kept is None:
            return None
        return dict(kept_pairs(self.sc, self.job.store, list(kept.files.values()), read)
                    .reduceByKey(operator.add).collect())

    def _gone(self, kept: KeptCombine) -> frozenset[Any] | None:
        """The keys of a first combine that lineage says lose every record (their reduce side's
        records it deletes, read from the output it kept); None when lineage or that output is
        not at hand."""
        outputs = self._reducer_outputs(kept.node)
        if self.fates is None or outputs is None:
            return None
        dead = self.fates.get(kept.node["reducer"])
        gone: set[Any] = set()
        for part, positions in split_by_partition(dead) if dead else []:
            column = read_rows(self.job.store.fs, outputs[part], ["key"]).column("key")
            gone.update(pickle.loads(column[n].as_py()) for n in positions)
        return frozenset(gone)

    # ------------------------------------------------------------------ inputs, restricted
    def restricted(self, version: str, seq: int, restriction: Restriction) -> RDD:
        """Node ``seq``'s records (``version`` "old" or "new") within ``restriction``."""
        # what the deletion does not reach is the same old and new: one RDD for both
        key = (version if self._affects(seq) else "plain", seq, restriction)
        if key not in self._restricted:
            self._restricted[key] = self._restricted_of(version, seq, restriction)
        return self._restricted[key]

    def _restricted_of(self, version: str, seq: int, restriction: Restriction) -> RDD:
        if seq in self._combines:
            return self._combine_rows(version, self._combines[seq], restriction)
        if not self._affects(seq):
            return _filtered(self.plain.rdd(seq), restriction)
        spec = self.nodes[str(seq)]["recipe"]
        method, refs = spec["method"], _refs(spec)
        by_key = restriction is not None and not restriction[0]
        if method in MOVES:  # the same records: where they go does not matter to a later shuffle
            return self.restricted(version, refs[0], restriction)
        kept_groups = self._group_rows(version, seq, restriction) if method == "groupByKey" and by_key else None
        if kept_groups is not None:
            return kept_groups
        if method in ("filter", "union", *WHOLE) or (method in (*KEEP_KEYS, *KEYED) and by_key):
            return self._apply(seq, {r: self.restricted(version, r, restriction) for r in refs}, few=True)
        if method in PER_RECORD:  # it computes the keys: from its whole input
            return _filtered(self._apply(seq, {refs[0]: self.restricted(version, refs[0], None)}), restriction)
        return _filtered(self._whole_output(version, seq), restriction)

    def _whole_output(self, version: str, seq: int) -> RDD:
        """A later keyed shuffle's whole output: computed once (old); the new one replaces the
        keys its delta replayed."""
        refs = _refs(self.nodes[str(seq)]["recipe"])
        old = self._restricted.get(("old", seq, None))
        if old is None:
            old = self._apply(seq, {r: self.restricted("old", r, None) for r in refs}).cache()
            self._cached.append(old)
            self._restricted[("old", seq, None)] = old
            self.stages_in_full.append(self._label(seq))
            self.paths[self._label(seq)] = InFull.name
        self._delta(seq)
        if version == "old" or seq not in self._changed:
            return old
        restriction, new = self._changed[seq]
        assert restriction is not None
        return old.filter(KeyIn(restriction[1], restriction[0], negate=True)).union(self._spread(new))

    def _combine_rows(self, version: str, kept: KeptCombine, restriction: Restriction) -> RDD:
        """A kept combine's output within ``restriction``: old, merged from every partition's kept
        aggregates; new, the old with the touched keys' new aggregates."""
        self._delta(kept.seq)
        summed = self._sums.get(kept.seq)
        if summed is not None and restriction is not None and not restriction[0] and restriction[1] <= summed[0]:
            # keys whose old and new sums are known here: no kept file read again
            known = summed[1] if version == "old" else summed[2]
            return self._spread([(key, known[key]) for key in restriction[1] if key in known])
        if version == "new":
            changed, new = self._changed[kept.seq]
            assert changed is not None
            old = self.restricted("old", kept.seq, restriction)
            return old.filter(KeyIn(changed[1], negate=True)).union(
                self._spread([r for r in new if _matches(r, restriction)]))
        by_key = restriction is not None and not restriction[0]
        read = KeptAggregates(self.job.store.fs, restriction[1] if restriction is not None and by_key else None)
        outputs = self._kept_outputs(kept)
        if outputs is not None:  # the combine's output, kept by its reduce side
            rows = kept_pairs(self.sc, self.job.store, outputs, read)
        else:
            rows = kept_pairs(self.sc, self.job.store, list(kept.files.values()), read).reduceByKey(
                self._merge[kept.seq], kept.node["partitions"])
        if restriction is None:
            rows = rows.cache()
            self._cached.append(rows)
        return rows if by_key else _filtered(rows, restriction)

    def _group_rows(self, version: str, seq: int, restriction: Restriction) -> RDD | None:
        """A groupByKey's groups at the keys of ``restriction``, from the groups it kept (the new
        ones with its delta's keys replaced), else None."""
        assert restriction is not None
        keys = restriction[1]
        known = self._groups.get(seq)
        if known is not None and keys <= known[0]:  # no kept file read again
            found = known[1] if version == "old" else known[2]
            return self._spread(groups({key: found[key] for key in keys if key in found}))
        old = self._kept_groups(seq, keys)
        if old is None:
            return None
        records = groups(old)
        if version == "new":
            self._delta(seq)
            if seq in self._changed:
                changed, new = self._changed[seq]
                assert changed is not None
                records = [r for r in records if r[0] not in changed[1]] + [r for r in new if r[0] in keys]
        return self._spread(records)

    def _kept_outputs(self, kept: KeptCombine) -> list[str] | None:
        return self._reducer_outputs(kept.node)

    def _reducer_outputs(self, node: dict[str, Any]) -> list[str] | None:
        """The files of a combine's output its reduce side kept (``node``: its entry in the kept
        job), or None unless every partition kept it."""
        store = self.job.store
        reducer = store.points.get(node.get("reducer", ""))
        if reducer is None or reducer.kind != "reducer":
            return None
        files = [f"{reducer.location}/{aggregates_name(part)}" for part in range(reducer.num_partitions)]
        return files if all(store.fs.exists(path) for path in files) else None

    # ------------------------------------------------------------------ Spark
    def _apply(self, seq: int, inputs: dict[int, RDD], few: bool = False) -> RDD:
        """Node ``seq``'s recipe on ``inputs`` ({node: RDD}) for the nodes it reads; ``few``: on a
        few partitions (a shuffle replayed on some keys)."""
        spec = self.nodes[str(seq)]["recipe"]
        args = list(spec["args"])
        at = PARTITIONS_ARG.get(spec["method"])
        if few and at is not None and at < len(args):
            args[at] = {"value": self.sc.defaultParallelism}

        def value(argument: Any) -> Any:
            if isinstance(argument, Ref):
                return inputs[argument.node]
            if isinstance(argument, dict) and "ref" in argument:
                return inputs[argument["ref"]]
            return self.build.value(argument)

        recipe = Recipe(Ref(spec["on"]["ref"]), spec["method"], *args, attr=spec["attr"], **spec["kwargs"])
        return recipe.build(self.sc, value)

    def _collected(self, old: RDD, new: RDD) -> tuple[list[Any], list[Any]]:
        """Both RDDs' records, in one Spark job (none when both are records of this process)."""
        if id(old) in self._local and id(new) in self._local:
            return list(self._local[id(old)][1]), list(self._local[id(new)][1])
        found = old.map(Tagged(0)).union(new.map(Tagged(1))).collect()
        return [r for tag, r in found if tag == 0], [r for tag, r in found if tag == 1]

    def _spread(self, records: list[Any]) -> RDD:
        rdd = self.sc.parallelize(records, max(1, min(len(records) // 10_000, self.sc.defaultParallelism)))
        self._local[id(rdd)] = (rdd, records)
        return rdd

    def _spread_pair(self, old: list[Any], new: list[Any]) -> Delta:
        return (self._spread(old), self._spread(new)) if old or new else None
