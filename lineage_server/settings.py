"""Django settings, all read from environment variables (see ``lineage_server.env``)."""

from __future__ import annotations

import os

import dj_database_url

from lineage_server.env import BASE_DIR, env_bool, env_int, env_list, env_str, secret_key, var_dir

VAR_DIR = var_dir()
SECRET_KEY = secret_key(VAR_DIR)
DEBUG = env_bool("DEBUG")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS")

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
LOGIN_REDIRECT_URL = "web:applications"
LOGOUT_REDIRECT_URL = "web:login"
AXES_FAILURE_LIMIT = env_int("LINEAGE_LOGIN_FAILURE_LIMIT", minimum=1)
AXES_COOLOFF_TIME = env_int("LINEAGE_LOGIN_COOLOFF_MINUTES", minimum=1) / 60  # hours
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


def _database() -> dict[str, object]:
    url = os.environ.get("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'lineage.sqlite3'}"
    config: dict[str, object] = dict(dj_database_url.parse(url, conn_max_age=60))
    if config["ENGINE"] == "django.db.backends.sqlite3":
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
    return config


DATABASES = {"default": _database()}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(exist_ok=True)
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
}

# The lineage server's own settings, in one namespaced dict.
LINEAGE = {
    "SPARK_MASTER": env_str("LINEAGE_SPARK_MASTER"),
    "STORE": os.environ.get("LINEAGE_STORE") or str(VAR_DIR / "lineage"),
    "INGEST_MAX_BYTES": env_int("LINEAGE_INGEST_MAX_BYTES", minimum=1024),
    "INGEST_MAX_EVENTS": env_int("LINEAGE_INGEST_MAX_EVENTS", minimum=1),
    "PAGE_SIZE": env_int("LINEAGE_PAGE_SIZE", minimum=1),
    "RETENTION_DAYS": env_int("LINEAGE_RETENTION_DAYS", minimum=0),
}
# Django refuses bodies past this before our view sees them; ours answers 413 at the same limit.
DATA_UPLOAD_MAX_MEMORY_SIZE = LINEAGE["INGEST_MAX_BYTES"]


def _celery_broker() -> tuple[str, dict[str, object]]:
    url = env_str("CELERY_BROKER_URL")
    if url.startswith("filesystem://"):
        queue = VAR_DIR / "celery" / "queue"
        processed = VAR_DIR / "celery" / "processed"
        control = VAR_DIR / "celery" / "control"  # broadcast (remote control) messages
        for folder in (queue, processed, control):
            folder.mkdir(parents=True, exist_ok=True)
        return url, {
            "data_folder_in": str(queue),
            "data_folder_out": str(queue),
            "processed_folder": str(processed),
            "control_folder": str(control),
            "store_processed": False,
        }
    return url, {}


CELERY_BROKER_URL, CELERY_BROKER_TRANSPORT_OPTIONS = _celery_broker()
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

# CORS: closed unless origins are listed; then only reads, and no cookies (use a personal token).
CORS_ALLOWED_ORIGINS = env_list("LINEAGE_CORS_ALLOWED_ORIGINS")
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
SESSION_COOKIE_AGE = env_int("LINEAGE_SESSION_HOURS", minimum=1) * 3600
# Served over HTTPS (directly or behind a proxy that sets X-Forwarded-Proto): secure cookies, HSTS,
# redirect from http. On by default; `make run` turns it off to serve plain http on loopback.
HTTPS = env_bool("LINEAGE_HTTPS")
SECURE_SSL_REDIRECT = HTTPS
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]  # container health checks call plain http inside the host
SESSION_COOKIE_SECURE = HTTPS
CSRF_COOKIE_SECURE = HTTPS
SECURE_HSTS_SECONDS = env_int("LINEAGE_HSTS_SECONDS") if HTTPS else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = HTTPS
SECURE_HSTS_PRELOAD = HTTPS
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
CSRF_TRUSTED_ORIGINS = env_list("LINEAGE_CSRF_TRUSTED_ORIGINS")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": "WARNING"},
    "loggers": {"lineage_server": {"level": "INFO"}},
}
