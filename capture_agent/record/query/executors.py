"""What executors need before they run our tasks: the task code shipped by value, and a check
that their Python has what it needs (once per application, with one tiny task)."""

from __future__ import annotations

import sys
from typing import Any

from pyspark import cloudpickle

from capture_agent.record.errors import LineageError
from capture_agent.record.query.call_site import CallSite
from capture_agent.record.worker.checks import REQUIRED, dependency_report

_CHECKED: set[str] = set()  # applications whose executors passed the dependency check
_TASK_PACKAGES = ("capture_agent.record.storage", "capture_agent.record.worker", "capture_agent.record.errors")
CLUSTER_HELP = "see the README section 'Running a captured job on a cluster'"


def ship_task_code() -> None:
    """Makes the task code travel with the tasks (by value), as every Spark job of ours needs."""
    # Executors need not have this package installed (or see the driver's sys.path): the task
    # code (worker, and the storage layouts it writes through) travels with the tasks.
    for name in _TASK_PACKAGES:
        cloudpickle.register_pickle_by_value(sys.modules[name])


def check_executors(sc: Any) -> None:
    """Runs one tiny task: raises LineageError saying how to fix it when the executors' Python
    lacks what the capture code needs (checked once per application)."""
    app_id = str(sc.applicationId)
    if app_id in _CHECKED:
        return
    try:
        # named after the user's line that made the LineageContext, not this one
        with CallSite(sc):
            [report] = sc.parallelize([0], 1).mapPartitions(dependency_report).collect()
    except Exception as exc:
        raise LineageError(f"record-level capture cannot run a task on the executors ({type(exc).__name__}: "
                           f"{str(exc).splitlines()[0] if str(exc) else ''}); executors run PYSPARK_PYTHON="
                           f"{sc.pythonExec!r}, which needs {', '.join(REQUIRED)}: {CLUSTER_HELP}") from exc
    missing = [f"{name} {report[name]}" for name in REQUIRED if report[name].startswith("missing")]
    if missing:
        raise LineageError(f"the executors' Python ({report['python']}, Python {report['version']}) lacks what "
                           f"record-level capture needs: {'; '.join(missing)}. Point PYSPARK_PYTHON at an "
                           "interpreter that has pyarrow and pyroaring on every node, ship a packed virtualenv "
                           f"with spark.archives, or install the agent on the nodes ({CLUSTER_HELP})")
    _CHECKED.add(app_id)
