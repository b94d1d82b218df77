"""PySpark's own shipped examples (``pyspark/examples/src/main/python/sql``) run unmodified with
record capture switched on by configuration alone (``LINEAGE_ENABLED=true LINEAGE_RECORDS=true
python -m capture_agent run example.py``): the same output as a plain run, and the lineage of
their actions present in the run's folder and traceable from there. The runs share one process
(``examples_runner.py``, one JVM): basic.py plain, then basic.py and arrow.py captured."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.processes, pytest.mark.spark]

ROOT = Path(__file__).resolve().parents[2]
RUNNER = Path(__file__).with_name("examples_runner.py")
PEOPLE_JSON = ['{"name":"Michael"}', '{"name":"Andy", "age":30}', '{"name":"Justin", "age":19}']
PEOPLE_TXT = ["Michael, 29", "Andy, 30", "Justin, 19"]


def example(name: str) -> Path:
    import pyspark

    return Path(pyspark.__file__).parent / "examples" / "src" / "main" / "python" / "sql" / name


def run_examples(folder: Path) -> dict[str, dict[str, Path]]:
    """basic.py plain, then basic.py and arrow.py captured, each from a folder of its own under
    ``folder`` (where its relative resource paths point), as a user runs them; returns each run's
    folder (``out.txt``, ``lineage/``)."""
    made: dict[str, dict[str, Path]] = {"plain": {}, "captured": {}}

    def step(run: str, name: str) -> dict[str, Any]:
        made[run][name] = folder / run / name
        resources = made[run][name] / "examples" / "src" / "main" / "resources"
        resources.mkdir(parents=True)
        (resources / "people.json").write_text("\n".join(PEOPLE_JSON) + "\n")
        (resources / "people.txt").write_text("\n".join(PEOPLE_TXT) + "\n")
        found = {"script": str(example(f"{name}.py")), "args": [], "stdout": str(made[run][name] / "out.txt"),
                 "cwd": str(made[run][name])}
        return found if run == "plain" else {**found, "store": str(made[run][name] / "lineage")}

    plan = folder / "plan.json"
    plan.write_text(json.dumps({
        "plain": [step("plain", "basic")], "captured": [step("captured", "basic"), step("captured", "arrow")],
        "captured_env": {"LINEAGE_ENABLED": "true", "LINEAGE_RECORDS": "true", "LINEAGE_SINK": "noop"},
    }))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYSPARK_PYTHON": sys.executable}
    done = subprocess.run([sys.executable, str(RUNNER), str(plan)], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return made


@pytest.fixture(scope="module")
def examples(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Path]]:
    return run_examples(tmp_path_factory.mktemp("sql_examples"))


def manifest(folder: Path) -> dict[str, Any]:
    (run_json,) = (folder / "lineage").glob("*/run.json")
    return dict(json.loads(run_json.read_text()), run_dir=str(run_json.parent))


def test_sql_basic_runs_unmodified_with_the_same_output_and_its_shows_traced(examples: Any, spark: Any) -> None:
    from capture_agent.record.query.run import LineageRun

    plain = (examples["plain"]["basic"] / "out.txt").read_text()
    assert (examples["captured"]["basic"] / "out.txt").read_text() == plain and "Justin" in plain
    found = manifest(examples["captured"]["basic"])
    shows = [p for p in found["points"] if p["kind"] == "output" and p["op"] == "show"]
    assert len(shows) >= 5, [(p["kind"], p["op"]) for p in found["points"]]
    # `df.filter(df['age'] > 21).show()` shows one row: it traces back to its line of people.json
    lineage = LineageRun(found["run_dir"], spark.sparkContext)
    single = [(p["capture_id"], values) for p in shows
              if len(values := lineage.lineage(p["capture_id"]).collect()) == 1]
    assert single, "no show of one row"
    capture_id, (row,) = single[0]
    traced = lineage.lineage(capture_id).goBackAll().collect()
    person = json.loads(next(line for line in PEOPLE_JSON if f'"{row.name}"' in line))
    assert [r.asDict() for r in traced] == [{"age": person.get("age"), "name": person["name"]}]  # the row read


def test_sql_arrow_runs_unmodified_and_its_to_pandas_is_captured(examples: Any) -> None:
    found = manifest(examples["captured"]["arrow"])
    ops = [(p["kind"], p["op"]) for p in found["points"]]
    assert ("output", "toPandas") in ops and ("input", "createDataFrame") in ops, ops
    # pandas UDFs over whole groups run plain, and are reported so
    assert all("ran plain" not in e.get("reason", "") for e in found["not_captured"])  # reasons name operators
    assert any("Pandas" in e["reason"] for e in found["not_captured"]), found["not_captured"]
