"""Modules stay small enough to read in one sitting, functions small enough to hold in one's head.

A module over 300 lines owns more than one thing, a function over 50 lines does more than one step:
split them (docs/architecture.md says where the parts go). Counted on the source as written,
docstrings and comments included. Each rule is one test that names every offender at once (not one
item per module: the checks are cheap, and a list reads better than hundreds of items).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest_omk

PACKAGE = Path(pytest_omk.__file__).parent
MAX_MODULE_LINES = 300
MAX_FUNCTION_LINES = 50


def _ids(path: Path) -> str:
    return path.relative_to(PACKAGE.parent).as_posix()


def long_modules(package: Path, limit: int = MAX_MODULE_LINES) -> list[str]:
    """Every module of ``package`` over ``limit`` lines, with its count."""
    found = []
    for path in sorted(package.rglob("*.py")):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > limit:
            found.append(f"{path.relative_to(package.parent).as_posix()} has {lines} lines")
    return found


def long_functions(package: Path, limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """Every function of ``package`` over ``limit`` lines, named with its module and line."""
    found = []
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.end_lineno is None:
                continue
            lines = node.end_lineno - node.lineno + 1
            if lines > limit:
                where = path.relative_to(package.parent).as_posix()
                found.append(f"{where}: {node.name} (line {node.lineno}) has {lines} lines")
    return sorted(found)


def test_every_module_is_at_most_300_lines() -> None:
    offenders = long_modules(PACKAGE)
    assert not offenders, "split these modules:\n" + "\n".join(offenders)


def test_every_function_is_at_most_50_lines() -> None:
    offenders = long_functions(PACKAGE)
    assert not offenders, "split these functions:\n" + "\n".join(offenders)


def test_the_checks_name_every_offender(tmp_path: Path) -> None:
    package = tmp_path / "planted"
    package.mkdir()
    (package / "small.py").write_text("x = 1\n", encoding="utf-8")
    (package / "big.py").write_text("x = 1\n" * 301, encoding="utf-8")
    (package / "bigger.py").write_text("x = 1\n" * 400, encoding="utf-8")
    body = "".join(f"    y{i} = {i}\n" for i in range(50))
    (package / "funcs.py").write_text(f"def short():\n    pass\n\n\ndef long():\n{body}", encoding="utf-8")
    assert long_modules(package) == ["planted/big.py has 301 lines", "planted/bigger.py has 400 lines"]
    assert long_functions(package) == ["planted/funcs.py: long (line 5) has 51 lines"]
