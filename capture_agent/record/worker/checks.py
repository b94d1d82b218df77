"""The one tiny task a LineageContext runs at start: do the executors have what capture needs?"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import Any

REQUIRED = ("pyarrow", "pyroaring")


def dependency_report(iterator: Iterable[Any]) -> Iterator[dict[str, str]]:
    """Task side: the executor's Python and, for each required module, its version or the error."""
    import importlib

    report = {"python": sys.executable, "version": sys.version.split()[0]}
    for name in REQUIRED:
        try:
            module = importlib.import_module(name)
            report[name] = str(getattr(module, "__version__", "installed"))
        except Exception as exc:  # noqa: BLE001 - any import failure is the answer, not an error of the check
            report[name] = f"missing ({type(exc).__name__}: {exc})"
    yield report
