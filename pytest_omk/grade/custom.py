"""The ``custom`` grader: run a user-written check module on the output.

``fn`` is a path relative to the sample file's directory (``GradeContext.base_dir``), and must stay
inside that directory tree (symbolic links resolved):

* a ``.py`` file defining ``check(output, context)`` (plain or ``async``) that returns a bool or
  ``{"pass": bool, "message": str}``. It runs in a Python process of its own (``py_runner.py``),
  so ``os._exit``, ``sys.exit``, a crash or a hang fail that assertion and never end or hang
  pytest; a timeout kills the process group;
* a ``.js`` / ``.mjs`` / ``.cjs`` module run with Node (``node`` on PATH) through
  ``node_runner.mjs``; as upstream, its default export (else a named ``check``) is called as
  ``fn(output, {sample, assertion})`` and must return (or resolve to) ``{pass: boolean, message?}``.

Both run through :func:`pytest_omk.grade.check_process.run_check`: in a session of their own, so
that children they spawned (``child_process``, ``subprocess``, even detached or ``setsid`` ones)
never outlive them, with the verdict handed back in a result file, never on the check's stdout,
which the output it checks may have written to.

``context`` is ``{"sample": ..., "assertion": ...}`` as plain JSON data, holding the keys written in
the file. Every failure of the check itself (missing file, import error, exception, timeout,
invalid result) is an error reading: a failure that ``not: true`` never turns into a pass.
"""

from __future__ import annotations

import os
import shutil
import sys
from importlib.resources import as_file, files
from pathlib import Path
from typing import Any

from pytest_omk.grade._table import entry
from pytest_omk.grade.base import GradeContext, Grader
from pytest_omk.grade.check_process import CheckError, run_check
from pytest_omk.js.text import js_json_stringify
from pytest_omk.models import AssertionBase
from pytest_omk.models.assertions import Custom
from pytest_omk.models.results import Reading

NODE_SUFFIXES = frozenset({".js", ".mjs", ".cjs"})


def _run_python(path: Path, output: str, context: dict[str, Any], timeout: float, cwd: Path) -> Any:
    """Run ``path``'s ``check`` in a child Python process (``py_runner.py``); CheckError on any problem.

    A check that calls ``os._exit``, ``sys.exit``, crashes or hangs ends only that process: the
    timeout kills its whole process group, and pytest goes on to write its reports.
    """
    request = {"module": str(path), "output": output, "context": context}
    # The check sees the modules pytest sees (the project, its conftest's packages).
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    runner = Path(__file__).with_name("py_runner.py")
    outcome = run_check([sys.executable, str(runner)], request, timeout, cwd, env)
    if "error" in outcome:
        raise CheckError(str(outcome["error"]))
    if "invalid" in outcome:
        return _Invalid(str(outcome["invalid"]))
    return outcome.get("result")


class _Invalid:
    """A check result that is neither a bool nor ``{"pass": bool}`` (shown by its repr)."""

    def __init__(self, shown: str) -> None:
        self.shown = shown

    def __repr__(self) -> str:
        return self.shown


def _run_node(path: Path, output: str, context: dict[str, Any], timeout: float, cwd: Path) -> Any:
    """Run the JS module through the bundled runner; raise CheckError on any problem."""
    node = shutil.which("node")
    if node is None:
        raise CheckError("needs Node.js to run a JavaScript check, but 'node' is not on PATH")
    request = {"module": str(path), "output": output, "context": context}
    with as_file(files(__package__ or "pytest_omk.grade").joinpath("node_runner.mjs")) as runner:
        outcome = run_check([node, str(runner)], request, timeout, cwd, dict(os.environ))
    if "error" in outcome:
        raise CheckError(str(outcome["error"]))
    return outcome.get("result")


def _one_line(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def interpret(fn: str, result: Any, *, allow_bool: bool) -> Reading:
    """Turn a check's return value into a reading (an invalid value is an error reading)."""
    if allow_bool and isinstance(result, bool):
        passed, message = result, None
    elif isinstance(result, dict) and isinstance(result.get("pass"), bool):
        passed, message = result["pass"], result.get("message")
    else:
        shape = (
            'a bool or {"pass": bool, "message": str}' if allow_bool else "{pass: boolean, message?: string}"
        )
        shown = _one_line(repr(result) if allow_bool else js_json_stringify(result), 80)
        return Reading.error(f"custom check {fn!r} returned {shown}; expected {shape}")
    detail = f": {_one_line(str(message))}" if message not in (None, "") else ""
    if passed:
        return Reading.passed(f"custom check {fn!r} passed{detail}")
    return Reading.failed(f"custom check {fn!r} failed{detail}")


def _custom(a: Custom, ctx: GradeContext) -> Reading:
    path = (ctx.base_dir / a.fn).resolve()
    base = ctx.base_dir.resolve()
    if path != base and base not in path.parents:
        return Reading.error(
            f"custom check {a.fn!r}: the path leads outside the sample file's directory {base}"
        )
    if not path.is_file():
        return Reading.error(f"custom check {a.fn!r}: file not found: {path}")
    context = {
        "sample": ctx.sample.model_dump(mode="json", by_alias=True, exclude_unset=True),
        "assertion": a.model_dump(mode="json", by_alias=True, exclude_unset=True),
    }
    suffix = path.suffix.lower()
    try:
        if suffix == ".py":
            return interpret(
                a.fn,
                _run_python(path, ctx.output, context, ctx.custom_timeout, ctx.base_dir),
                allow_bool=True,
            )
        if suffix in NODE_SUFFIXES:
            result = _run_node(path, ctx.output, context, ctx.custom_timeout, ctx.base_dir)
            return interpret(a.fn, result, allow_bool=False)
    except CheckError as exc:
        return Reading.error(f"custom check {a.fn!r} errored: {_one_line(str(exc))}")
    return Reading.error(
        f"custom check {a.fn!r}: unsupported file type {suffix!r} (use .py, .js, .mjs or .cjs)"
    )


GRADERS: dict[type[AssertionBase], Grader] = dict([entry(Custom, _custom)])
"""The custom-check grader, keyed by assertion class."""
