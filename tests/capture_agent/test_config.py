"""Settings precedence and validation (no Spark needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from capture_agent.config import ConfigError, load_settings


def test_defaults_when_nothing_is_set() -> None:
    settings = load_settings({}, environ={})
    assert settings.server_url == "http://127.0.0.1:8000"
    assert settings.sink == "http"
    assert settings.spool_dir.endswith("lineage-agent/spool")
    assert settings.jar.endswith("_jars/lineage-listener.jar")


def test_keyword_beats_file_beats_environment(tmp_path: Path) -> None:
    config = tmp_path / "lineage.toml"
    config.write_text('[lineage]\nbatch_size = 50\ntoken = "from-file"\n')
    env = {"LINEAGE_CONFIG": str(config), "LINEAGE_BATCH_SIZE": "10", "LINEAGE_TOKEN": "from-env",
           "LINEAGE_SINK": "noop"}
    settings = load_settings({"token": "from-kwarg"}, environ=env)
    assert (settings.token, settings.batch_size, settings.sink) == ("from-kwarg", 50, "noop")


def test_json_config_file(tmp_path: Path) -> None:
    config = tmp_path / "lineage.json"
    config.write_text(json.dumps({"sink": "file", "flush_interval": 2}))
    settings = load_settings({}, environ={"LINEAGE_CONFIG": str(config)})
    assert (settings.sink, settings.flush_interval) == ("file", 2.0)


@pytest.mark.parametrize(
    ("overrides", "env", "message"),
    [
        ({"batch_size": "lots"}, {}, "keyword argument batch_size='lots': expected an integer between 1 and 500"),
        ({}, {"LINEAGE_SINK": "kafka"}, "environment variable LINEAGE_SINK='kafka': expected one of http, file, noop"),
        ({}, {"LINEAGE_SERVER_URL": "localhost:8000"}, "LINEAGE_SERVER_URL='localhost:8000': expected an http"),
        ({"disabled": "perhaps"}, {}, "disabled='perhaps': expected true or false"),
        ({"colour": "blue"}, {}, "keyword argument colour: unknown setting"),
    ],
)
def test_bad_value_names_the_setting_and_its_origin(overrides: dict, env: dict, message: str) -> None:
    with pytest.raises(ConfigError) as error:
        load_settings(overrides, environ=env)
    assert message in str(error.value)


def test_unreadable_config_file_is_a_clear_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(ConfigError, match="not valid JSON/TOML"):
        load_settings({}, environ={"LINEAGE_CONFIG": str(broken)})
