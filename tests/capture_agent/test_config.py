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


def test_store_defaults_to_var_lineage_under_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert load_settings({}, environ={}).store == str(tmp_path / "var" / "lineage")


@pytest.mark.parametrize("layer", ["keyword", "file", "environment"])
def test_each_layer_sets_store_enabled_and_disabled_and_beats_the_ones_below(tmp_path: Path, layer: str) -> None:
    layers = ["environment", "file", "keyword"]
    values = {
        name: {"store": f"s3://bucket/{name}", "enabled": name == layer, "disabled": name != layer}
        for name in layers[: layers.index(layer) + 1]
    }
    config = tmp_path / "lineage.json"
    env: dict[str, str] = {}
    if "environment" in values:
        chosen = values["environment"]
        env = {"LINEAGE_STORE": str(chosen["store"]), "LINEAGE_ENABLED": str(chosen["enabled"]).lower(),
               "LINEAGE_DISABLED": str(chosen["disabled"]).lower()}
    if "file" in values:
        config.write_text(json.dumps(values["file"]))
        env["LINEAGE_CONFIG"] = str(config)
    settings = load_settings(values.get("keyword", {}), environ=env)
    assert (settings.store, settings.enabled, settings.disabled) == (f"s3://bucket/{layer}", True, False)
    assert settings.active and settings.auto_enable


def test_file_key_enabled_false_beats_the_environment(tmp_path: Path) -> None:
    config = tmp_path / "lineage.toml"
    config.write_text("enabled = false\nstore = 'hdfs://nn:8020/lineage'\n")
    settings = load_settings({}, environ={"LINEAGE_CONFIG": str(config), "LINEAGE_ENABLED": "true"})
    assert (settings.enabled, settings.active, settings.auto_enable) == (False, False, False)
    assert settings.store == "hdfs://nn:8020/lineage"


@pytest.mark.parametrize(
    ("overrides", "env", "active", "auto_enable"),
    [
        ({}, {}, True, False),  # unset: captured where enable()/LineageContext is called
        ({}, {"LINEAGE_ENABLED": "true"}, True, True),
        ({"enabled": False}, {"LINEAGE_ENABLED": "true"}, False, False),
        ({}, {"LINEAGE_ENABLED": "true", "LINEAGE_DISABLED": "true"}, False, False),  # disabled wins
        ({"disabled": True}, {}, False, False),
        ({"enabled": None, "store": None}, {"LINEAGE_DISABLED": "1"}, False, False),  # None: not given
    ],
)
def test_enabled_and_disabled_decide_whether_anything_is_captured(
    overrides: dict, env: dict, active: bool, auto_enable: bool
) -> None:
    settings = load_settings(overrides, environ=env)
    assert (settings.active, settings.auto_enable) == (active, auto_enable)


@pytest.mark.parametrize(
    ("overrides", "env", "file_text", "message"),
    [
        ({"store": " "}, {}, None, "keyword argument store=' ': expected a local path or a file://"),
        ({}, {"LINEAGE_STORE": ""}, None, "environment variable LINEAGE_STORE='': expected a local path"),
        ({}, {}, '{"store": ""}', "store='': expected a local path"),
        ({"enabled": "sometimes"}, {}, None, "keyword argument enabled='sometimes': expected true or false"),
        ({}, {"LINEAGE_ENABLED": "maybe"}, None, "environment variable LINEAGE_ENABLED='maybe': expected true or"),
        ({}, {}, '{"enabled": "later"}', "enabled='later': expected true or false"),
        ({}, {}, '{"disabled": 3}', "disabled=3: expected true or false"),
        ({}, {"LINEAGE_DISABLED": "nope"}, None, "environment variable LINEAGE_DISABLED='nope': expected true"),
    ],
)
def test_bad_store_enabled_or_disabled_names_the_setting(
    tmp_path: Path, overrides: dict, env: dict, file_text: str | None, message: str
) -> None:
    if file_text is not None:
        config = tmp_path / "lineage.json"
        config.write_text(file_text)
        env = {**env, "LINEAGE_CONFIG": str(config)}
        message = f"config file {config}: {message}"
    with pytest.raises(ConfigError) as error:
        load_settings(overrides, environ=env)
    assert message in str(error.value)


def test_the_module_docstring_documents_every_setting() -> None:
    from dataclasses import fields

    from capture_agent import config

    for field in fields(config.Settings):
        assert f"| `LINEAGE_{field.name.upper()}` | `{field.name}` |" in (config.__doc__ or ""), field.name
