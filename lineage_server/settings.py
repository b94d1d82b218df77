"""Django settings, all read from environment variables through ``lineage_server.env``.

Importing them reads the environment (and var/secret_key if SECRET_KEY is unset) and writes
nothing: folders and files are made where they are used (``manage.py ensure_local_setup``, the
embedded database and broker).
"""

from __future__ import annotations

from typing import Any, TypedDict

import dj_database_url

from lineage_server import env
from lineage_server.env import BASE_DIR
from lineage_server.secret_key import read_secret_key

VAR_DIR = env.VAR_DIR.read()
SECRET_KEY = env.SECRET_KEY.read() or read_secret_key(VAR_DIR)
DEBUG = env.DEBUG.read()
ALLOWED_HOSTS = list(env.ALLOWED_HOSTS.read())

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "corsheaders",
    "axes",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "lineage_server.accounts",
    "lineage_server.catalog",
    "lineage_server.tracing",
    "lineage_server.provenance",
    "lineage_server.web",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "corsheaders.middleware.CorsMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "axes.middleware.AxesMiddleware",  # last, as django-axes asks
]

# Login: Django's password hashing; django-axes locks a username+address pair out after failures.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
LOGIN_URL = "web:login"
LOGIN_REDIRECT_URL = "web:home"
LOGOUT_REDIRECT_URL = "web:login"
AXES_FAILURE_LIMIT = env.LOGIN_FAILURE_LIMIT.read()
AXES_COOLOFF_TIME = env.LOGIN_COOLOFF_MINUTES.read() / 60  # hours
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "web/locked_out.html"
AXES_VERBOSE = False
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

ROOT_URLCONF = "lineage_server.urls"
WSGI_APPLICATION = "lineage_server.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]


