"""Imports flow one way: down the layers of docs/architecture.md, never up, never in a circle.

Every import counts, including those inside functions and under ``TYPE_CHECKING``: a lazy import
still ties the modules together. A module may import its own layer or a lower one; only the pytest
layer (the last) may import pytest.
"""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest_omk

PACKAGE = Path(pytest_omk.__file__).parent
# Bottom to top; a module belongs to the layer of its longest listed prefix (docs/architecture.md).
LAYERS = [
    ("pytest_omk", "errors", "js", "proctree", "bodies", "tracebacks"),
    ("models", "converters", "shard", "mcp_servers", "requires", "xdist_prefetch", "endpoints", "progress",
     "preflight", "gc_policy", "status_files", "field_docs", "prefetch"),
    ("recordings",),
    ("loading", "execute", "agent", "grade", "compare", "offline"),
    ("runtime", "call_loop", "resolve", "judge"),
    ("pipeline", "settings", "report", "schema", "__main__", "live_needs", "status_line"),
    # The pytest layer, bottom to top: only it may import pytest.
    ("options", "compat", "hookspecs", "planning", "wiring", "safety", "recording_session",
     "report.junit_layout", "file_checks", "xdist_status", "collection_hooks"),
    ("collect",),
    ("report.subtests", "report.repeated", "report.collector", "report.run_info", "attempts"),
    ("session",),
    ("plugin", "report.pytest_html"),
]
PYTEST_LAYER = 6
# Edges of today's code that break the rules; each removal is progress, none may be added.
KNOWN: set[tuple[str, str]] = {("grade.composite", "grade.registry")}
KNOWN = {(f"pytest_omk.{a}", f"pytest_omk.{b}") for a, b in KNOWN}


def _name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for p in PACKAGE.rglob("*.py")}


def _imports(module: str) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(MODULES[module].read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            subs = {f"{node.module}.{a.name}" for a in node.names} & MODULES.keys()
            found.update(subs or {node.module})
    return {n for n in found if n in MODULES or n.split(".")[0] in ("pytest", "_pytest")}


def _layer(module: str) -> int:
    if module.split(".")[0] in ("pytest", "_pytest"):
        return PYTEST_LAYER
    rel = module.removeprefix("pytest_omk.") if module != "pytest_omk" else module
    ranks = [(len(p), i) for i, layer in enumerate(LAYERS) for p in layer if f"{rel}.".startswith(f"{p}.")]
    assert ranks, f"{module} is in no layer of LAYERS"
    return max(ranks)[1]


GRAPH = {m: _imports(m) - {m} for m in MODULES}


def test_no_module_imports_upward_or_pytest_below_the_pytest_layer() -> None:
    upward = {(m, d) for m, deps in GRAPH.items() for d in deps if _layer(d) > _layer(m)}
    assert upward - KNOWN == set()


def test_no_circle_even_through_lazy_imports() -> None:
    graph = {m: {d for d in deps if d in MODULES and (m, d) not in KNOWN} for m, deps in GRAPH.items()}
    graphlib.TopologicalSorter(graph).prepare()  # raises CycleError naming the circle


def test_known_exceptions_still_exist() -> None:
    assert {edge for edge in KNOWN if edge[1] not in GRAPH[edge[0]]} == set()
