"""Read the server's settings from environment variables, each with a documented default.

Every variable the server reads is declared in ``SETTINGS`` with its embedded default and a
one-line description; the README lists them and a test checks that it lists every one.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Setting:
    """One environment variable the server reads."""

    name: str
    default: str
    doc: str


SETTINGS: dict[str, Setting] = {
    s.name: s
    for s in (
        Setting("LINEAGE_VAR_DIR", "var/", "Folder for the embedded database, broker, secret key and lineage store."),
        Setting(
            "DATABASE_URL", "(SQLite file var/lineage.sqlite3)", "Database URL, e.g. postgres://user:pw@host:5432/db."
        ),
        Setting(
            "CELERY_BROKER_URL",
            "filesystem://",
            "Celery broker: filesystem:// keeps messages under var/celery/; or redis://, amqp://.",
        ),
        Setting("LINEAGE_SPARK_MASTER", "local[*]", "Spark master URL for trace jobs the server schedules."),
        Setting(
            "LINEAGE_STORE", "(var/lineage)", "Root of the lineage store (local path or a Hadoop file system URL)."
        ),
        Setting(
            "SECRET_KEY",
            "(generated)",
            "Django secret key; when unset one is generated once and kept in var/secret_key.",
        ),
        Setting("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]", "Comma-separated host names the server answers to."),
        Setting("DEBUG", "false", "Django debug mode (true/false); off unless set."),
        Setting("LINEAGE_INGEST_MAX_BYTES", "5242880", "Largest ingest request body accepted, in bytes (413 above)."),
        Setting("LINEAGE_INGEST_MAX_EVENTS", "500", "Most events accepted in one ingest request."),
        Setting("LINEAGE_PORT", "8000", "Port `make run` serves on."),
        Setting(
            "LINEAGE_PAGE_SIZE", "50", "Default page size of list endpoints (clients may ask up to 500 with page_size)."
        ),
        Setting(
            "LINEAGE_HTTPS",
            "true",
            "Served over HTTPS (or behind a TLS proxy sending X-Forwarded-Proto): secure cookies, HSTS, "
            "http redirected. `make run` and the tests set false for plain http on loopback.",
        ),
        Setting("LINEAGE_HSTS_SECONDS", "31536000", "HSTS max-age when LINEAGE_HTTPS is on."),
        Setting(
            "LINEAGE_CSRF_TRUSTED_ORIGINS",
            "",
            "Comma-separated origins (https://lineage.example.com) trusted for form posts behind a proxy.",
        ),
        Setting(
            "LINEAGE_CORS_ALLOWED_ORIGINS",
            "",
            "Comma-separated origins allowed to read the API from a browser (CORS); empty keeps CORS closed.",
        ),
        Setting("LINEAGE_LOGIN_FAILURE_LIMIT", "5", "Failed logins of a username from one address before a lockout."),
        Setting("LINEAGE_LOGIN_COOLOFF_MINUTES", "15", "How long a login lockout lasts."),
        Setting("LINEAGE_SESSION_HOURS", "12", "How long a browser login lasts."),
        Setting(
            "LINEAGE_RETENTION_DAYS",
            "0",
            "Days `manage.py prune_applications` keeps an ended application's lineage; 0 keeps it forever.",
        ),
    )
}

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str) -> str:
    """Return the variable's value, or its declared default."""
    return os.environ.get(name, SETTINGS[name].default)


def env_bool(name: str) -> bool:
    raw = env_str(name).strip().lower()
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean: use true or false")


def env_int(name: str, minimum: int = 0) -> int:
    raw = env_str(name).strip()
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None
    if value < minimum:
        raise ImproperlyConfigured(f"{name}={value} must be at least {minimum}")
    return value


def env_list(name: str) -> list[str]:
    return [item.strip() for item in env_str(name).split(",") if item.strip()]


def env_path(name: str, base: Path) -> Path:
    """A path setting; relative values are taken from ``base``."""
    path = Path(env_str(name)).expanduser()
    return path if path.is_absolute() else (base / path)


def var_dir() -> Path:
    path = env_path("LINEAGE_VAR_DIR", BASE_DIR)
    path.mkdir(parents=True, exist_ok=True)
    return path


def secret_key(var: Path) -> str:
    """SECRET_KEY from the environment, else one generated once and kept under var/."""
    if os.environ.get("SECRET_KEY"):
        return os.environ["SECRET_KEY"]
    key_file = var / "secret_key"
    if not key_file.exists():
        tmp = key_file.with_suffix(".tmp")
        tmp.write_text(secrets.token_urlsafe(50))
        tmp.chmod(0o600)
        try:
            os.link(tmp, key_file)  # atomic: a concurrent first start keeps the winner's key
        except FileExistsError:
            pass
        finally:
            tmp.unlink(missing_ok=True)
    return key_file.read_text().strip()
