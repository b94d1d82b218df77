"""Runs several of PySpark's shipped example scripts, unmodified, one after another in this one
process (one JVM: cheaper than a process each), each with its arguments, its printed output
written to a file of its own and, when capture is on, its lineage to a store folder of its own.

    python examples_runner.py plan.json       # [{"script", "args", "stdout", "store"}...]
"""

from __future__ import annotations

import contextlib
import json
import os
import runpy
import sys


def main(plan_file: str) -> None:
    with open(plan_file) as f:
        plan = json.load(f)
    for step in plan:
        os.environ["LINEAGE_STORE"] = step["store"]
        sys.argv = [step["script"], *step["args"]]
        with open(step["stdout"], "w") as out, contextlib.redirect_stdout(out):
            runpy.run_path(step["script"], run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1])
