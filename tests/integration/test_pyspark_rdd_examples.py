"""PySpark's own shipped RDD examples (``pyspark/examples/src/main/python``) run unmodified with
record capture switched on by configuration alone: the same output as a plain run, nothing
reported as not captured, and their lineage traced against oracles computed from the input files.

wordcount runs through ``spark-submit`` itself with only ``LINEAGE_RECORDS=true`` (the driver
picks the agent up through the hook ``python -m capture_agent install-hook`` wrote); the others run
one after another in one process (``examples_runner.py``, one JVM), plain once and then captured
once under ``python -m capture_agent run`` (wordcount's plain run too, which its spark-submit's
output is compared with). (transitive_closure.py is left out: its partitions double each
round, to 2,048 here, and a plain run alone takes minutes.)
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.processes, pytest.mark.spark]

ROOT = Path(__file__).resolve().parents[2]
RUNNER = Path(__file__).with_name("examples_runner.py")


def example(name: str) -> Path:
    import pyspark

    return Path(pyspark.__file__).parent / "examples" / "src" / "main" / "python" / name


def inputs(folder: Path) -> dict[str, Path]:
    """Small inputs for the examples, made from a fixed seed."""
    rng = random.Random(7)
    words = ["spark", "lineage", "record", "trace", "job", "stage", "key", "value"]
    made = {
        "text": "\n".join(" ".join(rng.choice(words) for _ in range(rng.randint(1, 6))) for _ in range(60)),
        "numbers": "\n".join(" ".join(str(rng.randint(0, 40)) for _ in range(rng.randint(1, 4))) for _ in range(40)),
        "links": "\n".join(f"u{rng.randint(0, 9)} u{rng.randint(0, 9)}" for _ in range(40)),
        "points": "\n".join(f"{rng.gauss(c, 0.5):.3f} {rng.gauss(c, 0.5):.3f}" for c in (0, 5) for _ in range(30)),
        "labeled": "\n".join(" ".join([str(rng.choice([-1, 1]))] + [f"{rng.random():.3f}" for _ in range(10)])
                             for _ in range(40)),  # logistic_regression.py's 10 features
    }
    paths = {}
    for name, text in made.items():
        paths[name] = folder / f"{name}.txt"
        paths[name].write_text(text + "\n")
    return paths


def environment(**extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYSPARK_PYTHON": sys.executable,
           "PYSPARK_DRIVER_PYTHON": sys.executable, "LINEAGE_SINK": "noop"}
    for name in ("LINEAGE_ENABLED", "LINEAGE_RECORDS", "PYSPARK_GATEWAY_PORT"):
        env.pop(name, None)
    return {**env, **extra}


STEPS = {"sort": ("sort.py", ["numbers"]),
         "pagerank": ("pagerank.py", ["links", "3"]),
         "pi": ("pi.py", ["1"]),
         "kmeans": ("kmeans.py", ["points", "2", "0.1"]),
         "logistic_regression": ("logistic_regression.py", ["labeled", "2"]),
         "als": ("als.py", ["20", "30", "4", "2", "2"])}


def run_examples(folder: Path, files: dict[str, Path]) -> dict[str, dict[str, Path]]:
    """Runs the examples in one process, plain then captured (and wordcount plain); returns each
    run's folder of each example (``out.txt``, ``lineage/``)."""
    made: dict[str, dict[str, Path]] = {"plain": {}, "captured": {}}

    def step(run: str, name: str, script: str, args: list[str]) -> dict[str, Any]:
        made[run][name] = folder / run / name
        made[run][name].mkdir(parents=True)
        found = {"script": str(example(script)), "args": [str(files[a]) if a in files else a for a in args],
                 "stdout": str(made[run][name] / "out.txt"), "cwd": str(made[run][name])}
        return found if run == "plain" else {**found, "store": str(made[run][name] / "lineage")}

    plain = [step("plain", name, script, args) for name, (script, args) in STEPS.items()]
    plain.append(step("plain", "wordcount", "wordcount.py", ["text"]))
    captured = [step("captured", name, script, args) for name, (script, args) in STEPS.items()]
    plan = folder / "plan.json"
    plan.write_text(json.dumps({"plain": plain, "captured": captured, "captured_env": {"LINEAGE_RECORDS": "true"}}))
    # local[2] as wordcount's spark-submit asks: the same partitions, so its words come in the same order
    env = environment(PYSPARK_SUBMIT_ARGS="--master local[2] pyspark-shell")
    done = subprocess.run([sys.executable, str(RUNNER), str(plan)], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return made


@pytest.fixture(scope="module")
def examples(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("rdd_examples")
    files = inputs(folder)
    return {"files": files, **run_examples(folder, files)}


def run_json(folder: Path) -> dict[str, Any]:
    (found,) = (folder / "lineage").glob("*/run.json")
    return dict(json.loads(found.read_text()), run_dir=str(found.parent))


def text_of(record: Any) -> str:
    """A text source's record: its line (a string, or the Row ``spark.read.text`` gives)."""
    return record if isinstance(record, str) else record.value


def last_output(found: dict[str, Any]) -> str:
    return [p["capture_id"] for p in found["points"] if p["kind"] == "output"][-1]


@pytest.mark.parametrize("name", ["sort", "pagerank", "kmeans", "als"])
def test_an_example_prints_what_it_prints_plain_and_all_its_actions_are_captured(examples: Any, name: str) -> None:
    plain = (examples["plain"][name] / "out.txt").read_text()
    captured = (examples["captured"][name] / "out.txt").read_text()
    assert captured == plain and plain.strip()
    found = run_json(examples["captured"][name])
    assert found["not_captured"] == []
    assert any(p["kind"] == "output" for p in found["points"])


@pytest.mark.parametrize("name", ["pi", "logistic_regression"])
def test_a_random_example_runs_captured_and_prints_its_lines(examples: Any, name: str) -> None:
    def said(run: str) -> list[str]:  # what each line says, without its random values
        lines = (examples[run][name] / "out.txt").read_text().splitlines()
        return [line.split(":")[0].split(" is ")[0] for line in lines if line[:1].isalpha()]

    assert said("captured") == said("plain") and said("plain")
    assert run_json(examples["captured"][name])["not_captured"] == []


def test_sort_traces_a_number_back_to_the_lines_holding_it(examples: Any, spark: Any) -> None:
    from capture_agent.record.query.run import LineageRun

    lines = examples["files"]["numbers"].read_text().splitlines()
    found = run_json(examples["captured"]["sort"])
    run = LineageRun(found["run_dir"], spark.sparkContext)
    output = run.lineage(last_output(found))
    for number in (0, 17, 40):
        if not any(str(number) in line.split(" ") for line in lines):
            continue
        picked: Any = lambda kv, n=number: kv[0] == n  # noqa: E731
        traced = output.filter(picked).goBackAll().collect()
        assert sorted(text_of(r) for r in traced) == sorted(line for line in lines if str(number) in line.split(" "))


def test_pagerank_traces_a_rank_back_to_the_links_into_it(examples: Any, spark: Any) -> None:
    from capture_agent.record.query.run import LineageRun

    lines = examples["files"]["links"].read_text().splitlines()
    found = run_json(examples["captured"]["pagerank"])
    run = LineageRun(found["run_dir"], spark.sparkContext)
    (url, _), *_ = sorted(run.lineage(last_output(found)).collect())
    traced = {text_of(r) for r in run.lineage(last_output(found)).filter(lambda kv: kv[0] == url).goBackAll().collect()}
    # a rank is made of the contributions of the pages linking to it, after 3 rounds: those links
    # are in its lineage, and nothing that is not a line of the input
    assert {line for line in lines if line.split(" ")[1] == url} <= traced <= set(lines)


def test_spark_submit_of_wordcount_is_captured_by_configuration_alone(tmp_path: Path, examples: Any,
                                                                      spark: Any) -> None:
    import pyspark

    from capture_agent.record.query.run import LineageRun

    subprocess.run([sys.executable, "-m", "capture_agent", "install-hook"], check=True, capture_output=True,
                   env=environment())
    text = examples["files"]["text"]
    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    command = [str(submit), "--master", "local[2]", str(example("wordcount.py")), str(text)]
    bin_path = f"{Path(sys.executable).parent}:{os.environ['PATH']}"
    captured = subprocess.run(command, env=environment(PATH=bin_path, LINEAGE_RECORDS="true",
                                                       LINEAGE_STORE=str(tmp_path / "lineage")),
                              capture_output=True, text=True, timeout=600)
    assert captured.returncode == 0, captured.stderr[-2000:]
    plain = (examples["plain"]["wordcount"] / "out.txt").read_text()  # the same script and input, run plain
    assert captured.stdout == plain and "spark: " in plain
    found = run_json(tmp_path)
    assert found["not_captured"] == []
    lines = text.read_text().splitlines()
    run = LineageRun(found["run_dir"], spark.sparkContext)
    output = run.lineage(last_output(found))
    back = output.filter(lambda kv: kv[0] == "trace").goBackAll().collect()
    assert sorted(text_of(r) for r in back) == sorted(line for line in lines if "trace" in line.split(" "))
    # forward from the first line: the counts of its words
    source = next(p["capture_id"] for p in found["points"] if p["kind"] == "input")
    first = run.lineage(source).filter(lambda r: text_of(r) == lines[0]).goNextAll().collect()
    assert sorted(word for word, _ in first) == sorted(set(lines[0].split(" ")))
