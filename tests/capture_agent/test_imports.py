"""The agent's modules (record/ aside) import one another without a circle, and never Django."""

from __future__ import annotations

import ast
from collections.abc import Collection
from pathlib import Path

import capture_agent
from capture_agent.config import SINK_KINDS
from capture_agent.sinks import SINKS

PACKAGE = Path(capture_agent.__file__).resolve().parent


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def agent_modules() -> dict[str, Path]:
    return {module_name(p): p for p in PACKAGE.rglob("*.py") if "record" not in p.relative_to(PACKAGE).parts}


def imported_names(path: Path, modules: Collection[str] = ()) -> set[str]:
    """Every module a file imports: at the top, inside functions and under TYPE_CHECKING alike
    (``from package import name`` is an import of ``package.name`` when that is one of ``modules``)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                names.add(submodule if submodule in modules else node.module)
    return names


def import_graph() -> dict[str, set[str]]:
    modules = agent_modules()
    return {
        name: {n for n in imported_names(path, set(modules)) if n in modules and n != name}
        for name, path in modules.items()
    }


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return stack[stack.index(target):] + [target]
            if target not in state and (cycle := visit(target)):
                return cycle
        stack.pop()
        state[node] = 2
        return []

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return []


def test_no_import_circle_outside_record() -> None:
    graph = import_graph()
    assert {"capture_agent.sinks", "capture_agent.sinks.http", "capture_agent.protocol"} <= set(graph)
    assert find_cycle(graph) == []


def test_the_cycle_finder_sees_a_circle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_the_agent_never_imports_django() -> None:
    for path in PACKAGE.rglob("*.py"):
        assert not {n for n in imported_names(path) if n.split(".")[0] in ("django", "rest_framework")}, path


def test_every_sink_setting_has_a_sink_class() -> None:
    assert set(SINKS) == set(SINK_KINDS)
