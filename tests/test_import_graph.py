"""The import graph of our packages: no circles (deferred and TYPE_CHECKING imports count), and the
record engine's layers import only downwards (storage <- worker <- query <- capture)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("capture_agent", "lineage_server")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Every module of ours that ``name`` imports, wherever the import statement stands."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                targets.add(candidate if candidate in modules else base)
    return {t for t in targets if t in modules and t != name}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_checker_finds_a_circle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_circles(package):
    graph = _graph()
    circles = [c for c in _cycles(graph) if any(m.split(".")[0] == package for m in c)]
    assert circles == [], f"import circles in {package}: {circles}"


LAYERS = {  # what each layer of capture_agent.record may import from the record package
    "capture_agent.record.storage": ("capture_agent.record.storage", "capture_agent.record.errors"),
    "capture_agent.record.worker": ("capture_agent.record.worker", "capture_agent.record.storage",
                                    "capture_agent.record.errors"),
    "capture_agent.record.query": ("capture_agent.record.query", "capture_agent.record.worker",
                                   "capture_agent.record.storage", "capture_agent.record.errors"),
}


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_record_layers_import_only_downwards(layer):
    graph = _graph()
    wrong = {}
    for module, targets in graph.items():
        if module == layer or module.startswith(layer + "."):
            bad = [t for t in targets if t.startswith("capture_agent") and not t.startswith(LAYERS[layer])]
            if bad:
                wrong[module] = sorted(bad)
    assert wrong == {}, f"{layer} imports what it must not: {wrong}"


def test_the_agent_never_imports_django_or_the_server():
    for path in (ROOT / "capture_agent").rglob("*.py"):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                names.add(node.module)
        assert not {n for n in names if n.split(".")[0] in ("django", "rest_framework", "lineage_server")}, path


def test_every_sink_setting_has_a_sink_class():
    from capture_agent.config import SINK_KINDS
    from capture_agent.sinks import SINKS

    assert set(SINKS) == set(SINK_KINDS)


def test_api_views_import_nothing_from_the_capture_agent():
    """Views are thin: what they read of the lineage store comes through the apps' selectors and services."""
    views = {module: targets for module, targets in _graph().items() if module.startswith("lineage_server.api.views")}
    assert views, "no view modules found"
    agent = {module: sorted(t for t in targets if t.split(".")[0] == "capture_agent")
             for module, targets in views.items()}
    assert {module: names for module, names in agent.items() if names} == {}
