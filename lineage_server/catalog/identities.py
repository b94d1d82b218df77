"""Identity types of the catalog and their one conversion per boundary (URL, graph node, display)."""

from __future__ import annotations

import re
from dataclasses import dataclass

# Spark application ids look like local-1763731200000, app-20261121101010-0001, application_1_2.
APP_ID_PATTERN = r"[A-Za-z0-9._:\-]{1,128}"
_APP_ID_RE = re.compile(rf"^{APP_ID_PATTERN}$")


def is_valid_app_id(value: str) -> bool:
    return bool(_APP_ID_RE.match(value))


APPLICATION_NODE = "application"  # the graph's root: every job of the application is inside it


@dataclass(frozen=True)
class JobKey:
    """A job (one action) of one application."""

    job_id: int

    def node_id(self) -> str:
        return f"job:{self.job_id}"


@dataclass(frozen=True)
class StageKey:
    """A stage of one application."""

    stage_id: int

    def node_id(self) -> str:
        return f"stage:{self.stage_id}"


@dataclass(frozen=True)
class OperatorKey:
    """An RDD as it appears inside one stage (an RDD may appear in several stages)."""

    stage_id: int
    rdd_id: int

    def node_id(self) -> str:
        return f"op:{self.stage_id}:{self.rdd_id}"


@dataclass(frozen=True)
class CapturePointKey:
    """A record-level capture point (one association table) of one application."""

    capture_id: str

    def node_id(self) -> str:
        return f"capture:{self.capture_id}"

    def title(self, kind: str, files: list[str] | None = None) -> str:
        """What a person reads: the operator that made the point and its kind ("reduceByKey ·
        combiner"), from the agent's table name ``<run>/<seq>-<kind>-<op>``, an input by the files
        it read ("textFile events.txt", "parquet orders/part-0.parquet +3"); the id when it has
        another shape."""
        name = self.capture_id.rsplit("/", 1)[-1]
        seq, _, rest = name.partition("-")
        op = rest[len(kind) + 1:] if rest.startswith(f"{kind}-") else ""
        if not (seq.isdigit() and op):
            return f"{kind} {self.capture_id}"
        if files:
            more = f" +{len(files) - 1}" if len(files) > 1 else ""
            return f"{op} {files[0].rstrip('/').rsplit('/', 1)[-1]}{more}"
        return f"{op} · {kind}"


@dataclass(frozen=True)
class DatasetKey:
    """A dataset by its database key."""

    pk: int

    def node_id(self) -> str:
        return f"dataset:{self.pk}"


# OpenLineage (https://openlineage.io/docs/spec/naming): a run is a UUID, a dataset a namespace and a name.
OPENLINEAGE_APP_PREFIX = "openlineage-"


def openlineage_app_id(run_id: str) -> str:
    """The application id of an OpenLineage run: its runId (a UUID), recognisably not Spark's."""
    return OPENLINEAGE_APP_PREFIX + run_id.lower()


@dataclass(frozen=True)
class OpenLineageDataset:
    """A dataset as OpenLineage names it: a namespace (its data source) and a name within it."""

    namespace: str
    name: str

    def path(self) -> str:
        """The dataset's path as the capture agent spells it, so both name one catalog dataset.

        ``file`` + ``/data/x`` is Spark's ``file:/data/x``; a URL namespace takes the name as its path
        (``hdfs://nn:8020`` + ``/data/x``, ``s3://bucket`` + ``key``, ``postgres://db:5432`` +
        ``shop.public.orders``); any other namespace is joined with a colon (``bigquery:p.d.t``).
        """
        if "://" not in self.namespace:
            return f"{self.namespace}:{self.name}"
        if self.namespace.endswith("://"):
            return self.namespace + self.name
        return self.namespace.rstrip("/") + "/" + self.name.lstrip("/")
