"""Retention: deleting an application removes its rows and its lineage store files, and nothing else."""

from __future__ import annotations

import json
import time
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import transaction

from lineage_server.catalog.models import (
    Application,
    CapturePoint,
    Dataset,
    DatasetIO,
    IngestedEvent,
    Job,
    Operator,
    PythonPipeline,
    Stage,
)
from lineage_server.catalog.services import delete_application
from tests.lineage_server.events import T0, event, word_count_with_join

pytestmark = pytest.mark.django_db


@pytest.fixture
def store(settings: Any, tmp_path: Path) -> Path:
    """An empty lineage store root, configured as the server's."""
    root = tmp_path / "store"
    root.mkdir()
    settings.LINEAGE = {**settings.LINEAGE, "STORE": str(root)}
    return root


def _table(folder: Path) -> Path:
    """A capture point's folder holding one association table."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "part-00000.parquet").write_bytes(b"PAR1")
    return folder


def _capture_point(app_id: str, capture_id: str, location: str, t: int = 50) -> dict[str, Any]:
    return event(
        "capture_point",
        app_id,
        t,
        f"capture_point:{capture_id}",
        capture_id=capture_id,
        kind="stage",
        location=location,
        rows=1,
        bytes=4,
        parents=[],
    )


def _application(post_events: Any, app_id: str, *extra: dict[str, Any], ended_ago_ms: int | None = None) -> None:
    """The two-job test application plus ``extra`` events; ending ``ended_ago_ms`` before now when given."""
    events = word_count_with_join(app_id) + list(extra)
    if ended_ago_ms is not None:
        now = int(time.time() * 1000)
        events = [e for e in events if e["type"] != "application_end"]
        events.append(event("application_end", app_id, now - ended_ago_ms - T0))
    response = post_events(events)
    assert response.status_code == 200, response.content


def _rows_of(app_id: str) -> dict[str, int]:
    return {
        model.__name__: model.objects.filter(application__app_id=app_id).count()
        for model in (Job, Stage, Operator, DatasetIO, IngestedEvent, CapturePoint, PythonPipeline)
    }


def test_deleting_an_application_removes_its_rows_and_store_files_only(
    post_events, store, tmp_path, django_capture_on_commit_callbacks
):
    outside = _table(tmp_path / "elsewhere" / "cp-out")
    inside = _table(store / "local-1" / "cp-0")
    other_app = _table(store / "local-2" / "cp-0")
    written = event("dataset_io", "local-1", 40, path="file:/out/only-local-1", direction="written", job_id=0)
    _application(
        post_events,
        "local-1",
        written,
        _capture_point("local-1", "cp-0", str(inside)),
        _capture_point("local-1", "cp-out", f"file:{outside}"),
    )
    _application(post_events, "local-2", _capture_point("local-2", "cp-0", str(other_app)))
    kept = _rows_of("local-2")

    with django_capture_on_commit_callbacks(execute=True):
        deletion = delete_application(Application.objects.get(app_id="local-1"))

    assert not Application.objects.filter(app_id="local-1").exists()
    assert set(_rows_of("local-1").values()) == {0}
    assert _rows_of("local-2") == kept and kept["Stage"] == 2
    # The input both applications read stays; the output only local-1 wrote goes with it.
    assert set(Dataset.objects.values_list("path", flat=True)) == {"file:/data/in.txt"}
    assert not (store / "local-1").exists()
    assert deletion.removed == [store / "local-1"]
    assert other_app.exists()
    assert outside.exists() and deletion.refused == [f"file:{outside}"]


def test_locations_escaping_the_store_by_dots_or_symlinks_are_never_followed(
    post_events, store, tmp_path, django_capture_on_commit_callbacks
):
    victim = _table(tmp_path / "victim")
    (store / "local-1").mkdir()
    (store / "local-1" / "link").symlink_to(victim, target_is_directory=True)
    (store / "linked-run").symlink_to(tmp_path, target_is_directory=True)
    escapes = [
        str(store / "local-1" / ".." / ".." / "victim"),
        str(store / "local-1" / "link"),
        str(store / "linked-run" / "victim"),
        "relative/victim",
        "hdfs://nn/victim",
        str(store),
    ]
    _application(post_events, "local-1", *[_capture_point("local-1", f"cp-{i}", p) for i, p in enumerate(escapes)])

    with django_capture_on_commit_callbacks(execute=True):
        deletion = delete_application(Application.objects.get(app_id="local-1"))

    assert sorted(deletion.refused) == sorted(escapes)
    assert victim.exists() and (victim / "part-00000.parquet").exists()
    assert store.exists() and (store / "linked-run").is_symlink()
    # The application's own folder goes; the symlink in it is removed, not followed.
    assert deletion.removed == [store / "local-1"] and not (store / "local-1").exists()


def test_a_renamed_run_folder_goes_when_its_manifest_names_the_application(
    post_events, store, django_capture_on_commit_callbacks
):
    mine = _table(store / "app-7_1-2" / "cp-0")
    (store / "app-7_1-2" / "run.json").write_text(json.dumps({"app_id": "app-7:1"}))
    theirs = _table(store / "shared" / "cp-9")
    (store / "shared" / "run.json").write_text(json.dumps({"app_id": "someone-else"}))
    _application(
        post_events,
        "app-7:1",
        _capture_point("app-7:1", "cp-0", str(mine)),
        _capture_point("app-7:1", "cp-9", str(theirs)),
    )

    with django_capture_on_commit_callbacks(execute=True):
        deletion = delete_application(Application.objects.get(app_id="app-7:1"))

    assert deletion.removed == [store / "app-7_1-2", theirs]
    assert not (store / "app-7_1-2").exists()
    assert (store / "shared" / "run.json").exists() and not theirs.exists()


def test_files_stay_when_the_deletion_is_rolled_back(post_events, store, django_capture_on_commit_callbacks):
    table = _table(store / "local-1" / "cp-0")
    _application(post_events, "local-1", _capture_point("local-1", "cp-0", str(table)))

    with django_capture_on_commit_callbacks(execute=True) as callbacks, pytest.raises(RuntimeError):
        with transaction.atomic():
            delete_application(Application.objects.get(app_id="local-1"))
            raise RuntimeError("the deletion fails after the rows went")

    assert callbacks == []
    assert Application.objects.filter(app_id="local-1").exists()
    assert (table / "part-00000.parquet").exists()


# The commands below run as in production: each deletion commits, then its files go.
commands = pytest.mark.django_db(transaction=True)


def _run(command: str, *args: str) -> str:
    out = StringIO()
    call_command(command, *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def three_applications(post_events: Any, store: Path) -> dict[str, Path]:
    """Applications that ended a year ago, an hour ago, and one that never reported its end."""
    tables = {app_id: _table(store / app_id / "cp-0") for app_id in ("local-old", "local-new", "local-open")}
    _application(post_events, "local-old", _capture_point("local-old", "cp-0", str(tables["local-old"])))
    _application(
        post_events, "local-new", _capture_point("local-new", "cp-0", str(tables["local-new"])), ended_ago_ms=3_600_000
    )
    open_events = [e for e in word_count_with_join("local-open") if e["type"] != "application_end"]
    assert (
        post_events(open_events + [_capture_point("local-open", "cp-0", str(tables["local-open"]))]).status_code == 200
    )
    return tables


@commands
def test_prune_deletes_only_applications_that_ended_before_the_period(three_applications, store):
    out = _run("prune_applications", "--days", "30")

    assert sorted(Application.objects.values_list("app_id", flat=True)) == ["local-new", "local-open"]
    assert not (store / "local-old").exists()
    assert three_applications["local-new"].exists() and three_applications["local-open"].exists()
    assert "deleted local-old" in out and f"removed {store / 'local-old'}" in out
    assert "deleted 1 applications" in out


@commands
def test_prune_dry_run_prints_and_deletes_nothing(three_applications, store):
    out = _run("prune_applications", "--days", "30", "--dry-run")

    assert Application.objects.count() == 3
    assert all(table.exists() for table in three_applications.values())
    assert f"would delete local-old\n  would remove {store / 'local-old'}" in out
    assert "local-new" not in out and "would delete 1 applications" in out


@commands
def test_prune_defaults_to_the_retention_setting(three_applications, settings):
    settings.LINEAGE = {**settings.LINEAGE, "RETENTION_DAYS": 30}
    _run("prune_applications")
    assert not Application.objects.filter(app_id="local-old").exists()
    assert Application.objects.count() == 2


@pytest.mark.parametrize("args", [[], ["--days", "0"], ["--days", "-3"]])
@commands
def test_prune_refuses_without_a_positive_period(three_applications, settings, args):
    settings.LINEAGE = {**settings.LINEAGE, "RETENTION_DAYS": 0}
    with pytest.raises(CommandError, match="LINEAGE_RETENTION_DAYS"):
        _run("prune_applications", *args)
    assert Application.objects.count() == 3


@commands
def test_delete_application_command(three_applications, store):
    with pytest.raises(CommandError, match="No application 'local-nope'"):
        _run("delete_application", "local-nope")
    assert _run("delete_application", "local-old", "--dry-run").startswith("would delete local-old\n")
    out = _run("delete_application", "local-new")
    assert out.startswith("deleted local-new (") and f"removed {store / 'local-new'}" in out
    assert sorted(Application.objects.values_list("app_id", flat=True)) == ["local-old", "local-open"]
    assert (store / "local-old").exists() and not (store / "local-new").exists()
