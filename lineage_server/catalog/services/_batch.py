"""The rows one ingest batch touches: read in bulk before its events apply, written in bulk after.

The event handlers (``_apply``) change Python objects held here instead of the database; ``flush``
then writes each kind of row with one upsert (``INSERT ... ON CONFLICT DO UPDATE``), so a batch
costs a fixed number of queries instead of several per event. The caller holds the lock of every
application in the batch, so the rows of those applications have no other writer until it commits.
Rows shared between applications (datasets, OpenLineage jobs) are written only when they change,
in key order, so two batches never wait on each other's in opposite orders.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar, cast

from django.db.models import Field, Model, Q
from django.utils import timezone

from lineage_server.catalog.models import (
    Application,
    CapturePoint,
    Dataset,
    DatasetIO,
    Job,
    OpenLineageJob,
    OpenLineageRun,
    Operator,
    PythonPipeline,
    Stage,
)

Fields = dict[str, Any]
M = TypeVar("M", bound=Model)

_APPLICATION_FIELDS = ["attempt_id", "name", "user", "spark_version", "master", "spark_conf", "status", "started_at",
                       "ended_at", "finalize_pending", "updated_at"]
_JOB_FIELDS = ["status", "description", "call_site", "job_group", "sql_execution_id", "error", "submitted_at",
               "completed_at"]
_STAGE_FIELDS = ["attempt", "name", "status", "num_tasks", "parent_stage_ids", "call_site", "failure_reason",
                 "metrics", "submitted_at", "completed_at"]
_OPERATOR_FIELDS = ["name", "parent_ids", "scope_id", "scope_name", "call_site", "num_partitions", "cached"]
_CAPTURE_POINT_FIELDS = ["kind", "stage_id", "rdd_id", "location", "rows", "bytes", "parent_capture_ids",
                         "files", "missing_tables", "missing_table_count", "not_captured", "column_lineage"]
# What a dataset's later sighting may change; empty values (None, "", []) never replace known ones.
_DATASET_FIELDS = ["path", "format", "size_bytes", "namespace", "name", "schema_fields"]
_IO_FIELDS = ["size_bytes", "at", "column_lineage"]


class CatalogBatch:
    """Jobs, stages and the other rows of the applications in one batch, as objects until ``flush``."""

    def __init__(self, apps: Iterable[Application]) -> None:
        self.apps = {app.pk: app for app in apps}
        self._jobs: dict[tuple[int, int], Job] = {}
        self._stages: dict[tuple[int, int], Stage] = {}
        self._stage_jobs: set[tuple[tuple[int, int], int]] = set()  # (stage key, job id)
        self._operators: dict[tuple[int, int, int], Fields] = {}  # (app, stage id, rdd id)
        self._pipelines: dict[tuple[int, int], list[Fields]] = {}
        self._capture_points: dict[tuple[int, str], Fields] = {}
        self._datasets: dict[str, Fields] = {}  # dataset key -> fields seen in this batch, merged
        self._ios: list[tuple[str, Fields]] = []  # (dataset key, DatasetIO fields): one row per event
        self._merged_ios: dict[tuple[int, str, str], Fields] = {}  # (app, dataset key, direction): one row per run
        self._ol_jobs: dict[tuple[Any, ...], Fields] = {}  # (team pk, namespace, name) -> facets
        self._ol_runs: dict[int, Fields] = {}  # app pk -> the run's fields, and its job's key
        self._as_loaded: dict[tuple[Any, ...], tuple[Any, ...]] = {}  # (model, app pk, id) -> values when read
        self._apps_as_loaded = {app.pk: _values(app) for app in self.apps.values()}
        self._failed_jobs: set[tuple[int, int]] | None = None  # (app pk, job id) stored failed, read when first asked

    # Reading: the jobs and stages the batch's events name, one query each.

    def load(self, job_ids: dict[int, set[int]], stage_ids: dict[int, set[int]]) -> None:
        """Fetch the named jobs and stages (app pk -> ids); the rest become placeholders when asked for."""
        for job in self._read(Job, "job_id", job_ids):
            self._jobs[(job.application_id, job.job_id)] = job
        for stage in self._read(Stage, "stage_id", stage_ids):
            self._stages[(stage.application_id, stage.stage_id)] = stage

    def _read(self, model: type[M], field: str, wanted: dict[int, set[int]]) -> list[M]:
        query = Q()
        for app_pk, ids in wanted.items():
            if ids:
                query |= Q(application_id=app_pk, **{f"{field}__in": sorted(ids)})
        rows = list(model._default_manager.filter(query)) if query else []
        for row in rows:
            self._as_loaded[(model, row.application_id, getattr(row, field))] = _values(row)  # type: ignore[attr-defined]
        return rows

    def job(self, app: Application, job_id: int) -> Job:
        key = (app.pk, job_id)
        if key not in self._jobs:
            self._jobs[key] = Job(application=app, job_id=job_id)
        return self._jobs[key]

    def stage(self, app: Application, stage_id: int) -> Stage:
        key = (app.pk, stage_id)
        if key not in self._stages:
            self._stages[key] = Stage(application=app, stage_id=stage_id)
        return self._stages[key]

    def has_failed_job(self, app: Application) -> bool:
        """Whether a job of ``app`` failed, counting this batch's changes (the stored failed jobs of all the
        batch's applications are read once)."""
        if any(job.status == "failed" for (app_pk, _), job in self._jobs.items() if app_pk == app.pk):
            return True
        if self._failed_jobs is None:
            self._failed_jobs = set(Job.objects.filter(application__in=list(self.apps), status="failed")
                                    .values_list("application_id", "job_id"))
        return any(key not in self._jobs for key in self._failed_jobs if key[0] == app.pk)

    # Writing: handlers record rows here.

    def link_stage_to_job(self, app: Application, stage_id: int, job_id: int) -> None:
        self.stage(app, stage_id)
        self.job(app, job_id)
        self._stage_jobs.add(((app.pk, stage_id), job_id))

    def put_operator(self, app: Application, stage_id: int, fields: Fields) -> None:
        self._operators[(app.pk, stage_id, fields["rdd_id"])] = fields

    def put_python_pipeline(self, app: Application, rdd_id: int, operators: list[Fields]) -> None:
        self._pipelines[(app.pk, rdd_id)] = operators

    def put_capture_point(self, app: Application, capture_id: str, fields: Fields) -> None:
        self._capture_points[(app.pk, capture_id)] = fields

    def see_dataset(self, key: str, fields: Fields) -> None:
        """A sighting of a dataset; its non-empty fields replace what earlier ones said."""
        merged = self._datasets.setdefault(key, {})
        merged.update({name: value for name, value in fields.items() if value not in (None, "", [])})

    def add_dataset_io(self, app: Application, key: str, fields: Fields) -> None:
        """One more read or write of a dataset (agent events: each is its own event)."""
        self._ios.append((key, {**fields, "application_id": app.pk}))

    def merge_dataset_io(self, app: Application, key: str, direction: str, fields: Fields) -> None:
        """The read or write of a dataset by a run, one row however many of its events repeat it."""
        merged = self._merged_ios.setdefault((app.pk, key, direction), {})
        merged.update({name: value for name, value in fields.items() if value not in (None, {}, [])})

    def put_openlineage_run(self, app: Application, job: tuple[str, str], job_facets: Fields, run: Fields) -> None:
        """The OpenLineage run behind ``app`` and its job (namespace, name); facets merge over earlier events'
        (a facet None is deleted)."""
        self._ol_jobs.setdefault((app.team_id, *job), {}).update(job_facets)
        if not self._ol_runs:  # the first run of the batch: the stored facets of all its runs, one query
            stored = dict(OpenLineageRun.objects.filter(application__in=list(self.apps)).values_list(
                "application_id", "facets"))
            self._ol_runs.update({app_pk: {"facets": stored.get(app_pk, {})} for app_pk in self.apps})
        merged = self._ol_runs[app.pk]
        merged["facets"] = _without_deleted({**merged["facets"], **run["facets"]})
        merged.update({name: value for name, value in run.items() if name != "facets" and value is not None})
        merged["job_key"] = (app.team_id, *job)

    def flush(self) -> None:
        """Write everything the batch's events changed."""
        changed_apps = [app for app in self.apps.values() if _values(app) != self._apps_as_loaded[app.pk]]
        # By primary key, so the rows exist and are updated (bulk_update's CASE per field and row costs ~1 ms a row).
        _upsert(Application, changed_apps, ["pk"], _APPLICATION_FIELDS)
        _upsert(Job, self._changed(Job, self._jobs), ["application", "job_id"], _JOB_FIELDS)
        _upsert(Stage, self._changed(Stage, self._stages), ["application", "stage_id"], _STAGE_FIELDS)
        jobs, stages = self._jobs, self._stages  # every row with its pk now
        links = {(stages[stage].pk, jobs[(stage[0], job_id)].pk) for stage, job_id in self._stage_jobs}
        Stage.jobs.through.objects.bulk_create(
            [Stage.jobs.through(stage_id=s, job_id=j) for s, j in sorted(links)], ignore_conflicts=True
        )
        _upsert(Operator, [Operator(application_id=app_pk, stage_id=stages[(app_pk, stage_id)].pk, **fields)
                           for (app_pk, stage_id, _), fields in self._operators.items()],
                ["stage", "rdd_id"], _OPERATOR_FIELDS)
        _upsert(PythonPipeline, [PythonPipeline(application_id=app_pk, rdd_id=rdd_id, operators=ops)
                                 for (app_pk, rdd_id), ops in self._pipelines.items()],
                ["application", "rdd_id"], ["operators"])
        _upsert(CapturePoint, [CapturePoint(application_id=app_pk, capture_id=capture_id, **fields)
                               for (app_pk, capture_id), fields in self._capture_points.items()],
                ["application", "capture_id"], _CAPTURE_POINT_FIELDS)
        self._flush_openlineage()
        self._flush_datasets()

    def _flush_openlineage(self) -> None:
        if not self._ol_runs:
            return
        jobs = _upsert_shared(OpenLineageJob, ["team", "namespace", "name"], self._ol_jobs,
                              merge=_merge_facets, update=["facets", "updated_at"])
        runs = []
        for app_pk, fields in self._ol_runs.items():
            if "job_key" not in fields:
                continue  # an application of the batch that got no OpenLineage event
            run = {name: value for name, value in fields.items() if name != "job_key"}
            runs.append(OpenLineageRun(application_id=app_pk, job_id=jobs[fields["job_key"]], **run))
        _upsert(OpenLineageRun, runs, ["application"], ["job", "run_id", "parent_run_id", "producer", "facets"])

    def _changed(self, model: type[Model], rows: dict[tuple[int, int], Any]) -> list[Model]:
        """New rows, and read ones the batch changed, without their pks: one upsert by unique key writes both."""
        changed = []
        for key, row in rows.items():
            if self._as_loaded.get((model, *key)) != _values(row):
                row.pk = None
                changed.append(row)
        return changed

    def _flush_datasets(self) -> None:
        if not self._datasets:
            return
        pks = _upsert_shared(Dataset, ["key"], {(key,): fields for key, fields in self._datasets.items()},
                             merge=_merge_dataset, update=[*_DATASET_FIELDS, "updated_at"])
        DatasetIO.objects.bulk_create([DatasetIO(dataset_id=pks[(key,)], **fields) for key, fields in self._ios])
        if self._merged_ios:
            self._flush_merged_ios(pks)

    def _flush_merged_ios(self, pks: dict[tuple[Any, ...], int]) -> None:
        wanted = {(app_pk, pks[(key,)], direction) for app_pk, key, direction in self._merged_ios}
        candidates = DatasetIO.objects.filter(application_id__in={w[0] for w in wanted},
                                              dataset_id__in={w[1] for w in wanted})
        stored = {(io.application_id, io.dataset_id, io.direction): io for io in candidates}
        new, changed = [], []
        for (app_pk, key, direction), fields in self._merged_ios.items():
            io = stored.get((app_pk, pks[(key,)], direction))
            if io is None:
                new.append(DatasetIO(application_id=app_pk, dataset_id=pks[(key,)], direction=direction, **fields))
            else:
                for name, value in fields.items():
                    setattr(io, name, value)
                changed.append(io)
        DatasetIO.objects.bulk_create(new)
        _upsert(DatasetIO, changed, ["pk"], _IO_FIELDS)


