"""Delete applications' lineage: database rows and lineage store files together."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path, PurePath, PurePosixPath

from django.apps import apps
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from lineage_server.accounts.services import record_audit
from lineage_server.catalog import store_files
from lineage_server.catalog.models import Application, Dataset

log = logging.getLogger("lineage_server.catalog")


@dataclass
class ApplicationDeletion:
    """What deleting one application removes (``removed`` is filled in once the files are gone)."""

    app_id: str
    rows: int = 0
    paths: list[PurePath] = field(default_factory=list)  # local Paths, or paths of a shared store
    refused: list[str] = field(default_factory=list)
    removed: list[PurePath] = field(default_factory=list)


def plan_deletion(app: Application) -> ApplicationDeletion:
    """The store paths deleting ``app`` would remove, and the locations it would leave alone."""
    plan = ApplicationDeletion(app_id=app.app_id)
    locations = list(app.capture_points.values_list("location", flat=True))
    # The traces' answers (in the run folders, but a run folder outside the store root is kept).
    locations += apps.get_model("tracing", "Trace").objects.filter(application=app).exclude(result_location="") \
        .values_list("result_location", flat=True)
    root = store_files.local_root(settings.LINEAGE["STORE"])
    if root is None:
        return _plan_remote(plan, app.app_id, locations)
    paths: list[PurePath] = []
    app_folder = store_files.inside_root(root, str(root / app.app_id))
    if app_folder is not None and app_folder.exists():
        paths.append(app_folder)
    for location in locations:
        path = store_files.inside_root(root, location)
        if path is None:
            plan.refused.append(location)
            continue
        run_folder = store_files.run_folder_of(root, path, app.app_id)
        paths.extend(p for p in (run_folder, path) if p is not None and p.exists())
    plan.paths = store_files.outermost(paths)
    return plan


def _plan_remote(plan: ApplicationDeletion, app_id: str, locations: list[str]) -> ApplicationDeletion:
    """The same plan on a shared file system (``s3://``, ``gs://``, ``hdfs://``): run folders whose
    manifest names the application, and capture point folders inside the root."""
    store = store_files.remote_store(settings.LINEAGE["STORE"])
    assert store is not None
    paths: list[PurePosixPath] = []
    app_folder = PurePosixPath(store.root) / app_id
    if store.is_dir(str(app_folder)):
        paths.append(app_folder)
    for location in locations:
        path = store_files.remote_inside(store, location)
        if path is None:
            plan.refused.append(location)
            continue
        run_folder = store_files.remote_run_folder(store, path, app_id)
        paths.extend(p for p in (run_folder, path) if p is not None and store.exists(str(p)))
    plan.paths = list(store_files.outermost(paths))
    return plan


def shown_path(path: PurePath) -> str:
    """A planned path as users know it: a local path, or the store URL of a shared store."""
    store = store_files.remote_store(settings.LINEAGE["STORE"])
    return str(path) if store is None else store.uri(str(path))


@transaction.atomic
def delete_application(app: Application, *, by: AbstractBaseUser | str | None = None) -> ApplicationDeletion:
    """Delete an application's rows (and datasets no other application uses), then its store files.

    The files go only once the transaction has committed, so a rolled-back deletion keeps them;
    locations outside the configured store root are never touched.
    """
    # Waits for an event of this application being applied, and holds off the next ones.
    app = Application.objects.select_for_update().select_related("team").get(pk=app.pk)
    plan = plan_deletion(app)
    dataset_ids = set(app.dataset_ios.values_list("dataset_id", flat=True))
    deleted, _ = app.delete()
    orphans, _ = Dataset.objects.filter(pk__in=dataset_ids, ios__isnull=True).delete()
    plan.rows = deleted + orphans
    record_audit(
        "application.delete",
        actor=by,
        team=app.team,
        target=plan.app_id,
        rows=plan.rows,
        store_paths=[shown_path(p) for p in plan.paths],
        left_in_place=plan.refused,
    )
    for location in plan.refused:
        log.warning("%s: left %s in place: it is not inside the lineage store", plan.app_id, location)
    if plan.paths:
        transaction.on_commit(lambda: plan.removed.extend(_remove(plan.paths)))
    return plan


def _remove(paths: list[PurePath]) -> list[PurePath]:
    """Deletes planned paths, checking each again (after the rows' transaction committed)."""
    root = store_files.local_root(settings.LINEAGE["STORE"])
    if root is not None:
        return list(store_files.remove_paths(root, [Path(p) for p in paths]))
    store = store_files.remote_store(settings.LINEAGE["STORE"])
    assert store is not None
    return list(store_files.remove_remote(store, [PurePosixPath(p) for p in paths]))
