"""The lineage server: a Django project storing Spark lineage metadata."""
from lineage_server.celery import app as celery_app

__all__ = ["celery_app"]
