"""The environment variables the server reads: each typed, with its default and its documentation.

Every variable is declared here once, as a ``Setting`` of its type, with its default value, the
default as docs/settings.md shows it, and a one-line description; ``SETTINGS`` lists them all and a test
checks that docs/settings.md documents every one. ``settings.py`` reads the environment only through
``Setting.read``, which turns a bad value into an ``ImproperlyConfigured`` naming the variable.
An unset or empty variable takes the default.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

T = TypeVar("T")


@dataclass(frozen=True)
class Setting(Generic[T]):
    """One environment variable: ``default`` is its value when unset, ``default_text`` how docs/settings.md shows it.

    ``default_text`` differs from the value where the default is computed (a path under the var
    folder, a generated key); when not given it is the value written as a user would write it.
    """

    name: str
    default: T
    doc: str
    default_text: str = ""
    secret: bool = field(default=False, kw_only=True)  # never echoed in an error message

    def __post_init__(self) -> None:
        if not self.default_text:
            object.__setattr__(self, "default_text", self.show(self.default))

    def parse(self, raw: str) -> T:
        """The value of a set variable; a ValueError says what is wrong with it."""
        raise NotImplementedError

    def show(self, value: T) -> str:
        return str(value)

    def read(self, environ: Mapping[str, str] | None = None) -> T:
        """The variable's value from ``environ`` (the process environment by default), else the default.

        Raises:
            ImproperlyConfigured: the value does not parse; the message names the variable.
        """
        raw = (os.environ if environ is None else environ).get(self.name, "")
        if not raw.strip():
            return self.default
        try:
            return self.parse(raw)
        except ValueError as error:
            shown = "(value hidden)" if self.secret else repr(raw)
            raise ImproperlyConfigured(f"{self.name}={shown}: {error}") from None


@dataclass(frozen=True)
class Text(Setting[str]):
    """Any text, taken as it is."""

    def parse(self, raw: str) -> str:
        return raw


_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


@dataclass(frozen=True)
class Flag(Setting[bool]):
    """true/false (also 1/0, yes/no, on/off)."""

    def parse(self, raw: str) -> bool:
        value = raw.strip().lower()
        if value in _TRUE:
            return True
        if value in _FALSE:
            return False
        raise ValueError("not a boolean: use true or false")

    def show(self, value: bool) -> str:
        return "true" if value else "false"


@dataclass(frozen=True)
class Integer(Setting[int]):
    """A whole number between ``minimum`` and ``maximum`` (both included)."""

    minimum: int = 0
    maximum: int | None = None

    def parse(self, raw: str) -> int:
        try:
            value = int(raw.strip())
        except ValueError:
            raise ValueError("not an integer") from None
        if value < self.minimum:
            raise ValueError(f"must be at least {self.minimum}")
        if self.maximum is not None and value > self.maximum:
            raise ValueError(f"must be at most {self.maximum}")
        return value


@dataclass(frozen=True)
class Names(Setting[tuple[str, ...]]):
    """A comma-separated list; blanks around and between items are dropped."""

    def parse(self, raw: str) -> tuple[str, ...]:
        return tuple(item.strip() for item in raw.split(",") if item.strip())

    def show(self, value: tuple[str, ...]) -> str:
        return ",".join(value)


@dataclass(frozen=True)
class Choice(Setting[str]):
    """One of ``choices``."""

    choices: tuple[str, ...] = ()

    def parse(self, raw: str) -> str:
        value = raw.strip().lower()
        if value not in self.choices:
            raise ValueError(f"use one of {', '.join(self.choices)}")
        return value


@dataclass(frozen=True)
class Url(Setting[str]):
    """A URL ``scheme://...``, of one of ``schemes`` when given."""

    schemes: tuple[str, ...] = ()

    def parse(self, raw: str) -> str:
        value = raw.strip()
        scheme = urlsplit(value).scheme
        if not scheme or not value.startswith(f"{scheme}://"):
            raise ValueError("not a URL: expected scheme://...")
        if self.schemes and scheme not in self.schemes:
            raise ValueError(f"unsupported scheme {scheme!r}: use one of {', '.join(self.schemes)}")
        return value


