"""PySpark's own shipped examples (``pyspark/examples/src/main/python/sql``) run unmodified with
record capture switched on by configuration alone (``LINEAGE_ENABLED=true LINEAGE_RECORDS=true
python -m capture_agent run example.py``): the same output as a plain run, and the lineage of
their actions present in the run's folder and traceable from there."""

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
PEOPLE_JSON = ['{"name":"Michael"}', '{"name":"Andy", "age":30}', '{"name":"Justin", "age":19}']
PEOPLE_TXT = ["Michael, 29", "Andy, 30", "Justin, 19"]


def example(name: str) -> Path:
    import pyspark

    return Path(pyspark.__file__).parent / "examples" / "src" / "main" / "python" / "sql" / name


def run(script: Path, folder: Path, captured: bool) -> subprocess.CompletedProcess[str]:
    """The example as a user runs it from ``folder`` (where its relative resource paths point)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYSPARK_PYTHON": sys.executable}
    command = [sys.executable, str(script)]
    if captured:
        env.update(LINEAGE_ENABLED="true", LINEAGE_RECORDS="true", LINEAGE_SINK="noop",
                   LINEAGE_STORE=str(folder / "lineage"))
        command = [sys.executable, "-m", "capture_agent", "run", str(script)]
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=600)


def manifest(folder: Path) -> dict[str, Any]:
    (run_json,) = (folder / "lineage").glob("*/run.json")
    return dict(json.loads(run_json.read_text()), run_dir=str(run_json.parent))


def test_sql_basic_runs_unmodified_with_the_same_output_and_its_shows_traced(tmp_path: Path, spark: Any) -> None:
    from capture_agent.record.query.run import LineageRun

    resources = tmp_path / "examples" / "src" / "main" / "resources"
    resources.mkdir(parents=True)
    (resources / "people.json").write_text("\n".join(PEOPLE_JSON) + "\n")
    (resources / "people.txt").write_text("\n".join(PEOPLE_TXT) + "\n")
    plain = run(example("basic.py"), tmp_path, captured=False)
    assert plain.returncode == 0, plain.stderr[-2000:]
    captured = run(example("basic.py"), tmp_path, captured=True)
    assert captured.returncode == 0, captured.stderr[-2000:]
    assert captured.stdout == plain.stdout and "Justin" in plain.stdout
    found = manifest(tmp_path)
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


def test_sql_arrow_runs_unmodified_and_its_to_pandas_is_captured(tmp_path: Path) -> None:
    captured = run(example("arrow.py"), tmp_path, captured=True)
    assert captured.returncode == 0, captured.stderr[-2000:]
    found = manifest(tmp_path)
    ops = [(p["kind"], p["op"]) for p in found["points"]]
    assert ("output", "toPandas") in ops and ("input", "createDataFrame") in ops, ops
    # pandas UDFs over whole groups run plain, and are reported so
    assert all("ran plain" not in e.get("reason", "") for e in found["not_captured"])  # reasons name operators
    assert any("Pandas" in e["reason"] for e in found["not_captured"]), found["not_captured"]
