"""The graph of one application as nodes and edges, nested for zooming (Lipstick's ZoomIn/ZoomOut):

    application -> jobs -> stages -> operators -> capture points

each level a compound node holding the next (``parent``), and datasets outside them all. A stage
run by several jobs (Spark skips a stage whose shuffle output an earlier job made) sits in the
first job that ran it; a stage no job claims sits in the application. An RDD can run in several
stages (a cached RDD read again, a shuffle's map side), so an operator node is a (stage, rdd) pair.
Edges follow each operator's parent RDDs: inside a stage they are narrow dependencies; to an RDD of
a parent stage they are shuffles (or reads of a cached RDD). A capture point (a record-level
association table) sits in the operator of its (stage, rdd), else in its stage, else in the
application, and ``capture`` edges follow its parent capture points. The record-level agent reports
a point's RDD but not its Spark stage: such a point sits in that RDD's operator in the first stage
running it. A client collapsing a node
draws the edges of what it hides on the node itself (frontend ``zoom.js``).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from lineage_server.catalog.identities import (
    APPLICATION_NODE,
    CapturePointKey,
    DatasetKey,
    JobKey,
    OperatorKey,
    StageKey,
)
from lineage_server.catalog.models import (
    Application,
    CapturePoint,
    DatasetIO,
    Job,
    Operator,
    PythonPipeline,
    Stage,
)


class _Op(NamedTuple):
    """An operator's columns the graph draws (read as tuples: model instances cost a third of a
    5,000-operator graph's answer)."""

    stage_id: int  # the Stage row's pk
    rdd_id: int
    name: str
    scope_name: str
    call_site: str
    num_partitions: int
    cached: bool
    parent_ids: list[int]


_OP_FIELDS = ("stage_id", "rdd_id", "name", "scope_name", "call_site", "num_partitions", "cached", "parent_ids")


@dataclass
class ApplicationGraph:
    """Nodes and edges ready for the API (see the graph endpoint's schema)."""

    application: Application
    nodes: list[dict[str, Any]] = field(default_factory=list)
    edges: list[dict[str, Any]] = field(default_factory=list)
    _edge_ids: set[str] = field(default_factory=set, repr=False)

    def add_edge(self, source: str, target: str, kind: str) -> None:
        """Add an edge once: two records of the same link (two events, an RDD twice a parent) give one edge."""
        edge_id = f"{source}->{target}"
        if edge_id not in self._edge_ids:
            self._edge_ids.add(edge_id)
            self.edges.append({"id": edge_id, "source": source, "target": target, "kind": kind})


def application_graph(app: Application) -> ApplicationGraph:
    """Build the graph with a fixed number of queries, whatever the application's size."""
    graph = ApplicationGraph(app)
    stages = list(Stage.objects.filter(application=app))
    operators = [_Op(*row) for row in Operator.objects.filter(application=app).order_by("stage_id", "rdd_id")
                 .values_list(*_OP_FIELDS)]
    pipelines = {p.rdd_id: p.operators for p in PythonPipeline.objects.filter(application=app)}
    ios = list(DatasetIO.objects.filter(application=app).select_related("dataset").order_by("id"))

    jobs = list(Job.objects.filter(application=app))
    points = list(CapturePoint.objects.filter(application=app))
    jobs_of = _jobs_by_stage(app, jobs)

    stage_ids = {s.pk: s.stage_id for s in stages}
    ops_by_stage: dict[int, list[_Op]] = defaultdict(list)
    for op in operators:
        ops_by_stage[stage_ids[op.stage_id]].append(op)
    graph.nodes.append(_application_node(app))
    job_nodes = {job.job_id: _job_node(job) for job in jobs}
    for stage in stages:  # jobs known only from their stages' events still get a node
        for job in jobs_of[stage.pk]:
            job_nodes.setdefault(job.job_id, _job_node(job))
    graph.nodes.extend(job_nodes[jid] for jid in sorted(job_nodes))
    for stage in stages:
        graph.nodes.append(_stage_node(stage, jobs_of[stage.pk], job_nodes))
        for op in ops_by_stage[stage.stage_id]:
            graph.nodes.append(_operator_node(stage.stage_id, op, pipelines.get(op.rdd_id, [])))

    _add_operator_edges(graph, stages, ops_by_stage)
    _add_capture_points(graph, points, ops_by_stage)
    _add_dataset_nodes(graph, ios, stages, jobs_of, ops_by_stage)
    return graph


def _jobs_by_stage(app: Application, jobs: list[Job]) -> dict[int, list[Job]]:
    """Each stage's jobs by the stage's pk, from one query of the link table (a prefetch made a
    queryset per stage)."""
    by_pk = {job.pk: job for job in jobs}
    held: dict[int, list[Job]] = defaultdict(list)
    for stage_pk, job_pk in Stage.jobs.through.objects.filter(stage__application=app).values_list("stage_id",
                                                                                                   "job_id"):
        if job_pk in by_pk:
            held[stage_pk].append(by_pk[job_pk])
    return held


