"""Delete applications' lineage: database rows and lineage store files together."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

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
    paths: list[Path] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    removed: list[Path] = field(default_factory=list)


def plan_deletion(app: Application) -> ApplicationDeletion:
    """The store paths deleting ``app`` would remove, and the locations it would leave alone."""
    plan = ApplicationDeletion(app_id=app.app_id)
    locations = list(app.capture_points.values_list("location", flat=True))
    root = store_files.local_root(settings.LINEAGE["STORE"])
    if root is None:
        plan.refused = locations  # not a local file system: the server cannot delete there
        return plan
    paths: list[Path] = []
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
        store_paths=[str(p) for p in plan.paths],
        left_in_place=plan.refused,
    )
    for location in plan.refused:
        log.warning("%s: left %s in place: it is not inside the lineage store", plan.app_id, location)
    root = store_files.local_root(settings.LINEAGE["STORE"])
    if root is not None and plan.paths:
        transaction.on_commit(lambda: plan.removed.extend(store_files.remove_paths(root, plan.paths)))
    return plan
