"""One call ledger: a model call is counted in one place, and ``Role`` is defined once.

``pytest_omk/models/accounting.py`` is where calls, tokens and cost are recorded (the
``CallLedger``, fed once per call) and summed (``Usage``, which adds up). Anything else that
keeps a running count of calls, tokens or cost (``self.tokens += ...``, ``self._cost += ...``)
is a second recorder: the budget, the status line and the reports would drift apart again, as
they did when five modules counted. Readers sum *records* (``report/usage.py`` adds up the
records' ``usage`` parts with ``sum``), which is not recording.

The checks are functions of a package directory, so each is also shown failing on a planted one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest_omk

PACKAGE = Path(pytest_omk.__file__).parent
LEDGER = Path("models/accounting.py")
COUNTED = ("token", "cost", "calls")
"""A running total whose name holds one of these counts model calls or what they used."""


def _target_name(node: ast.expr) -> str:
    while isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def recorders(package: Path) -> list[str]:
    """``path:line name`` of every running count of calls, tokens or cost outside the ledger."""
    found = []
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package)
        if relative == LEDGER:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
                name = _target_name(node.target)
                if any(word in name.lower() for word in COUNTED):
                    found.append(f"{relative}:{node.lineno} {name}")
    return found


def role_definitions(package: Path) -> list[str]:
    """``path:line`` of every module-level ``Role = ...`` (or ``Role: ... = ...``)."""
    found = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, ast.AnnAssign)
                else []
            )
            if any(isinstance(t, ast.Name) and t.id == "Role" for t in targets):
                found.append(f"{path.relative_to(package)}:{node.lineno}")
    return found


def test_calls_are_recorded_only_in_the_ledger() -> None:
    assert recorders(PACKAGE) == []


def test_role_is_defined_once_in_the_ledger() -> None:
    assert role_definitions(PACKAGE) == [f"{LEDGER.as_posix()}:{_role_line()}"]


def _role_line() -> int:
    source = (PACKAGE / LEDGER).read_text(encoding="utf-8").splitlines()
    return next(number for number, line in enumerate(source, 1) if line.startswith("Role = "))


def test_a_planted_second_recorder_and_role_are_found(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "accounting.py").write_text(
        "Role = str\n\nclass CallLedger:\n    def note(self, n):\n        self.tokens += n\n",
        encoding="utf-8",
    )
    (tmp_path / "execute").mkdir()
    (tmp_path / "execute" / "budget.py").write_text(
        "from typing import Literal\n\nRole = Literal['model', 'judge']\n\n\n"
        "class RoleTotals:\n"
        "    def count(self, tokens, cost):\n"
        "        self.calls += 1\n"
        "        self.tokens += tokens\n"
        "        self._cost['model'] += cost\n",
        encoding="utf-8",
    )
    (tmp_path / "report").mkdir()
    (tmp_path / "report" / "usage.py").write_text(
        "def total(parts):\n    count = 0\n    count += 1\n    return sum(p['tokens'] for p in parts)\n",
        encoding="utf-8",
    )
    assert recorders(tmp_path) == [
        "execute/budget.py:8 calls",
        "execute/budget.py:9 tokens",
        "execute/budget.py:10 _cost",
    ]
    assert role_definitions(tmp_path) == ["execute/budget.py:3", "models/accounting.py:1"]