def _application_node(app: Application) -> dict[str, Any]:
    return {
        "id": APPLICATION_NODE,
        "kind": "application",
        "label": app.name or app.app_id,
        "parent": None,
        "data": {"app_id": app.app_id, "name": app.name, "status": app.status},
    }


def _job_node(job: Job) -> dict[str, Any]:
    return {
        "id": JobKey(job.job_id).node_id(),
        "kind": "job",
        "label": f"Job {job.job_id}: {job.description}" if job.description else f"Job {job.job_id}",
        "parent": APPLICATION_NODE,
        "data": {
            "job_id": job.job_id,
            "status": job.status,
            "description": job.description,
            "call_site": job.call_site,
            "job_group": job.job_group,
            "error": job.error,
            "submitted_at": job.submitted_at.isoformat() if job.submitted_at else None,
            "completed_at": job.completed_at.isoformat() if job.completed_at else None,
        },
    }


def _add_capture_points(graph: ApplicationGraph, points: list[CapturePoint],
                        ops_by_stage: dict[int, list[_Op]]) -> None:
    operators = {(sid, op.rdd_id) for sid, ops in ops_by_stage.items() for op in ops}
    first_stages = _first_stages(ops_by_stage)
    known = {p.capture_id for p in points}
    for point in points:
        first = _operator_of(point.rdd_id, first_stages) if point.stage_id is None else None
        if point.stage_id is not None and (point.stage_id, point.rdd_id) in operators:
            parent = OperatorKey(point.stage_id, point.rdd_id).node_id()  # type: ignore[arg-type]
        elif point.stage_id is not None and point.stage_id in ops_by_stage:
            parent = StageKey(point.stage_id).node_id()
        elif first is not None:  # the agent knows the RDD, not the stage: the first stage running it
            parent = first
        else:
            parent = APPLICATION_NODE
        key = CapturePointKey(point.capture_id)
        node_id = key.node_id()
        graph.nodes.append({
            "id": node_id,
            "kind": "capture",
            "label": key.title(point.kind, point.files),
            "parent": parent,
            "data": {
                "capture_id": point.capture_id,
                "capture_kind": point.kind,
                "stage_id": point.stage_id,
                "rdd_id": point.rdd_id,
                "rows": point.rows,
                "bytes": point.bytes,
                "files": point.files,
                "lineage_complete": point.missing_table_count == 0,
                "not_captured": point.not_captured,
            },
        })
        for parent_id in point.parent_capture_ids:
            if parent_id in known:
                graph.add_edge(CapturePointKey(parent_id).node_id(), node_id, "capture")


def _stage_node(stage: Stage, jobs: list[Job], job_nodes: dict[int, dict[str, Any]]) -> dict[str, Any]:
    job_ids = sorted(job.job_id for job in jobs)
    return {
        "id": StageKey(stage.stage_id).node_id(),
        "kind": "stage",
        "label": f"Stage {stage.stage_id}: {stage.name}" if stage.name else f"Stage {stage.stage_id}",
        "parent": job_nodes[job_ids[0]]["id"] if job_ids else APPLICATION_NODE,
        "data": {
            "stage_id": stage.stage_id,
            "attempt": stage.attempt,
            "name": stage.name,
            "status": stage.status,
            "num_tasks": stage.num_tasks,
            "job_ids": job_ids,
            "parent_stage_ids": stage.parent_stage_ids,
            "call_site": stage.call_site,
            "failure_reason": stage.failure_reason,
            "metrics": stage.metrics,
            "submitted_at": stage.submitted_at.isoformat() if stage.submitted_at else None,
            "completed_at": stage.completed_at.isoformat() if stage.completed_at else None,
        },
    }


def _operator_node(stage_id: int, op: _Op, python_ops: list[dict[str, str]]) -> dict[str, Any]:
    label = f"{op.scope_name or op.name} [{op.rdd_id}]"
    if python_ops:
        label = " → ".join(p["name"] for p in python_ops) + f" [{op.rdd_id}]"
    return {
        "id": OperatorKey(stage_id, op.rdd_id).node_id(),
        "kind": "operator",
        "label": label,
        "parent": StageKey(stage_id).node_id(),
        "data": {
            "rdd_id": op.rdd_id,
            "name": op.name,
            "scope_name": op.scope_name,
            "call_site": op.call_site,
            "num_partitions": op.num_partitions,
            "cached": op.cached,
            "parent_ids": op.parent_ids,
            "python_operators": python_ops,
        },
    }


