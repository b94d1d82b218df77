"""Settings of the capture agent (coarse and record-level), resolved by ``load_settings``.

Precedence, highest first: a keyword argument (of ``enable()``, ``LineageContext(...)``, or the
``overrides`` of ``load_settings``; ``None`` counts as not given), the config file named by
``LINEAGE_CONFIG`` (JSON or TOML, keys are the lower-case names below without the prefix, e.g.
``server_url``, optionally under a ``[lineage]`` table), the ``LINEAGE_*`` environment variables,
the defaults. A bad value raises ``ConfigError`` naming the setting, where it came from and what is
expected. Nothing else in the agent reads ``LINEAGE_*`` variables.

| environment variable | keyword / file key | default | meaning |
|---|---|---|---|
| `LINEAGE_DISABLED` | `disabled` | `false` | `true`: nothing is captured (4); wins over `enabled` |
| `LINEAGE_ENABLED` | `enabled` | unset | `true`: every SparkContext is captured (5); `false`: as `disabled` |
| `LINEAGE_CONFIG` | - | unset | path of a JSON or TOML file holding any of these settings |
| `LINEAGE_SERVER_URL` | `server_url` | `http://127.0.0.1:8000` | base URL of the lineage server |
| `LINEAGE_TOKEN` | `token` | empty | agent API token, sent as `Authorization: Bearer` |
| `LINEAGE_SINK` | `sink` | `http` | `http`, `file` (JSON lines) or `noop` |
| `LINEAGE_FILE_SINK_PATH` | `file_sink_path` | `lineage-events.jsonl` | file the `file` sink appends to |
| `LINEAGE_SPOOL_DIR` | `spool_dir` | `~/.cache/lineage-agent/spool` | undelivered batches, one file each (1) |
| `LINEAGE_SPOOL_MAX_BYTES` | `spool_max_bytes` | `104857600` | spool bound; the oldest batches go first |
| `LINEAGE_BATCH_SIZE` | `batch_size` | `200` | events per HTTP request (1..500) |
| `LINEAGE_FLUSH_INTERVAL` | `flush_interval` | `0.5` | seconds between drains of the listener queue |
| `LINEAGE_MAX_QUEUE` | `max_queue` | `10000` | events held in memory before dropping (JVM) or spooling (HTTP) |
| `LINEAGE_TIMEOUT` | `timeout` | `5.0` | seconds per HTTP request |
| `LINEAGE_MAX_RETRIES` | `max_retries` | `3` | retries of a batch (exponential backoff) before spooling it |
| `LINEAGE_CLOSE_TIMEOUT` | `close_timeout` | `10.0` | seconds `disable()`/application end waits before spooling |
| `LINEAGE_DATASET_SIZES` | `dataset_sizes` | `true` | record `size_bytes` of datasets read and written |
| `LINEAGE_PYTHON_OPERATORS` | `python_operators` | `true` | record Python operators fused into each PythonRDD |
| `LINEAGE_JAR` | `jar` | `capture_agent/_jars/lineage-listener.jar` | listener jar to load (2) |
| `LINEAGE_STORE` | `store` | `var/lineage` (under the current directory) | root of the record-level lineage store (3) |
| `LINEAGE_KEEP_FUNCTIONS_MB` | `keep_functions_mb` | `64` | MB of a job's functions kept for replays (6) |
| `LINEAGE_KEEP_AGGREGATES` | `keep_aggregates` | `100000` | keys a combine task keeps aggregates or outputs of (7) |
| `LINEAGE_RECORDS` | `records` | `false` | `true`: record lineage of every DataFrame, SQL and RDD action (8) |

(1) Under `$XDG_CACHE_HOME` when set. Per user rather than per working directory, so the next
run finds the batches wherever it starts; `python -m capture_agent flush-spool` delivers them.
(2) Built by `python -m capture_agent.build_jar`; built on the fly when missing and javac exists;
without it the agent falls back to a slower pure-Python listener that misses SQL datasets.
(3) A local path or a URL `pyarrow.fs` opens (`file://`, `s3://bucket/prefix`, `gs://`,
`hdfs://`); on a cluster every executor and the server must reach it (docs/deployment.md, "Running a captured
job on a cluster"). The default is made absolute when the settings are resolved.
(4) `enable()` returns a disabled agent and `LineageContext` plain PySpark RDDs (`Settings.active`
is false).
(5) Those created after `import capture_agent`, and one already running then. Unset, capture
happens only where `enable()` or `LineageContext` is called.
(6) The job's pickled functions and values, kept in its run folder so that the server can replay
what-ifs (``capture.kept``); `0` keeps none. They are the job's code, loaded only inside Spark
tasks of a replay (docs/security.md, "Trust model of kept functions").
(7) Pickled beside the combiner's table, so that a what-if deleting records of some partitions
replays only those (``query.selective``); a task with more keys, or that spilled, keeps none and
what-ifs through it rerun the whole job. The reduce side's tasks keep their outputs likewise, which
a what-if reads instead of merging the map side's, and subtracts the deleted records' contributions
from for a sum of integers (``query.delta``, ``query.subtraction``). A groupByKey's reduce-side task
of at most this many records keeps its groups, which a what-if patches with the records that left
and came instead of replaying the stage before it (``query.regroup``). `0` keeps none.
(8) `enable(spark, records=True)`, or `LINEAGE_RECORDS=true` alone (it enables the agent unless
`LINEAGE_ENABLED=false`): each action of a DataFrame (collect, count, take, toPandas, writes...)
runs its query rewritten in the JVM to carry each row's lineage (``record.capture.implicit``), and
the SparkContext's `textFile`, `parallelize`, `range` and a DataFrame's `.rdd` give captured RDDs
(``record.capture.implicit_rdd``); what cannot be captured runs plain and is listed as not
captured in the run's ``run.json``. A `spark-submit` driver picks the settings up at start once
`python -m capture_agent install-hook` has run in its Python (docs/capture.md).
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from capture_agent.protocol import INGEST_PATH, MAX_BATCH_EVENTS

ENV_PREFIX = "LINEAGE_"
SINK_KINDS = ("http", "file", "noop")


class ConfigError(ValueError):
    """A setting has a value the agent cannot use."""


def _default_spool_dir() -> str:
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "lineage-agent", "spool")


def _default_jar() -> str:
    return str(Path(__file__).resolve().parent / "_jars" / "lineage-listener.jar")


def _default_store() -> str:
    return os.path.join(os.getcwd(), "var", "lineage")


@dataclass(frozen=True)
class Settings:
    """Resolved agent settings (see the module docstring for each one)."""

    disabled: bool = False
    enabled: bool | None = None
    server_url: str = "http://127.0.0.1:8000"
    token: str = ""
    sink: str = "http"
    file_sink_path: str = "lineage-events.jsonl"
    spool_dir: str = ""
    spool_max_bytes: int = 100 * 1024 * 1024
    batch_size: int = 200
    flush_interval: float = 0.5
    max_queue: int = 10000
    timeout: float = 5.0
    max_retries: int = 3
    close_timeout: float = 10.0
    dataset_sizes: bool = True
    python_operators: bool = True
    jar: str = ""
    store: str = ""
    keep_functions_mb: int = 64
    keep_aggregates: int = 100_000
    records: bool = False

    @property
    def active(self) -> bool:
        """False when ``disabled`` is true or ``enabled`` is false: then nothing is captured."""
        return not self.disabled and self.enabled is not False

    @property
    def auto_enable(self) -> bool:
        """True when every new SparkContext is to be captured (``enabled`` true, or ``records`` true
        and ``enabled`` not false; not disabled)."""
        return (self.enabled is True or (self.records and self.enabled is None)) and not self.disabled

    @property
    def ingest_url(self) -> str:
        return self.server_url.rstrip("/") + INGEST_PATH


def _parse_bool(text: Any) -> bool:
    if isinstance(text, bool):
        return text
    value = str(text).strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off", ""):
        return False
    raise ValueError("expected true or false")


def _int_in(low: int, high: int) -> Callable[[Any], int]:
    def parse(text: Any) -> int:
        if isinstance(text, bool):
            raise ValueError("expected an integer")
        try:
            value = int(str(text).strip())
        except ValueError:
            raise ValueError(f"expected an integer between {low} and {high}") from None
        if not low <= value <= high:
            raise ValueError(f"expected an integer between {low} and {high}")
        return value

    return parse


def _float_in(low: float, high: float) -> Callable[[Any], float]:
    def parse(text: Any) -> float:
        try:
            value = float(str(text).strip())
        except ValueError:
            raise ValueError(f"expected a number of seconds between {low} and {high}") from None
        if not low <= value <= high:
            raise ValueError(f"expected a number of seconds between {low} and {high}")
        return value

    return parse


def _url(text: Any) -> str:
    value = str(text).strip()
    if not value.startswith(("http://", "https://")) or len(value) < 10:
        raise ValueError("expected an http:// or https:// URL")
    return value


def _sink(text: Any) -> str:
    value = str(text).strip().lower()
    if value not in SINK_KINDS:
        raise ValueError(f"expected one of {', '.join(SINK_KINDS)}")
    return value


def _text(text: Any) -> str:
    return str(text)


def _store(text: Any) -> str:
    value = str(text).strip()
    if not value:
        raise ValueError("expected a local path or a file://, s3://, gs:// or hdfs:// URL")
    return value


_PARSERS: dict[str, Callable[[Any], Any]] = {
    "disabled": _parse_bool,
    "enabled": _parse_bool,
    "server_url": _url,
    "token": _text,
    "sink": _sink,
    "file_sink_path": _text,
    "spool_dir": _text,
    "spool_max_bytes": _int_in(0, 1 << 40),
    "batch_size": _int_in(1, MAX_BATCH_EVENTS),
    "flush_interval": _float_in(0.05, 60.0),
    "max_queue": _int_in(100, 10_000_000),
    "timeout": _float_in(0.1, 300.0),
    "max_retries": _int_in(0, 20),
    "close_timeout": _float_in(0.0, 600.0),
    "dataset_sizes": _parse_bool,
    "python_operators": _parse_bool,
    "jar": _text,
    "store": _store,
    "keep_functions_mb": _int_in(0, 1 << 20),
    "keep_aggregates": _int_in(0, 1 << 40),
    "records": _parse_bool,
}
assert set(_PARSERS) == {f.name for f in fields(Settings)}


def _read_file(path: str) -> dict[str, Any]:
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"LINEAGE_CONFIG={path!r}: cannot read the file ({exc})") from None
    try:
        if path.endswith(".toml"):
            data = tomllib.loads(raw.decode("utf-8"))
        else:
            data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ConfigError(f"LINEAGE_CONFIG={path!r}: not valid JSON/TOML ({exc})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"LINEAGE_CONFIG={path!r}: expected a table/object of settings")
    # A file shared with other tools may nest our settings under [lineage].
    section = data.get("lineage", data)
    return {str(key).lower().removeprefix("lineage_"): value for key, value in section.items()}


def load_settings(
    overrides: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None
) -> Settings:
    """Resolves the settings by precedence: overrides, config file, environment, defaults.

    Args:
        overrides: settings given as keyword arguments (of ``enable()``, ``LineageContext``...),
            by field name; ``config`` names the config file; a None value counts as not given.
        environ: the environment to read (``os.environ`` when None).

    Returns:
        The validated settings.
    """
    env = os.environ if environ is None else environ
    overrides = {name: value for name, value in (overrides or {}).items() if value is not None}
    layers: list[tuple[str, Mapping[str, Any]]] = []
    env_values = {
        name: env[ENV_PREFIX + name.upper()] for name in _PARSERS if ENV_PREFIX + name.upper() in env
    }
    layers.append(("environment variable LINEAGE_", env_values))
    config_path = overrides.get("config") or env.get("LINEAGE_CONFIG")
    if config_path:
        layers.append((f"config file {config_path}: ", _read_file(str(config_path))))
    layers.append(("keyword argument ", {k: v for k, v in overrides.items() if k != "config"}))

    values: dict[str, Any] = {}
    for origin, layer in layers:
        for name, raw in layer.items():
            parser = _PARSERS.get(name)
            label = f"{origin}{name.upper() if origin.endswith('LINEAGE_') else name}"
            if parser is None:
                known = ", ".join(sorted(_PARSERS))
                raise ConfigError(f"{label}: unknown setting (known: {known})")
            try:
                values[name] = parser(raw)
            except ValueError as exc:
                raise ConfigError(f"{label}={raw!r}: {exc}") from None
    settings = Settings(**values)
    if not settings.spool_dir:
        settings = replace(settings, spool_dir=_default_spool_dir())
    if not settings.jar:
        settings = replace(settings, jar=_default_jar())
    if not settings.store:
        settings = replace(settings, store=_default_store())
    return settings
