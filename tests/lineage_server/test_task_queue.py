"""Write code queues Celery tasks by name after commit, and never imports the task modules."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from django.db import transaction

from lineage_server import celery_app
from lineage_server.catalog.models import Application
from lineage_server.catalog.services import FINALIZE_TASK, requeue_pending_finalizes
from lineage_server.task_queue import queue_task_on_commit
from tests.lineage_server.events import event

SERVER = Path(__file__).resolve().parents[2] / "lineage_server"
# Layers that write or read; only tasks modules (and what runs them) may import tasks.
WRITE_AND_READ_LAYERS = ("services", "selectors", "models", "api", "web", "management")


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[Any]]]:
    """Tasks sent to the broker, instead of sending them."""
    calls: list[tuple[str, list[Any]]] = []

    def record(name: str, args: list[Any] | None = None, **_: Any) -> None:
        calls.append((name, list(args or [])))

    monkeypatch.setattr(celery_app, "send_task", record)
    return calls


@pytest.mark.django_db
def test_a_task_is_sent_by_name_only_when_the_transaction_commits(sent, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        queue_task_on_commit("catalog.finalize_application", 7)
        assert sent == [], "nothing is sent before the commit"
    assert sent == [("catalog.finalize_application", [7])]


@pytest.mark.django_db
def test_a_rolled_back_transaction_sends_nothing(sent, django_capture_on_commit_callbacks):
    def queue_then_fail() -> None:
        with transaction.atomic():
            queue_task_on_commit("catalog.finalize_application", 7)
            raise RuntimeError("roll back")

    with django_capture_on_commit_callbacks(execute=True), pytest.raises(RuntimeError):
        queue_then_fail()
    assert sent == []


@pytest.mark.django_db
def test_the_end_of_an_application_queues_its_finalize(post_events, sent, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        post_events([event("application_start", t=0, name="x"), event("application_end", t=5)])
    app = Application.objects.get(app_id="local-1")
    assert sent == [(FINALIZE_TASK, [app.pk])]


@pytest.mark.django_db
def test_requeue_sends_finalize_for_every_application_still_owed_one(
    post_events, sent, django_capture_on_commit_callbacks
):
    post_events([event("application_start", t=0, name="x"), event("application_end", t=5)])
    owed = Application.objects.get(app_id="local-1")
    assert owed.finalize_pending
    with django_capture_on_commit_callbacks(execute=True):
        assert requeue_pending_finalizes() == 1
    assert sent == [(FINALIZE_TASK, [owed.pk])]


def test_the_finalize_task_is_registered_under_the_name_services_queue():
    import lineage_server.catalog.tasks  # noqa: F401  (registers the task)

    assert FINALIZE_TASK in celery_app.tasks


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_no_service_selector_model_or_view_imports_a_tasks_module():
    offenders = []
    for path in sorted(SERVER.rglob("*.py")):
        parts = path.relative_to(SERVER).parts
        if not any(part.removesuffix(".py") in WRITE_AND_READ_LAYERS for part in parts):
            continue
        tasks = [name for name in _imports(path) if name.endswith(".tasks")]
        offenders += [f"{path.relative_to(SERVER)} imports {name}" for name in tasks]
    assert offenders == []
