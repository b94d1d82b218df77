"""The team deployment in docker/: the compose file, the Dockerfile and the entrypoint.

There is no Docker engine on the test machines, so images are never built here. These tests read
the files, run the entrypoint script outside a container, and ask Debian's `docker-compose` (or
the `docker compose` plugin, when either is installed) to validate the compose file.
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "docker"
COMPOSE_FILE = DOCKER / "compose.yaml"
DOCKERFILE = DOCKER / "Dockerfile"
DOCKERIGNORE = DOCKER / "Dockerfile.dockerignore"
ENTRYPOINT = DOCKER / "entrypoint.sh"

SERVICES = {"web", "worker", "postgres", "redis", "spark-master", "spark-worker"}
APP_SERVICES = ("web", "worker", "spark-master", "spark-worker")
STORE = "/data/lineage"
SECRET_KEY_REF = re.compile(r"^\$\{SECRET_KEY:\?[^}]+\}$")
INTERPOLATION = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(:?[-?][^}]*)?\}")
SECRET_NAME = re.compile(r"SECRET|PASSWORD|TOKEN|API_KEY", re.IGNORECASE)


# ---- helpers -------------------------------------------------------------------------------------


def load_compose(text: str | None = None) -> dict[str, Any]:
    yaml = pytest.importorskip("yaml", reason="PyYAML is not installed")
    return yaml.safe_load(COMPOSE_FILE.read_text() if text is None else text)


def environment(service: dict[str, Any]) -> dict[str, str]:
    """A service's environment as a dict, whether written as a mapping or as KEY=VALUE items."""
    env = service.get("environment") or {}
    if isinstance(env, list):
        return dict(item.split("=", 1) if "=" in item else (item, "") for item in env)
    return {key: "" if value is None else str(value) for key, value in env.items()}


def volume_mounts(service: dict[str, Any]) -> dict[str, str]:
    """target -> source of a service's volumes, short or long syntax."""
    mounts = {}
    for volume in service.get("volumes") or []:
        if isinstance(volume, str):
            source, target = volume.split(":")[:2]
        else:
            source, target = volume.get("source", ""), volume["target"]
        mounts[target] = source
    return mounts


def healthcheck_command(service: dict[str, Any]) -> str:
    test = service["healthcheck"]["test"]
    return test if isinstance(test, str) else " ".join(test)


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs of the Dockerfile, continuation lines joined, comments dropped."""
    instructions: list[tuple[str, str]] = []
    current = ""
    for line in DOCKERFILE.read_text().splitlines():
        stripped = line.strip()
        if not current and (not stripped or stripped.startswith("#")):
            continue
        if current and stripped.startswith("#"):
            continue
        current += " " + stripped
        if current.endswith("\\"):
            current = current[:-1]
            continue
        keyword, _, rest = current.strip().partition(" ")
        instructions.append((keyword.upper(), rest.strip()))
        current = ""
    return instructions


def stages() -> list[list[tuple[str, str]]]:
    """The Dockerfile's build stages, each a list of instructions starting with its FROM."""
    result: list[list[tuple[str, str]]] = []
    for keyword, args in dockerfile_instructions():
        if keyword == "FROM":
            result.append([])
        if result:
            result[-1].append((keyword, args))
    return result


def compose_command() -> list[str] | None:
    """Debian's docker-compose, else the docker compose plugin, else None."""
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    if shutil.which("docker"):
        probe = subprocess.run(["docker", "compose", "version"], capture_output=True, timeout=30)
        if probe.returncode == 0:
            return ["docker", "compose"]
    return None


# ---- compose.yaml --------------------------------------------------------------------------------


def test_compose_has_the_six_services_each_with_a_healthcheck():
    compose = load_compose()
    assert set(compose["services"]) == SERVICES
    for name, service in compose["services"].items():
        assert service.get("healthcheck", {}).get("test"), f"{name} has no healthcheck"
    services = compose["services"]
    assert "pg_isready" in healthcheck_command(services["postgres"])
    assert "redis-cli ping" in healthcheck_command(services["redis"])
    assert "/healthz" in healthcheck_command(services["web"])
    assert ":8080/" in healthcheck_command(services["spark-master"])
    assert ":8081/" in healthcheck_command(services["spark-worker"])


