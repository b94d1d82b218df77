"""Runs several of PySpark's shipped example scripts, unmodified, one after another in this one
process (one JVM: cheaper than a process each), each with its arguments and working folder, its
printed output written to a file of its own: first the plain steps, then the captured ones under
``python -m capture_agent run`` (its own entry point, called here: capture is switched on from then
on, as for a script that command starts), each with its lineage in a store folder of its own.

    python examples_runner.py plan.json
    # {"plain": [step...], "captured": [step...], "captured_env": {...}}
    # step: {"script", "args", "stdout", "cwd", "store" (captured steps)}
"""

from __future__ import annotations

import contextlib
import json
import os
import runpy
import sys
from typing import Any


def run_steps(steps: list[dict[str, Any]]) -> None:
    for step in steps:
        if "store" in step:
            os.environ["LINEAGE_STORE"] = step["store"]
        os.chdir(step["cwd"])
        sys.argv = [step["script"], *step["args"]]
        with open(step["stdout"], "w") as out, contextlib.redirect_stdout(out):
            runpy.run_path(step["script"], run_name="__main__")


def main(plan_file: str, part: str = "plain") -> int:
    with open(plan_file) as f:
        plan = json.load(f)
    run_steps(plan[part])
    if part == "plain" and plan["captured"]:
        # The JVM the plain steps started stays up; each captured step's SparkContext is a new one in it.
        from capture_agent.cli import main as agent

        os.environ.update(plan["captured_env"])
        return agent(["run", os.path.abspath(__file__), plan_file, "captured"])
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
