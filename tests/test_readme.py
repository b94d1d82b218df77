"""The README leads a newcomer (the two commands first, the cluster section the agent names); the
pages under docs/ document every setting the server and the agent read; every link resolves."""
from __future__ import annotations

import re
from pathlib import Path

from lineage_server.env import SETTINGS

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
SETTINGS_PAGE = (ROOT / "docs" / "settings.md").read_text()
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_every_server_setting_is_documented_with_its_default():
    for setting in SETTINGS.values():
        row = next((line for line in SETTINGS_PAGE.splitlines() if line.startswith(f"| `{setting.name}` |")), None)
        assert row is not None, f"{setting.name} is missing from docs/settings.md's settings table"
        documented = f"`{setting.default_text}`" if setting.default_text else "(none)"
        assert documented in row, f"{setting.name}'s default {setting.default_text!r} is not in its row"


def test_every_agent_setting_is_documented():
    from dataclasses import fields

    from capture_agent.config import ENV_PREFIX, Settings

    for name in [ENV_PREFIX + "CONFIG"] + [ENV_PREFIX + f.name.upper() for f in fields(Settings)]:
        assert f"| `{name}` |" in SETTINGS_PAGE, f"agent setting {name} is missing from docs/settings.md"
    for field in fields(Settings):
        # The agent's own table (LINEAGE_STORE is in the server's too), with the keyword / file key.
        row = f"| `{ENV_PREFIX + field.name.upper()}` | `{field.name}` |"
        assert row in SETTINGS_PAGE, f"agent setting {field.name} is missing from docs/settings.md's agent table"


def test_the_two_commands_come_first():
    head = README[:1500]
    assert "make run" in head and "make test" in head


def test_the_readme_is_a_newcomers_path_not_a_reference():
    assert len(README.splitlines()) <= 160
    first_trace = README.index("## Your first trace in the browser")
    assert first_trace < README.index("## Capture your own job") < README.index("## Where to read more")
    assert len(README[:first_trace].splitlines()) <= 40, "the first trace within the first screenfuls"


def test_the_cluster_section_the_agent_points_at_exists():
    # LineageContext's start-up check names this section in its error message.
    assert "\n## Running a captured job on a cluster\n" in README


def test_every_relative_link_of_the_readme_and_docs_resolves():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for page in pages:
        for target in LINK.findall(page.read_text()):
            if "://" in target:
                continue
            assert (page.parent / target).exists(), f"{page.relative_to(ROOT)} links to {target}, which does not exist"