def test_app_services_share_one_image_built_from_docker_dockerfile():
    services = load_compose()["services"]
    images = {services[name]["image"] for name in APP_SERVICES}
    assert len(images) == 1, f"web, worker and spark services use different images: {images}"
    for name in ("web", "worker"):
        build = services[name]["build"]
        assert build["context"] == "..", f"{name} must build from the repository root"
        assert build["dockerfile"] == "docker/Dockerfile"
        assert (COMPOSE_FILE.parent / build["context"] / build["dockerfile"]).resolve() == DOCKERFILE


def test_postgres_and_store_use_named_volumes():
    compose = load_compose()
    services, volumes = compose["services"], compose.get("volumes") or {}
    postgres = services["postgres"]
    assert re.match(r"^postgres:1[56]\b", postgres["image"]), postgres["image"]
    pg_volume = volume_mounts(postgres)["/var/lib/postgresql/data"]
    assert pg_volume in volumes, "PostgreSQL's data must live in a named volume"

    store_volumes = set()
    for name in APP_SERVICES:
        mounts = volume_mounts(services[name])
        assert STORE in mounts, f"{name} does not mount the lineage store at {STORE}"
        store_volumes.add(mounts[STORE])
        assert environment(services[name]).get("LINEAGE_STORE") == STORE, name
    assert len(store_volumes) == 1 and store_volumes <= set(volumes), store_volumes


def test_server_environment():
    services = load_compose()["services"]
    for name in ("web", "worker"):
        env = environment(services[name])
        assert re.fullmatch(
            r"postgres://lineage:(lineage|\$\{POSTGRES_PASSWORD(:-lineage)?\})@postgres:5432/lineage",
            env["DATABASE_URL"],
        ), env["DATABASE_URL"]
        assert env["CELERY_BROKER_URL"] == "redis://redis:6379/0"
        assert env["LINEAGE_SPARK_MASTER"] == "spark://spark-master:7077"
        assert SECRET_KEY_REF.match(env["SECRET_KEY"]), "SECRET_KEY must be ${SECRET_KEY:?...}"
        assert env.get("ALLOWED_HOSTS"), f"{name} sets no ALLOWED_HOSTS"
    # The web healthcheck calls 127.0.0.1, and the other containers reach the server as `web`.
    hosts = environment(services["web"])["ALLOWED_HOSTS"].split(",")
    assert "127.0.0.1" in hosts and "web" in hosts
    assert "8000" in str(services["web"]["ports"][0])


def test_no_secret_is_a_literal():
    compose = load_compose()
    for name, service in compose["services"].items():
        env = environment(service)
        assert "LINEAGE_TOKEN" not in env, f"{name}: agent tokens are created at run time, never stored here"
        for key, value in env.items():
            if SECRET_NAME.search(key):
                assert INTERPOLATION.search(value), f"{name}: {key} is a literal; read it from a variable"
        if "DATABASE_URL" in env and "@" in env["DATABASE_URL"]:
            userinfo = env["DATABASE_URL"].split("://", 1)[1].split("@", 1)[0]
            password = userinfo.partition(":")[2]
            assert not password or INTERPOLATION.fullmatch(password), f"{name}: DATABASE_URL's password is a literal"
    # No constant key anywhere outside comments, anchors included.
    body = "\n".join(line for line in COMPOSE_FILE.read_text().splitlines() if not line.lstrip().startswith("#"))
    for match in re.finditer(r"^\s*-?\s*SECRET_KEY\s*[:=]\s*(.+?)\s*$", body, re.MULTILINE):
        assert SECRET_KEY_REF.match(match.group(1).strip("'\"")), f"SECRET_KEY is set to {match.group(1)}"


def test_depends_on_waits_for_healthy_services():
    services = load_compose()["services"]
    expected = {
        "web": {"postgres", "redis"},
        "worker": {"postgres", "redis"},
        "spark-worker": {"spark-master"},
    }
    for name, needed in expected.items():
        depends_on = services[name]["depends_on"]
        assert isinstance(depends_on, dict), f"{name}: depends_on needs conditions"
        assert needed <= set(depends_on), f"{name} must wait for {needed}"
        for dependency, spec in depends_on.items():
            assert spec.get("condition") == "service_healthy", f"{name} -> {dependency}"
            assert "healthcheck" in services[dependency]