def _upsert(model: type[Model], rows: Sequence[Model], unique: list[str], fields: list[str]) -> None:
    """INSERT ... ON CONFLICT (unique) DO UPDATE, one query for all rows; sets the pks of new rows."""
    if rows:
        model._default_manager.bulk_create(rows, update_conflicts=True, unique_fields=unique, update_fields=fields)


Merge = Callable[[Fields | None, Fields], Fields | None]


def _upsert_shared(model: type[Model], unique: list[str], seen: dict[tuple[Any, ...], Fields], merge: Merge,
                   update: list[str]) -> dict[tuple[Any, ...], int]:
    """Rows applications share (datasets): their pks by key, written only when new or changed.

    ``seen`` maps keys (values of ``unique``) to what the batch says; ``merge(stored, said)`` gives
    the row's fields to write, or None when it changes nothing. New and changed rows go in one
    upsert in key order, so two batches lock shared rows in the same order, and a row another
    batch inserted meanwhile is updated instead.
    """
    columns = [_column(model, name) for name in unique]
    # Each column among the values seen (a superset of the keys, one plain query), then the keys themselves.
    candidates = model._default_manager.filter(
        **{f"{column}__in": {key[n] for key in seen} for n, column in enumerate(columns)})
    stored = {key: row for row in candidates.values() if (key := tuple(row[c] for c in columns)) in seen}
    pks = {key: row["id"] for key, row in stored.items()}
    writes = []
    for key in sorted(seen):
        fields = merge(stored.get(key), seen[key])
        if fields is not None:
            writes.append(model(**dict(zip(columns, key, strict=True)), **fields))
    if writes:
        model._default_manager.bulk_create(writes, update_conflicts=True, unique_fields=unique, update_fields=update)
        pks.update({tuple(getattr(row, c) for c in columns): row.pk for row in writes})
    return pks