@dataclass(frozen=True)
class Folder(Setting[Path]):
    """A local folder; a relative path is taken from the project folder."""

    def parse(self, raw: str) -> Path:
        path = Path(raw.strip()).expanduser()
        return path if path.is_absolute() else BASE_DIR / path


VAR_DIR = Folder(
    "LINEAGE_VAR_DIR",
    BASE_DIR / "var",
    "Folder for the embedded database, broker, secret key and lineage store.",
    "var/",
)
DATABASE_URL = Url(
    "DATABASE_URL",
    "",
    "Database URL, e.g. postgres://user:pw@host:5432/db.",
    "(SQLite file var/lineage.sqlite3)",
    secret=True,
)
CELERY_BROKER_URL = Url(
    "CELERY_BROKER_URL",
    "filesystem://",
    "Celery broker: filesystem:// keeps messages under var/celery/; or redis://, amqp://.",
    secret=True,
)
SPARK_MASTER = Text(
    "LINEAGE_SPARK_MASTER",
    "local[*]",
    "Spark master the worker's warm Spark session runs trace jobs on: local[*], spark://host:7077, yarn...",
)
TRACE_MODE = Choice(
    "LINEAGE_TRACE_MODE",
    "auto",
    "Where trace steps run: auto (a step reading under 256 MB of lineage runs in the worker's process, "
    "bigger ones as Spark jobs), local (never Spark) or spark (every step a Spark job).",
    choices=("auto", "local", "spark"),
)
TRACE_SPARK_AT_START = Flag(
    "LINEAGE_TRACE_SPARK_AT_START",
    True,
    "The worker starts its Spark session when it starts, so the first trace finds it warm; false starts "
    "it at the first trace step or replay that runs on Spark (traces answered in the worker's process "
    "never start it).",
)
TRACE_STALE_SECONDS = Integer(
    "LINEAGE_TRACE_STALE_SECONDS",
    120,
    "A running trace whose worker has not reported for this long is retried (3 attempts in all) or failed; "
    "a queued trace not taken for this long is sent to the broker again.",
    minimum=5,
)
TRACE_TIME_LIMIT_SECONDS = Integer(
    "LINEAGE_TRACE_TIME_LIMIT_SECONDS",
    300,
    "Longest a trace or a what-if may run: past it the run is stopped (its Spark jobs cancelled, its step "
    "interrupted, the worker process replaced if the step cannot be) and the trace fails naming the limit.",
    minimum=1,
)
TRACE_CONCURRENCY = Integer(
    "LINEAGE_TRACE_CONCURRENCY",
    4,
    "Traces and what-ifs one worker process runs side by side (threads sharing its one warm Spark session, "
    "each trace's Spark jobs in its team's FAIR scheduler pool); 1 runs one at a time.",
    minimum=1,
    maximum=64,
)
TRACE_KEEP_VALUES_UP_TO = Integer(
    "LINEAGE_TRACE_KEEP_VALUES_UP_TO",
    5000,
    "A trace's answer of at most this many records is stored with every value, so it stays whole if its inputs "
    "are overwritten later; a larger one keeps its first page's values and reads the others from the job's input "
    "files when their page is asked. 0 defers every answer's values but the first page's.",
    minimum=0,
)
TRACE_SWEEP_SECONDS = Integer(
    "LINEAGE_TRACE_SWEEP_SECONDS", 30, "How often each worker looks for stale and lost traces.", minimum=1
)
STORE = Text(
    "LINEAGE_STORE",
    "",
    "Root of the lineage store: a local path or an s3://, gs://, hdfs:// URL (the one the agents write to; "
    "retention deletes there).",
    "(var/lineage)",
)
SECRET_KEY = Text(
    "SECRET_KEY",
    "",
    "Django secret key; when unset, the one kept in var/secret_key (written by manage.py ensure_local_setup).",
    "(generated)",
    secret=True,
)
ALLOWED_HOSTS = Names(
    "ALLOWED_HOSTS", ("localhost", "127.0.0.1", "[::1]"), "Comma-separated host names the server answers to."
)
DEBUG = Flag("DEBUG", False, "Django debug mode (true/false); off unless set.")
INGEST_MAX_BYTES = Integer(
    "LINEAGE_INGEST_MAX_BYTES", 5_242_880, "Largest ingest request body accepted, in bytes (413 above).", minimum=1024
)
INGEST_MAX_EVENTS = Integer("LINEAGE_INGEST_MAX_EVENTS", 500, "Most events accepted in one ingest request.", minimum=1)
# Read by `make run` (scripts/run.sh), not by Django.
PORT = Integer("LINEAGE_PORT", 8000, "Port `make run` serves on.", minimum=1, maximum=65535)
PAGE_SIZE = Integer(
    "LINEAGE_PAGE_SIZE",
    50,
    "Default page size of list endpoints (clients may ask up to 500 with page_size).",
    minimum=1,
    maximum=500,
)
HTTPS = Flag(
    "LINEAGE_HTTPS",
    True,
    "Served over HTTPS (or behind a TLS proxy sending X-Forwarded-Proto): secure cookies, HSTS, "
    "http redirected. `make run` and the tests set false for plain http on loopback.",
)
HSTS_SECONDS = Integer("LINEAGE_HSTS_SECONDS", 31_536_000, "HSTS max-age when LINEAGE_HTTPS is on.")
CSRF_TRUSTED_ORIGINS = Names(
    "LINEAGE_CSRF_TRUSTED_ORIGINS",
    (),
    "Comma-separated origins (https://lineage.example.com) trusted for form posts behind a proxy.",
)
CORS_ALLOWED_ORIGINS = Names(
    "LINEAGE_CORS_ALLOWED_ORIGINS",
    (),
    "Comma-separated origins allowed to read the API from a browser (CORS); empty keeps CORS closed.",
)
LOGIN_FAILURE_LIMIT = Integer(
    "LINEAGE_LOGIN_FAILURE_LIMIT", 5, "Failed logins of a username from one address before a lockout.", minimum=1
)
LOGIN_COOLOFF_MINUTES = Integer("LINEAGE_LOGIN_COOLOFF_MINUTES", 15, "How long a login lockout lasts.", minimum=1)
SESSION_HOURS = Integer("LINEAGE_SESSION_HOURS", 12, "How long a browser login lasts.", minimum=1)
RETENTION_DAYS = Integer(
    "LINEAGE_RETENTION_DAYS",
    0,
    "Days `manage.py prune_applications` keeps an ended application's lineage; 0 keeps it forever.",
)
PROVENANCE_MAX_UPLOAD_MB = Integer(
    "LINEAGE_PROVENANCE_MAX_UPLOAD_MB",
    2048,
    "Largest upload of provenance triples (JSON lines or Parquet) in one request, in MB (413 above).",
    minimum=1,
)

SETTINGS: dict[str, Setting[Any]] = {
    setting.name: setting
    for setting in (
        VAR_DIR,
        DATABASE_URL,
        CELERY_BROKER_URL,
        SPARK_MASTER,
        TRACE_MODE,
        TRACE_SPARK_AT_START,
        TRACE_STALE_SECONDS,
        TRACE_TIME_LIMIT_SECONDS,
        TRACE_CONCURRENCY,
        TRACE_KEEP_VALUES_UP_TO,
        TRACE_SWEEP_SECONDS,
        STORE,
        SECRET_KEY,
        ALLOWED_HOSTS,
        DEBUG,
        INGEST_MAX_BYTES,
        INGEST_MAX_EVENTS,
        PORT,
        PAGE_SIZE,
        HTTPS,
        HSTS_SECONDS,
        CSRF_TRUSTED_ORIGINS,
        CORS_ALLOWED_ORIGINS,
        LOGIN_FAILURE_LIMIT,
        LOGIN_COOLOFF_MINUTES,
        SESSION_HOURS,
        RETENTION_DAYS,
        PROVENANCE_MAX_UPLOAD_MB,
    )
}