def test_spark_services_run_spark_class_from_the_installed_pyspark():
    services = load_compose()["services"]
    master = services["spark-master"]["command"]
    worker = services["spark-worker"]["command"]
    master = master if isinstance(master, list) else shlex.split(master)
    worker = worker if isinstance(worker, list) else shlex.split(worker)
    assert master[1:] == [
        "org.apache.spark.deploy.master.Master", "--host", "spark-master", "--port", "7077", "--webui-port", "8080",
    ]
    assert worker[1] == "org.apache.spark.deploy.worker.Worker" and worker[2] == "spark://spark-master:7077"
    # The path must be where the image's Python installs pyspark (SPARK_HOME in the Dockerfile).
    spark_home = re.search(r"SPARK_HOME=(\S+)", DOCKERFILE.read_text()).group(1)
    python_version = re.search(r"^FROM python:(\d+\.\d+)", DOCKERFILE.read_text(), re.MULTILINE).group(1)
    assert spark_home == f"/usr/local/lib/python{python_version}/site-packages/pyspark"
    for command in (master, worker):
        assert command[0] in ("spark-class", f"{spark_home}/bin/spark-class"), command[0]


def test_compose_header_tells_outside_jobs_what_to_set():
    header = "".join(line for line in COMPOSE_FILE.read_text().splitlines(True) if line.startswith("#"))
    needles = ("LINEAGE_SERVER_URL=https://", ":8000", "LINEAGE_TOKEN", "exec web python manage.py create_agent_token")
    for needle in needles:
        assert needle in header, f"the compose file's header comment does not mention {needle!r}"


# ---- docker-compose config -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def compose_cli() -> list[str]:
    command = compose_command()
    if command is None:
        pytest.skip("neither docker-compose nor the docker compose plugin is installed")
    return command


