"""The README documents every setting the server and the agent read, and the two commands."""
from __future__ import annotations

from pathlib import Path

from lineage_server.env import SETTINGS

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def test_every_server_setting_is_documented_with_its_default():
    for setting in SETTINGS.values():
        row = next((line for line in README.splitlines() if line.startswith(f"| `{setting.name}` |")), None)
        assert row is not None, f"{setting.name} is missing from the README's settings table"
        documented = f"`{setting.default_text}`" if setting.default_text else "(none)"
        assert documented in row, f"{setting.name}'s default {setting.default_text!r} is not in its README row"


def test_every_agent_setting_is_documented():
    from dataclasses import fields

    from capture_agent.config import ENV_PREFIX, Settings

    for name in [ENV_PREFIX + "CONFIG"] + [ENV_PREFIX + f.name.upper() for f in fields(Settings)]:
        assert f"| `{name}` |" in README, f"agent setting {name} is missing from the README"
    for field in fields(Settings):
        # The agent's own table (LINEAGE_STORE is in the server's too), with the keyword / file key.
        row = f"| `{ENV_PREFIX + field.name.upper()}` | `{field.name}` |"
        assert row in README, f"agent setting {field.name} is missing from the README's agent table"


def test_the_two_commands_come_first():
    head = README[:1500]
    assert "make run" in head and "make test" in head


def test_the_cluster_section_the_agent_points_at_exists():
    # LineageContext's start-up check names this section in its error message.
    assert "\n## Running a captured job on a cluster\n" in README