def _database() -> dict[str, Any]:
    url = env.DATABASE_URL.read() or f"sqlite:///{VAR_DIR / 'lineage.sqlite3'}"
    config: dict[str, Any] = dict(dj_database_url.parse(url, conn_max_age=60))
    if config["ENGINE"] == "django.db.backends.sqlite3":
        # Django's SQLite backend, creating the database file's folder when it first connects.
        config["ENGINE"] = "lineage_server.backends.sqlite3"
        # The web server and the Celery worker write to one file: wait for locks rather than fail,
        # take the write lock up front, and let readers run beside the writer.
        config["OPTIONS"] = {
            "timeout": 30,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
        config["CONN_MAX_AGE"] = 0
        # A file, not memory, so the live test server, Spark's agent thread and a Celery worker
        # process see the same test database.
        config["TEST"] = {"NAME": str(VAR_DIR / "test.sqlite3")}
    elif config["ENGINE"] == "django.db.backends.postgresql":
        # Django's PostgreSQL backend, sending lists (bulk_create's columns) as arrays faster.
        config["ENGINE"] = "lineage_server.backends.postgresql"
    return config


DATABASES = {"default": _database()}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"  # written by collectstatic
STATICFILES_DIRS = [BASE_DIR / "frontend" / "dist"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Tests and `runserver` serve the built frontend straight from frontend/dist.
WHITENOISE_USE_FINDERS = True

REST_FRAMEWORK = {
    # A personal token first, so that an anonymous call gets 401 with WWW-Authenticate: Bearer.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "lineage_server.accounts.authentication.PersonalTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",  # enforces CSRF on writes
    ],
    "DEFAULT_PERMISSION_CLASSES": ["lineage_server.api.permissions.IsPerson"],
    "DEFAULT_PAGINATION_CLASS": "lineage_server.api.pagination.PageNumberPagination",
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
    "EXCEPTION_HANDLER": "lineage_server.api.errors.exception_handler",
    "UNAUTHENTICATED_USER": None,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Spark lineage server API",
    "DESCRIPTION": (
        "Coarse and record-level lineage of Spark applications. Agents post events to "
        "/api/v1/ingest/events/ with a bearer agent token; everything the web UI shows is read "
        "from the other endpoints."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # The API's description is public (integrators read it before they have an account); its data is not.
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # Choice sets that share a field name get names of their own (not a hash suffix).
    "ENUM_NAME_OVERRIDES": {
        "RunStatusEnum": "lineage_server.catalog.models.application.RunStatus",
        "IODirectionEnum": "lineage_server.catalog.models.dataset.IODirection",
        "TraceStatusEnum": "lineage_server.tracing.models.trace.TraceStatus",
        "TraceDirectionEnum": "lineage_server.tracing.models.trace.Direction",
        "TransformationTypeEnum": "lineage_server.api.serializers.column_lineage.TRANSFORMATION_TYPES",
    },
}



class LineageSettings(TypedDict):
    """The lineage server's own settings (``settings.LINEAGE``)."""

    STORE: str  # root of the lineage store: a local path or a file system URL
    INGEST_MAX_BYTES: int
    INGEST_MAX_EVENTS: int
    PAGE_SIZE: int
    RETENTION_DAYS: int
    SPARK_MASTER: str
    TRACE_MODE: str
    TRACE_SPARK_AT_START: bool
    TRACE_STALE_SECONDS: int
    TRACE_TIME_LIMIT_SECONDS: int
    TRACE_CONCURRENCY: int
    TRACE_KEEP_VALUES_UP_TO: int
    TRACE_SWEEP_SECONDS: int
    PROVENANCE_MAX_UPLOAD_BYTES: int


# The lineage server's own settings, in one namespaced dict.
LINEAGE: LineageSettings = {
    "STORE": env.STORE.read() or str(VAR_DIR / "lineage"),
    "INGEST_MAX_BYTES": env.INGEST_MAX_BYTES.read(),
    "INGEST_MAX_EVENTS": env.INGEST_MAX_EVENTS.read(),
    "PAGE_SIZE": env.PAGE_SIZE.read(),
    "RETENTION_DAYS": env.RETENTION_DAYS.read(),
    "SPARK_MASTER": env.SPARK_MASTER.read(),
    "TRACE_MODE": env.TRACE_MODE.read(),
    "TRACE_SPARK_AT_START": env.TRACE_SPARK_AT_START.read(),
    "TRACE_STALE_SECONDS": env.TRACE_STALE_SECONDS.read(),
    "TRACE_TIME_LIMIT_SECONDS": env.TRACE_TIME_LIMIT_SECONDS.read(),
    "TRACE_CONCURRENCY": env.TRACE_CONCURRENCY.read(),
    "TRACE_KEEP_VALUES_UP_TO": env.TRACE_KEEP_VALUES_UP_TO.read(),
    "TRACE_SWEEP_SECONDS": env.TRACE_SWEEP_SECONDS.read(),
    "PROVENANCE_MAX_UPLOAD_BYTES": env.PROVENANCE_MAX_UPLOAD_MB.read() << 20,
}
# Django refuses bodies past this before our view sees them; ours answers 413 at the same limit.
DATA_UPLOAD_MAX_MEMORY_SIZE = LINEAGE["INGEST_MAX_BYTES"]


def _celery_broker() -> tuple[str, dict[str, Any]]:
    url = env.CELERY_BROKER_URL.read()
    if url.startswith("filesystem://"):
        # The broker's channel creates these folders when it opens (lineage_server.celery_broker).
        queue = VAR_DIR / "celery" / "queue"
        processed = VAR_DIR / "celery" / "processed"
        control = VAR_DIR / "celery" / "control"  # broadcast (remote control) messages
        return url, {
            "data_folder_in": str(queue),
            "data_folder_out": str(queue),
            "processed_folder": str(processed),
            "control_folder": str(control),
            "store_processed": False,
            # kombu polls the folder once a second by default: a trace would wait ~1 s in the queue.
            "polling_interval": 0.1,
        }
    return url, {}


CELERY_BROKER_URL, CELERY_BROKER_TRANSPORT_OPTIONS = _celery_broker()
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Traces run side by side in threads of one process: they share its warm Spark session (a prefork
# child would start a JVM of its own), and a cancelled trace's thread is interrupted alone
# (tracing/services/watch.py). A `--pool`/`--concurrency` on the command line wins over these.
CELERY_WORKER_POOL = "threads"
CELERY_WORKER_CONCURRENCY = LINEAGE["TRACE_CONCURRENCY"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

# CORS: closed unless origins are listed; then only reads, and no cookies (use a personal token).
CORS_ALLOWED_ORIGINS = list(env.CORS_ALLOWED_ORIGINS.read())
CORS_URLS_REGEX = r"^/api/.*$"
CORS_ALLOW_METHODS = ["GET", "HEAD", "OPTIONS"]
CORS_ALLOW_CREDENTIALS = False

SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_AGE = env.SESSION_HOURS.read() * 3600
# Served over HTTPS (directly or behind a proxy that sets X-Forwarded-Proto): secure cookies, HSTS,
# redirect from http. On by default; `make run` turns it off to serve plain http on loopback.
HTTPS = env.HTTPS.read()
SECURE_SSL_REDIRECT = HTTPS
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]  # container health checks call plain http inside the host
SESSION_COOKIE_SECURE = HTTPS
CSRF_COOKIE_SECURE = HTTPS
SECURE_HSTS_SECONDS = env.HSTS_SECONDS.read() if HTTPS else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = HTTPS
SECURE_HSTS_PRELOAD = HTTPS
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
CSRF_TRUSTED_ORIGINS = list(env.CSRF_TRUSTED_ORIGINS.read())

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": "WARNING"},
    "loggers": {
        "lineage_server": {"level": "INFO"},
        # kombu warns that a broker URL has no host on every connection; the embedded filesystem
        # broker never has one
        "kombu.connection": {"level": "ERROR"},
    },
}