def run_compose_config(compose_cli: list[str], tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    empty_env_file = tmp_path / "empty.env"
    empty_env_file.write_text("")
    clean = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", str(tmp_path)), **env}
    return subprocess.run(
        [*compose_cli, "--env-file", str(empty_env_file), "-f", str(COMPOSE_FILE), "config"],
        capture_output=True, text=True, timeout=120, env=clean, cwd=ROOT,
    )


def test_docker_compose_config_validates(compose_cli: list[str], tmp_path: Path):
    done = run_compose_config(compose_cli, tmp_path, SECRET_KEY="only-for-this-test", ALLOWED_HOSTS="lineage.example")
    assert done.returncode == 0, done.stderr
    resolved = load_compose(done.stdout)
    assert set(resolved["services"]) == SERVICES
    for name in ("web", "worker"):
        env = environment(resolved["services"][name])
        assert env["SECRET_KEY"] == "only-for-this-test"
        assert env["DATABASE_URL"] == "postgres://lineage:lineage@postgres:5432/lineage"
        assert "lineage.example" in env["ALLOWED_HOSTS"].split(",")
        assert Path(resolved["services"][name]["build"]["context"]).resolve() == ROOT


def test_docker_compose_config_refuses_a_missing_secret_key(compose_cli: list[str], tmp_path: Path):
    done = run_compose_config(compose_cli, tmp_path)
    assert done.returncode != 0
    assert "SECRET_KEY" in done.stderr


# ---- Dockerfile ----------------------------------------------------------------------------------


def test_frontend_stage_builds_with_npm_ci_from_the_lock_file():
    first = stages()[0]
    keyword, args = first[0]
    assert re.match(r"^node:20\S*\s+AS\s+\w+", args, re.IGNORECASE), args
    copies = [a for k, a in first if k == "COPY"]
    assert any("frontend/package.json" in a and "frontend/package-lock.json" in a for a in copies)
    runs = " && ".join(a for k, a in first if k == "RUN")
    assert "npm ci" in runs and "npm run build" in runs


def test_final_stage_installs_the_lock_builds_the_jar_and_runs_as_non_root():
    all_stages = stages()
    frontend_name = all_stages[0][0][1].split()[-1]
    final = all_stages[-1]
    assert re.match(r"^python:3\.11-slim-bookworm$", final[0][1]), final[0][1]
    runs = [a for k, a in final if k == "RUN"]
    run_text = "\n".join(runs)
    assert "openjdk-17-jdk-headless" in run_text

    # The same lock the README installs: requirements.txt, and nothing installed by name besides it.
    assert any(re.search(r"COPY\s+requirements\.txt\b", f"{k} {a}") for k, a in final)
    pip_installs = re.findall(r"pip install ([^;&\n]*)", run_text)
    assert pip_installs, "the final stage installs no Python packages"
    for arguments in pip_installs:
        assert arguments.split() == ["-r", "requirements.txt"], f"pip install {arguments}: install the lock only"

    assert "python -m capture_agent.build_jar" in run_text
    assert re.search(r"manage\.py collectstatic --noinput", run_text)
    copies_from = [a for k, a in final if k == "COPY" and a.startswith("--from=")]
    assert any(a.startswith(f"--from={frontend_name} ") and "dist" in a for a in copies_from), copies_from

    users = [a for k, a in final if k == "USER"]
    assert users and users[-1] not in ("root", "0"), "the image must run as a non-root user"
    assert ("EXPOSE", "8000") in final
    cmd = next(a for k, a in reversed(final) if k == "CMD")
    assert "gunicorn" in cmd and "lineage_server.wsgi" in cmd and "0.0.0.0:8000" in cmd
    entrypoint = next(a for k, a in reversed(final) if k == "ENTRYPOINT")
    assert "entrypoint" in entrypoint and "docker/entrypoint.sh" in run_text


def test_no_secret_key_is_baked_into_the_image():
    for keyword, args in dockerfile_instructions():
        if keyword in ("ENV", "ARG"):
            assert "SECRET_KEY" not in args, f"{keyword} {args}: SECRET_KEY must come from the runtime"


def test_the_lock_is_the_one_the_project_installs():
    lock = (ROOT / "requirements.txt").read_text()
    assert re.search(r"^pyspark==\d", lock, re.MULTILINE), "requirements.txt is not the full lock"
    assert re.search(r"^gunicorn==\d", lock, re.MULTILINE)
    assert "-r requirements.txt" in (ROOT / "Makefile").read_text()


def test_dockerignore_excludes_local_state():
    lines = DOCKERIGNORE.read_text().splitlines()
    patterns = {line.strip() for line in lines if line.strip() and not line.startswith("#")}
    for needed in (".venv", "var", "frontend/dist", ".git"):
        assert needed in patterns, f"{needed} is not in {DOCKERIGNORE.name}"
    assert patterns & {"node_modules", "**/node_modules", "frontend/node_modules"}


# ---- entrypoint.sh -------------------------------------------------------------------------------


def test_entrypoint_is_valid_sh_and_migrates_only_for_web():
    subprocess.run(["sh", "-n", str(ENTRYPOINT)], check=True, timeout=30)
    text = ENTRYPOINT.read_text()
    web_branch = re.search(r"^\s*web\)(.*?);;", text, re.MULTILINE | re.DOTALL).group(1)
    assert "migrate --noinput" in web_branch
    assert text.count("migrate --noinput") == 1
    assert text.rstrip().endswith('exec "$@"')


def entrypoint_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(tmp_path),
        "PYTHONPATH": str(ROOT),
        "DJANGO_SETTINGS_MODULE": "lineage_server.settings",
        "LINEAGE_VAR_DIR": str(tmp_path / "var"),
        "APP_DIR": str(ROOT),
        "SECRET_KEY": "only-for-this-test",
        "CELERY_BROKER_URL": "memory://",
    }
    env.update(extra)
    return env


def test_entrypoint_execs_other_commands_without_touching_the_database(tmp_path: Path):
    done = subprocess.run(
        ["sh", str(ENTRYPOINT), "echo", "spark ran"], capture_output=True, text=True, timeout=60,
        env=entrypoint_env(tmp_path, CONTAINER_ROLE="spark"),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "spark ran"
    assert not (tmp_path / "var").exists()


def test_entrypoint_web_role_migrates_then_runs_the_command(tmp_path: Path):
    done = subprocess.run(
        ["sh", str(ENTRYPOINT), "gunicorn", "--version"], capture_output=True, text=True, timeout=180,
        env=entrypoint_env(tmp_path),
    )
    assert done.returncode == 0, done.stderr
    assert "Applying catalog.0001_initial... OK" in done.stdout
    assert "gunicorn" in done.stdout.splitlines()[-1]
    assert (tmp_path / "var" / "lineage.sqlite3").exists()


def test_entrypoint_worker_role_gives_up_when_the_database_never_answers(tmp_path: Path):
    done = subprocess.run(
        ["sh", str(ENTRYPOINT), "celery", "--version"], capture_output=True, text=True, timeout=60,
        env=entrypoint_env(tmp_path, DB_WAIT_TIMEOUT="1", DATABASE_URL="postgres://lineage:x@127.0.0.1:1/lineage"),
    )
    assert done.returncode == 1
    assert "did not answer" in done.stderr
    assert "Applying" not in done.stdout
