"""How a what-if's rerun computes the new output: one class per strategy, tried in the order of
``STRATEGIES``; the first that gives rows is the one ``summary.replay.how`` names.

| name | applies when | computes |
|---|---|---|
| frame-query | the output is a DataFrame query's | its kept plan again, its sources filtering out the deleted rows |
| selective | the deletion touches some partitions only | those partitions, merged with the aggregates the others kept |
| restricted | a combine the deletion reaches kept its aggregates | each later stage on the touched keys only |
| from-aggregates | as restricted, when it cannot run on keys | the stages after each combine, on its kept aggregates |
| whole-job | always | the whole job again on the input without the deleted records |

Each strategy also says how it computed each stage it touched (``Replay.stage_paths``, {"op
#node": a ``stage_paths`` name}: ``subtracted``, ``recombined``, ``keys``, ``in-full``).

Both paths consult the registry: a run opened from its folder (``StoredJob.rerun``, the worker's)
and the process that ran the job (``LineageContext``'s what-ifs, ``in_process``). Adding a
strategy is adding a class here (and a row above).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pyroaring import BitMap64

from capture_agent.record.query.delta import DeltaReplay
from capture_agent.record.query.engine import Frontier
from capture_agent.record.query.selective import aggregated_combines, selective_rerun
from capture_agent.record.query.stage_paths import Recombined


@dataclass
class Replay:
    """One rerun's question, and what each path has to answer it: the kept job (``job``, a
    ``stored_job.StoredJob``: a run's folder, or the job's own process when it kept its functions)
    and, in the job's own process, its DataFrame query's replay (``frame_redo``) and the whole
    action again (``whole``). ``dead``: the target's ids lineage says die; ``fates``: those of
    every capture point the deletion reached ({capture id: ids})."""

    target: str
    deleted: Frontier
    dead: BitMap64 | None = None
    fates: Frontier | None = None
    job: Any = None
    frame_redo: Callable[[Frontier], Iterable[Any]] | None = None  # in the job's process only
    whole: Callable[[], list[Any]] | None = None  # in the job's process only
    keys_replayed: dict[str, int] = field(default_factory=dict)  # restricted: keys per combine and later shuffle
    stages_in_full: list[str] = field(default_factory=list)  # restricted: later shuffles needed whole
    stage_paths: dict[str, str] = field(default_factory=dict)  # {"op #node": stage_paths name}


class ReplayStrategy:
    name: ClassVar[str]
    description: ClassVar[str]

    def rows(self, replay: Replay) -> list[Any] | None:
        """The target's new rows, or None when this strategy does not apply."""
        raise NotImplementedError


class FrameQuery(ReplayStrategy):
    name = "frame-query"
    description = "the DataFrame query again, its sources filtering out the deleted rows"

    def rows(self, replay: Replay) -> list[Any] | None:
        if replay.frame_redo is not None:
            return list(replay.frame_redo(replay.deleted))
        if replay.whole is None and replay.job is not None and replay.target in replay.job.job.get("frames", {}):
            return replay.job.frame_rows(replay.target, replay.deleted)
        return None


class Selective(ReplayStrategy):
    name = "selective"
    description = "only the partitions the deletion touches, merged with the aggregates the others kept"

    def rows(self, replay: Replay) -> list[Any] | None:
        if replay.job is None:
            return None
        paths: dict[str, str] = {}
        found = selective_rerun(replay.job, replay.job.build(replay.deleted), replay.target, replay.deleted,
                                replay.dead, paths)
        if found is not None:
            replay.stage_paths = paths
        return found


class Restricted(ReplayStrategy):
    name = "restricted"
    description = ("the keys the deletion touches only, at each combine and each later shuffle, the other keys' "
                   "output taken from the kept one")

    def rows(self, replay: Replay) -> list[Any] | None:
        if replay.job is None:
            return None
        delta = DeltaReplay(replay.job, replay.job.build(replay.deleted), replay.deleted, replay.fates)
        found = delta.run(replay.target)
        if found is not None:
            replay.keys_replayed, replay.stages_in_full = delta.keys_replayed, delta.stages_in_full
            replay.stage_paths = delta.paths
        return found


class FromAggregates(ReplayStrategy):
    name = "from-aggregates"
    description = "the stages after each combine the deletion reaches, run on its kept aggregates"

    def rows(self, replay: Replay) -> list[Any] | None:
        if replay.job is None:
            return None
        given = aggregated_combines(replay.job, replay.job.build(replay.deleted), replay.deleted)
        if not given:
            return None
        found = replay.job.redo(replay.target, replay.job.build(replay.deleted, given))
        nodes = replay.job.job["nodes"]
        replay.stage_paths = {f"{nodes[str(seq)]['op']} #{seq}": Recombined.name for seq in given}
        return found


class WholeJob(ReplayStrategy):
    name = "whole-job"
    description = "the whole job again, on the input without the deleted records"

    def rows(self, replay: Replay) -> list[Any] | None:
        if replay.whole is not None:
            return replay.whole()
        if replay.job is None:
            return None
        return replay.job.redo(replay.target, replay.job.build(replay.deleted))


STRATEGIES: tuple[ReplayStrategy, ...] = (FrameQuery(), Selective(), Restricted(), FromAggregates(), WholeJob())
FROM_KEPT = STRATEGIES[1:4]  # those that let what capture kept stand in for work


def replayed(replay: Replay, strategies: tuple[ReplayStrategy, ...] = STRATEGIES
             ) -> tuple[list[Any], ReplayStrategy] | None:
    """The new rows by the first of ``strategies`` that applies, and that strategy; None if none did."""
    for strategy in strategies:
        found = strategy.rows(replay)
        if found is not None:
            return found, strategy
    return None


def report(replay: Replay | None, strategy: ReplayStrategy | None) -> dict[str, Any]:
    """A what-if summary's ``replay`` fields: ``how`` (the strategy's name), ``description``,
    ``keys_replayed``, ``stages_in_full`` and ``stage_paths`` ({"op #node": the
    ``stage_paths`` name of how that stage was computed})."""
    paths = replay.stage_paths if replay else {}
    return {"how": strategy.name if strategy else "", "description": strategy.description if strategy else "",
            "keys_replayed": dict(replay.keys_replayed) if replay else {},
            "stages_in_full": list(replay.stages_in_full) if replay else [],
            "stage_paths": dict(paths)}
