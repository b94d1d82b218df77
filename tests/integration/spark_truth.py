"""What Spark itself says a job did, read from its status tracker and status store."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class StageTruth:
    """A stage that ran, as Spark's status store knows it."""

    stage_id: int
    num_tasks: int
    rdd_ids: frozenset[int]
    parents: frozenset[int]  # stages of the same job holding the RDDs that feed this one


@contextmanager
def stages_kept(sc: Any) -> Iterator[None]:
    """Spark's status store keeps every stage while this runs. Past spark.ui.retainedStages (1,000)
    it drops stages as others end, skipped ones first (their completion time is -1), graphs and
    all: in the suite's shared session, a job's skipped stages were gone before a test read them
    (NoSuchElementException in operationGraphForJob). The store reads the limit at each clean-up."""
    conf = sc._jsc.sc().conf()  # the SparkContext's own SparkConf, which its status listener reads
    key = "spark.ui.retainedStages"
    before = conf.getOption(key)
    conf.set(key, str(1 << 30))
    try:
        yield
    finally:
        if before.isDefined():
            conf.set(key, before.get())
        else:
            conf.remove(key)


def jobs_of_group(sc: Any, group: str) -> dict[int, list[int]]:
    """Job id -> the stage ids Spark planned for it (run or skipped)."""
    tracker = sc.statusTracker()
    return {job: sorted(tracker.getJobInfo(job).stageIds) for job in sorted(tracker.getJobIdsForGroup(group))}


def stages_that_ran(sc: Any, job_ids: list[int]) -> dict[int, StageTruth]:
    """Stage id -> what ran in it; parents are resolved among the stages of the same job."""
    store = sc._jsc.sc().statusStore()
    tracker = sc.statusTracker()
    truth: dict[int, StageTruth] = {}
    for job in job_ids:
        # The status store draws one graph per stage of the job, in sorted stage-id order.
        stage_ids = sorted(tracker.getJobInfo(job).stageIds)
        graphs = dict(zip(stage_ids, _seq(store.operationGraphForJob(job)), strict=True))
        rdds = {sid: _cluster_rdds(g.rootCluster()) for sid, g in graphs.items()}
        for stage_id, graph in graphs.items():
            if not _ran(tracker, stage_id):
                continue  # skipped: its output was reused
            incoming = frozenset((int(e.fromId()), int(e.toId())) for e in _seq(graph.incomingEdges()))
            parents = frozenset(sid for src, _ in incoming for sid, held in rdds.items() if src in held)
            truth[stage_id] = StageTruth(stage_id, tracker.getStageInfo(stage_id).numTasks, rdds[stage_id], parents)
    return truth


def _ran(tracker: Any, stage_id: int) -> bool:
    info = tracker.getStageInfo(stage_id)
    return info is not None and info.numCompletedTasks > 0


def _cluster_rdds(cluster: Any) -> frozenset[int]:
    ids = {int(node.id()) for node in _seq(cluster.childNodes())}
    for child in _seq(cluster.childClusters()):
        ids |= _cluster_rdds(child)
    return frozenset(ids)


def _seq(scala_seq: Any) -> list[Any]:
    it = scala_seq.iterator()
    out = []
    while it.hasNext():
        out.append(it.next())
    return out
