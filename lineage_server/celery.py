"""The Celery app: configured from Django settings (``CELERY_*``), tasks found in each app."""
from __future__ import annotations

import os

from celery import Celery

from lineage_server import celery_broker

celery_broker.register()
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lineage_server.settings")

app = Celery("lineage_server")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
