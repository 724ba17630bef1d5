"""Modules stay small enough to read in one sitting, functions small enough to hold in one's head.

A module over 300 lines owns more than one thing, a function over 50 lines does more than one step:
split them (docs/architecture.md says where the parts go). Counted on the source as written,
docstrings and comments included.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import pytest_omk

PACKAGE = Path(pytest_omk.__file__).parent
MODULES = sorted(PACKAGE.rglob("*.py"))
MAX_MODULE_LINES = 300
MAX_FUNCTION_LINES = 50


def _ids(path: Path) -> str:
    return path.relative_to(PACKAGE.parent).as_posix()


@pytest.mark.parametrize("path", MODULES, ids=_ids)
def test_module_is_at_most_300_lines(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_MODULE_LINES, f"{_ids(path)} has {lines} lines"


@pytest.mark.parametrize("path", MODULES, ids=_ids)
def test_functions_are_at_most_50_lines(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    long = {
        f"{node.name} (line {node.lineno}): {node.end_lineno - node.lineno + 1} lines"
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    }
    assert not long, f"{_ids(path)}: {sorted(long)}"
