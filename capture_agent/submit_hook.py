"""The agent in a ``spark-submit`` driver, by configuration alone.

``python -m capture_agent install-hook`` writes a ``.pth`` file into the Python's site-packages
whose one line imports this module at interpreter start, only in a process that ``spark-submit``
started for a Python driver (it sets ``PYSPARK_GATEWAY_PORT``) and only when a ``LINEAGE_*``
switch asks for capture: then ``import capture_agent`` installs the hook that enables the agent on
the job's SparkContext (``capture_agent.autoenable``), as ``python -m capture_agent run`` does.
Any other process pays one ``os.environ`` lookup. Nothing here raises into the job.
"""

from __future__ import annotations

import os
import site
import sys
from pathlib import Path

SWITCHES = ("LINEAGE_ENABLED", "LINEAGE_RECORDS")
PTH_NAME = "spark_lineage_agent.pth"


def wanted(environ: dict[str, str] | os._Environ[str] = os.environ) -> bool:
    """A spark-submit driver (``PYSPARK_GATEWAY_PORT`` set) with a capture switch on."""
    return "PYSPARK_GATEWAY_PORT" in environ and any(
        environ.get(name, "").strip().lower() in ("1", "true", "yes", "on") for name in SWITCHES)


def pth_line(checkout: Path | None) -> str:
    """The ``.pth`` line: imports this module in a wanted process (``checkout``: a folder to put
    on ``sys.path`` first, when the agent is not installed in site-packages)."""
    path = "" if checkout is None else f"sys.path.append({str(checkout)!r}), "
    return ("import os, sys; 'PYSPARK_GATEWAY_PORT' in os.environ and "
            f"({path}__import__('capture_agent.submit_hook').submit_hook.start())\n")


def install(target: Path | None = None) -> Path:
    """Writes the ``.pth`` file into ``target`` (default: this Python's site-packages); returns it."""
    folder = target or Path(site.getsitepackages()[0])
    package = Path(__file__).resolve().parent
    installed = any(package.parent == Path(p).resolve() for p in site.getsitepackages())
    pth = folder / PTH_NAME
    pth.write_text(pth_line(None if installed else package.parent))
    return pth


def start() -> None:
    """Enables the agent on the driver's SparkContext when a switch asks for it (never raises)."""
    if not wanted():
        return
    try:
        import capture_agent  # noqa: F401 - its import installs the auto-enable hook
    except Exception as exc:  # noqa: BLE001 - the job runs whatever the agent does
        print(f"lineage: the capture agent did not start: {exc}", file=sys.stderr)
