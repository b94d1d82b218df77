"""Spark's call site set to the line of the user's program while the agent's code runs.

PySpark names jobs, stages and RDDs after the first frame outside PySpark (``SCCallSiteSync``):
in a captured job that is one of the agent's frames (``__init__ at .../compiler.py:229``). The
agent sets the call site itself, as PySpark formats it (``reduceByKey at /path/job.py:58``: the
method the user called, at the user's line), and holds PySpark's depth counter meanwhile, so that
the PySpark calls inside do not set it again. So around a captured DataFrame action or write
(``collect at job.py:40``, ``parquet at job.py:41``), explicit or in an unmodified job: every Spark
job it makes (the agent's copy of local rows, the rewritten query's stages, adaptive execution's
too) is named by it, not ``parquet at NativeMethodAccessorImpl.java:0``.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any, ClassVar, TypeVar

import pyspark
from pyspark.traceback_utils import SCCallSiteSync

AGENT_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep
PYSPARK_DIR = os.path.dirname(os.path.abspath(pyspark.__file__)) + os.sep

F = TypeVar("F", bound=Callable[..., Any])


def user_call_site(method: str | None = None) -> str | None:
    """``"<method> at <file>:<line>"``: the first frame outside the agent and PySpark, and the
    agent's or PySpark's function it called (or ``method``, the name the user called it by: a
    wrapper's own name is not); None when no frame of the stack is the user's."""
    frame: FrameType | None = sys._getframe(1)
    called = None
    while frame is not None:
        path = frame.f_code.co_filename
        if path.startswith(AGENT_DIR) or path.startswith(PYSPARK_DIR):
            code = frame.f_code
            # a constructor by its class: "LineageContext at job.py:12", not "__init__ at ..."
            called = code.co_qualname.rsplit(".", 2)[-2] if code.co_name == "__init__" and "." in code.co_qualname \
                else code.co_name
        elif called is not None:
            return f"{method or called} at {path}:{frame.f_lineno}"
        frame = frame.f_back
    return None


class CallSite:
    """Spark's call site for what runs inside: ``site``, or the user's line (user_call_site).
    Nested, the inner one holds until it exits, then the outer one again."""

    _open: ClassVar[list[str]] = []

    def __init__(self, sc: Any, site: str | None = None) -> None:
        self.sc = sc
        self.site = site or user_call_site()

    def __enter__(self) -> CallSite:
        if self.site is not None:
            CallSite._open.append(self.site)
            self.sc._jsc.setCallSite(self.site)
            SCCallSiteSync._spark_stack_depth += 1
        return self

    def __exit__(self, *exc: object) -> None:
        if self.site is None:
            return
        SCCallSiteSync._spark_stack_depth -= 1
        CallSite._open.pop()
        self.sc._jsc.setCallSite(CallSite._open[-1] if CallSite._open else None)


def at_user_call_site(method: F) -> F:
    """Runs an action method (of an object with ``sc``) under the user's call site."""

    @functools.wraps(method)
    def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
        with CallSite(self.sc):
            return method(self, *args, **kwargs)

    return wrapped  # type: ignore[return-value]