def _add_operator_edges(graph: ApplicationGraph, stages: list[Stage], ops_by_stage: dict[int, list[_Op]]) -> None:
    by_id = {s.stage_id: s for s in stages}
    rdds_in = {sid: {op.rdd_id for op in ops} for sid, ops in ops_by_stage.items()}
    linked: set[tuple[int, int]] = set()
    for stage in stages:
        sid = stage.stage_id
        for op in ops_by_stage[sid]:
            for parent in op.parent_ids:
                if parent in rdds_in.get(sid, ()):
                    graph.add_edge(OperatorKey(sid, parent).node_id(), OperatorKey(sid, op.rdd_id).node_id(), "narrow")
                    continue
                for parent_sid in _stages_holding(parent, stage, by_id, rdds_in):
                    graph.add_edge(
                        OperatorKey(parent_sid, parent).node_id(), OperatorKey(sid, op.rdd_id).node_id(), "shuffle"
                    )
                    linked.add((parent_sid, sid))
    # Stages whose operators are unknown still show their dependencies.
    for stage in stages:
        for parent_sid in stage.parent_stage_ids:
            if parent_sid in by_id and (parent_sid, stage.stage_id) not in linked:
                graph.add_edge(StageKey(parent_sid).node_id(), StageKey(stage.stage_id).node_id(), "stage")


def _stages_holding(rdd_id: int, stage: Stage, by_id: dict[int, Stage], rdds_in: dict[int, set[int]]) -> list[int]:
    """The stage(s) an RDD outside ``stage`` comes from: its parent stages first, else any earlier one."""
    parents = [p for p in stage.parent_stage_ids if rdd_id in rdds_in.get(p, ())]
    if parents:
        return parents[:1]
    earlier = [sid for sid in sorted(rdds_in) if sid < stage.stage_id and rdd_id in rdds_in[sid]]
    return earlier[-1:] if earlier else []


def _add_dataset_nodes(
    graph: ApplicationGraph,
    ios: list[DatasetIO],
    stages: list[Stage],
    jobs_of: dict[int, list[Job]],
    ops_by_stage: dict[int, list[_Op]],
) -> None:
    seen: dict[int, dict[str, Any]] = {}
    first_stages = _first_stages(ops_by_stage)
    jobs_stages: dict[int, list[Stage]] = defaultdict(list)
    sql_jobs: dict[int, list[int]] = defaultdict(list)
    for stage in stages:
        for job in jobs_of[stage.pk]:
            jobs_stages[job.job_id].append(stage)
            if job.sql_execution_id is not None and job.job_id not in sql_jobs[job.sql_execution_id]:
                sql_jobs[job.sql_execution_id].append(job.job_id)

    for io in ios:
        ds = io.dataset
        node_id = DatasetKey(ds.pk).node_id()
        if ds.pk not in seen:
            seen[ds.pk] = {
                "id": node_id,
                "kind": "dataset",
                "label": ds.path,
                "parent": None,
                "data": {"path": ds.path, "format": ds.format, "directions": [], "size_bytes": ds.size_bytes},
            }
            graph.nodes.append(seen[ds.pk])
        directions = seen[ds.pk]["data"]["directions"]
        if io.direction not in directions:
            directions.append(io.direction)
        for target in _io_targets(io, jobs_stages, sql_jobs, first_stages):
            if io.direction == "read":
                graph.add_edge(node_id, target, "read")
            else:
                graph.add_edge(target, node_id, "write")


def _first_stages(ops_by_stage: dict[int, list[_Op]]) -> dict[int, int]:
    """RDD id -> the first stage running it."""
    first: dict[int, int] = {}
    for sid in sorted(ops_by_stage, reverse=True):
        for op in ops_by_stage[sid]:
            first[op.rdd_id] = sid
    return first


def _operator_of(rdd_id: int | None, first_stages: dict[int, int]) -> str | None:
    """The operator node of an RDD in the first stage that runs it, or None (no such operator)."""
    if rdd_id is None or rdd_id not in first_stages:
        return None
    return OperatorKey(first_stages[rdd_id], rdd_id).node_id()


def _io_targets(
    io: DatasetIO,
    jobs_stages: dict[int, list[Stage]],
    sql_jobs: dict[int, list[int]],
    first_stages: dict[int, int],
) -> list[str]:
    """Where a dataset edge attaches: the reading RDD if known, else the job's first or last stages."""
    first = _operator_of(io.rdd_id, first_stages)
    if first is not None:
        return [first]
    if io.job_id is not None:
        job_ids = [io.job_id]
    elif io.sql_execution_id is not None:
        job_ids = sql_jobs.get(io.sql_execution_id, [])
    else:
        job_ids = []
    ran = [s for jid in job_ids for s in jobs_stages.get(jid, []) if s.status != "skipped"]
    if not ran:
        return []
    if io.direction == "read":
        ran_ids = {s.stage_id for s in ran}
        roots = [s for s in ran if not set(s.parent_stage_ids) & ran_ids]
        return sorted({StageKey(s.stage_id).node_id() for s in roots})
    last = max(ran, key=lambda s: s.stage_id)
    return [StageKey(last.stage_id).node_id()]
