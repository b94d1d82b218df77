"""The agent installs from a wheel: capture_agent (with record/ and the Java listener), its run-time
dependencies, and nothing of the server. Needs PyPI (or pip's cache); deselect with -m "not packaging"."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.processes, pytest.mark.packaging, pytest.mark.timeout(900)]
# What setuptools must not see in the copy it builds from (build output stays out of the checkout).
_SKIP = shutil.ignore_patterns(".git", ".venv", "node_modules", "var", "build", "dist", "*.egg-info",
                               "__pycache__", ".pytest_cache", ".hypothesis", ".ruff_cache", ".mypy_cache")


def run(*command: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "DJANGO_SETTINGS_MODULE")}
    done = subprocess.run([str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=840)
    assert done.returncode == 0, f"{command} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    shutil.copytree(ROOT, work / "checkout", ignore=_SKIP, symlinks=True)
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", work / "dist", "./checkout", cwd=work)
    (built,) = (work / "dist").glob("*.whl")
    return built


def test_the_wheel_holds_the_agent_and_its_java_listener_only(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    sources = {p.relative_to(ROOT).as_posix() for p in (ROOT / "capture_agent").rglob("*.py")}
    sources |= {p.relative_to(ROOT).as_posix() for p in (ROOT / "capture_agent" / "java").rglob("*.java")}
    assert sources <= set(names), sorted(sources - set(names))
    assert "capture_agent/record/capture/context.py" in names and "capture_agent/sinks/http.py" in names
    if (ROOT / "capture_agent" / "_jars" / "lineage-listener.jar").exists():
        assert "capture_agent/_jars/lineage-listener.jar" in names
    tops = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert tops == {"capture_agent"}, tops


def test_the_wheel_requires_the_agents_dependencies_and_not_django(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        (metadata,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        requires = [line.split(":", 1)[1].strip() for line in archive.read(metadata).decode().splitlines()
                    if line.startswith("Requires-Dist:")]
    always = [r for r in requires if "extra ==" not in r]
    names = {r.split(";")[0].split("[")[0].split("<")[0].split(">")[0].split("=")[0].strip().lower() for r in always}
    assert names == {"google-re2", "pyarrow", "pyroaring", "pyspark"}, always
    assert any(r.startswith("Django") and 'extra == "server"' in r for r in requires)


def test_the_wheel_installs_in_a_fresh_virtualenv_and_imports_outside_the_checkout(
    wheel: Path, tmp_path: Path
) -> None:
    start = time.monotonic()
    run(sys.executable, "-m", "venv", tmp_path / "env", cwd=tmp_path)
    python = tmp_path / "env" / "bin" / "python"
    run(python, "-m", "pip", "install", "--quiet", wheel, cwd=tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = run(
        python, "-c",
        "from capture_agent import LineageContext, enable\n"
        "import importlib.util, capture_agent\n"
        "from capture_agent.build_jar import java_sources\n"
        "print(capture_agent.__file__, len(java_sources()), importlib.util.find_spec('django') is None)\n",
        cwd=elsewhere)
    location, java_count, no_django = done.stdout.split()
    assert location.startswith(str(tmp_path / "env")), location
    assert int(java_count) == len(list((ROOT / "capture_agent" / "java").rglob("*.java")))
    assert no_django == "True"
    print(f"venv + pip install + import: {time.monotonic() - start:.1f}s")
