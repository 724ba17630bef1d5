"""Runs one Python custom check for pytest-omk, in a process of its own.

Reads ``{"module", "output", "context"}`` as JSON on stdin, loads the module, calls its
``check(output, context)`` (awaiting a coroutine), and prints the result as one JSON line after a
marker. Whatever the module prints comes before the marker and is ignored; ``os._exit``,
``sys.exit``, a crash or a hang end only this process, never pytest. Standard library only: it
is run as a script by :mod:`pytest_omk.grade.custom`.
"""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
import json
import sys
from typing import Any

MARKER = "@@pytest-omk-result@@"


def _check(path: str) -> Any:
    spec = importlib.util.spec_from_file_location("_omk_custom_check", path)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses and typing look the module up by name
    spec.loader.exec_module(module)
    check = getattr(module, "check", None)
    if not callable(check):
        raise RuntimeError("the module must define check(output, context)")
    return check


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


def main() -> None:
    """Run one check: the job on stdin, the verdict as the last line of stdout."""
    job = json.loads(sys.stdin.read())
    real_stdout = sys.stdout
    sys.stdout = sys.stderr  # the check's own prints must not look like a result
    try:
        result = _check(job["module"])(job["output"], job["context"])
        if inspect.isawaitable(result):
            result = asyncio.run(_awaited(result))
        if isinstance(result, bool) or (isinstance(result, dict) and isinstance(result.get("pass"), bool)):
            outcome: dict[str, Any] = {"result": result}
        else:
            outcome = {"invalid": repr(result)[:200]}
    except BaseException as exc:  # SystemExit and KeyboardInterrupt included: all are the check's failure
        outcome = {"error": f"raised {type(exc).__name__}: {exc}"}
    real_stdout.write(f"\n{MARKER}{json.dumps(outcome, default=str)}\n")
    real_stdout.flush()


if __name__ == "__main__":
    main()
