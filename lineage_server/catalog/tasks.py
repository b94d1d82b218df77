"""Celery tasks of the catalog: they only schedule; the work is in ``services``."""

from __future__ import annotations

from celery import shared_task

from lineage_server.catalog.services import finalize_application


@shared_task(name="catalog.finalize_application")
def finalize_application_task(app_pk: int) -> None:
    finalize_application(app_pk)
