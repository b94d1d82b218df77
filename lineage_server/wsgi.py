"""WSGI entry point (gunicorn lineage_server.wsgi)."""
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lineage_server.settings")
application = get_wsgi_application()
