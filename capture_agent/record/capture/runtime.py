"""What captured RDDs hold of their LineageContext, passed explicitly (no back-reference)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from capture_agent.record.capture.actions import Actions
from capture_agent.record.capture.compiler import Compiler
from capture_agent.record.query.session import TraceSession


@dataclass(frozen=True)
class CaptureRuntime:
    """The SparkContext, the compiler and action runner of one run, and its lineage for traces."""

    sc: Any
    compiler: Compiler
    actions: Actions
    lineage: TraceSession
    # (captured RDD, schema, sampling ratio) -> a captured DataFrame of its records (toDF)
    to_frame: Any = None
