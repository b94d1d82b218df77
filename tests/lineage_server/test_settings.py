"""Settings: typed environment variables with clear errors, and importing settings writes nothing."""

from __future__ import annotations

import ast
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from lineage_server import env
from lineage_server.env import Flag, Folder, Integer, Names, Text, Url

ROOT = Path(__file__).resolve().parents[2]
SHOW_SETTINGS = """
import django
django.setup()
from django.conf import settings
import hashlib
print(hashlib.sha256(settings.SECRET_KEY.encode()).hexdigest())
print(sorted(settings.LINEAGE))
print(settings.ALLOWED_HOSTS, settings.DEBUG, settings.LINEAGE["PAGE_SIZE"])
"""


def _run(argv: list[str], env_vars: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run Python in a fresh process with the session's settings switches removed, then ``env_vars``."""
    unset = ("SECRET_KEY", "DATABASE_URL", "CELERY_BROKER_URL", "LINEAGE_STORE", "DJANGO_ALLOW_ASYNC_UNSAFE")
    environ = {k: v for k, v in os.environ.items() if k not in unset}
    environ.update(env_vars, DJANGO_SETTINGS_MODULE="lineage_server.settings")
    return subprocess.run([sys.executable, *argv], cwd=ROOT, env=environ, capture_output=True, text=True, timeout=120)


def _python(code: str, env_vars: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return _run(["-c", code], env_vars)


def _manage(*args: str, env_vars: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return _run(["manage.py", *args], env_vars)


@pytest.mark.parametrize(
    ("setting", "raw", "value"),
    [
        (Flag("X_FLAG", False, "."), "TRUE", True),
        (Flag("X_FLAG", True, "."), "off", False),
        (Integer("X_INT", 5, ".", minimum=1, maximum=9), " 9 ", 9),
        (Names("X_NAMES", (), "."), " a, ,b ,", ("a", "b")),
        (Url("X_URL", "", ".", schemes=("redis", "amqp")), "redis://:pw@host:6379/0", "redis://:pw@host:6379/0"),
        (Text("X_TEXT", "", "."), "local[4]", "local[4]"),
        (Folder("X_DIR", Path("/x"), "."), "/srv/lineage", Path("/srv/lineage")),
        (Folder("X_DIR", Path("/x"), "."), "rel/var", env.BASE_DIR / "rel/var"),
    ],
)
def test_each_kind_parses_its_values(setting, raw, value):
    assert setting.read({setting.name: raw}) == value


@pytest.mark.parametrize(
    ("setting", "raw", "message"),
    [
        (Flag("X_FLAG", False, "."), "maybe", "X_FLAG='maybe': not a boolean"),
        (Integer("X_INT", 5, ".", minimum=1), "five", "X_INT='five': not an integer"),
        (Integer("X_INT", 5, ".", minimum=1), "0", "X_INT='0': must be at least 1"),
        (Integer("X_INT", 5, ".", maximum=9), "10", "X_INT='10': must be at most 9"),
        (Url("X_URL", "", "."), "localhost:6379", "X_URL='localhost:6379': not a URL"),
        (Url("X_URL", "", ".", schemes=("redis",)), "amqp://h", "unsupported scheme 'amqp'"),
    ],
)
def test_a_bad_value_is_improperly_configured_naming_the_variable(setting, raw, message):
    with pytest.raises(ImproperlyConfigured, match=message.replace("[", r"\[")):
        setting.read({setting.name: raw})


def test_a_secret_value_is_never_echoed_in_an_error():
    with pytest.raises(ImproperlyConfigured) as error:
        env.DATABASE_URL.read({"DATABASE_URL": "postgres//lineage:hunter2@db/lineage"})
    assert "DATABASE_URL" in str(error.value) and "hunter2" not in str(error.value)


def test_unset_or_blank_takes_the_default_and_the_readme_text_is_kept_apart():
    assert env.PAGE_SIZE.read({}) == 50 and env.PAGE_SIZE.read({"LINEAGE_PAGE_SIZE": "  "}) == 50
    assert env.ALLOWED_HOSTS.default_text == "localhost,127.0.0.1,[::1]"
    assert env.DEBUG.default_text == "false" and env.HTTPS.default_text == "true"
    assert (env.DATABASE_URL.default, env.DATABASE_URL.default_text) == ("", "(SQLite file var/lineage.sqlite3)")
    assert (env.VAR_DIR.default, env.VAR_DIR.default_text) == (env.BASE_DIR / "var", "var/")
    assert env.CSRF_TRUSTED_ORIGINS.default_text == ""


def test_settings_read_the_environment_only_through_env():
    tree = ast.parse((ROOT / "lineage_server" / "settings.py").read_text())
    reads = [
        ast.unparse(node)
        for node in ast.walk(tree)
        if (isinstance(node, ast.Attribute) and node.attr in {"environ", "getenv"})
        or (isinstance(node, ast.Name) and node.id in {"environ", "getenv"})
    ]
    assert reads == []


def test_importing_settings_creates_no_folder_and_writes_no_file(tmp_path):
    var = tmp_path / "var"
    done = _python(SHOW_SETTINGS, {"LINEAGE_VAR_DIR": str(var), "CELERY_BROKER_URL": "filesystem://"})
    assert done.returncode == 0, done.stderr
    assert not var.exists(), list(var.rglob("*"))
    assert "uses a temporary key" in done.stderr
    assert "SPARK_MASTER" in done.stdout  # read for the trace worker's Spark session


def test_ensure_local_setup_keeps_one_key_that_every_later_process_shares(tmp_path):
    var = tmp_path / "nested" / "var"
    env_vars = {"LINEAGE_VAR_DIR": str(var)}
    migrated = _manage("migrate", "--noinput", "-v", "0", env_vars=env_vars)
    assert migrated.returncode == 0, migrated.stderr  # the embedded database made its folder
    assert (var / "lineage.sqlite3").exists() and not (var / "secret_key").exists()
    setup = _manage("ensure_local_setup", "--var", str(var), env_vars=env_vars)
    assert setup.returncode == 0, setup.stderr
    key_file = var / "secret_key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    key = key_file.read_text()
    first, second = (_python(SHOW_SETTINGS, env_vars) for _ in range(2))
    assert first.stdout.splitlines()[0] == second.stdout.splitlines()[0]
    assert "temporary key" not in first.stderr + second.stderr
    assert _manage("ensure_local_setup", "--var", str(var), env_vars=env_vars).returncode == 0
    assert key_file.read_text() == key  # kept


def test_the_filesystem_broker_makes_its_folders_when_a_channel_opens(tmp_path):
    from kombu import Connection

    folders = {name: tmp_path / "celery" / name for name in ("queue", "control")}
    options = {
        "data_folder_in": str(folders["queue"]),
        "data_folder_out": str(folders["queue"]),
        "control_folder": str(folders["control"]),
        "store_processed": False,
    }
    with Connection("filesystem://", transport_options=options) as conn:
        queue = conn.SimpleQueue("made-on-open")
        queue.put({"n": 1})
        assert queue.get(timeout=1).payload == {"n": 1}
        queue.close()
    assert all(folder.is_dir() for folder in folders.values())