def _merge_dataset(stored: Fields | None, said: Fields) -> Fields | None:
    if stored is not None and all(stored[name] == value for name, value in said.items()):
        return None
    base = {name: stored[name] for name in _DATASET_FIELDS} if stored is not None else {}
    return {**base, **said, "updated_at": timezone.now()}


def _merge_facets(stored: Fields | None, facets: Fields) -> Fields | None:
    if stored is not None and all(stored["facets"].get(name) == value for name, value in facets.items()):
        return None
    merged = _without_deleted({**(stored["facets"] if stored else {}), **facets})
    return {"facets": merged, "updated_at": timezone.now()}


def _without_deleted(facets: Fields) -> Fields:
    return {name: value for name, value in facets.items() if value is not None}


def _column(model: type[Model], name: str) -> str:
    return cast(Field, model._meta.get_field(name)).attname


def _values(row: Model) -> tuple[Any, ...]:
    return tuple(getattr(row, field.attname) for field in row._meta.concrete_fields)


def by_application(values: Iterable[tuple[int, int]]) -> dict[int, set[int]]:
    """(app pk, id) pairs grouped as app pk -> ids."""
    grouped: dict[int, set[int]] = defaultdict(set)
    for app_pk, value in values:
        grouped[app_pk].add(value)
    return grouped
