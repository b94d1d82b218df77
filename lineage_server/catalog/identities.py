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


@dataclass(frozen=True)
class DatasetKey:
    """A dataset by its database key."""

    pk: int

    def node_id(self) -> str:
        return f"dataset:{self.pk}"
