"""Runs one Python custom check for pytest-omk, in a process of its own.

Usage: ``py_runner.py REQUEST RESULT``. Reads ``{"module", "output", "context"}`` as JSON from the
file ``REQUEST``, loads the module, calls its ``check(output, context)`` (awaiting a coroutine),
and writes the outcome as JSON to the file ``RESULT``. What the module prints is never read as a
verdict (the output it checks may be among it, see :mod:`pytest_omk.grade.check_process`);
``os._exit``, ``sys.exit``, a crash or a hang end only this process, never pytest. Standard
library only: it is run as a script by :mod:`pytest_omk.grade.custom`.
"""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
import json
import sys
from typing import Any

MESSAGE_MAX_CHARS = 65536
"""A check's message is shown cut far shorter; the rest is not worth a large result file."""


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
    """Run the check the request file names and write its outcome to the result file."""
    request_path, result_path = sys.argv[1], sys.argv[2]
    with open(request_path, encoding="utf-8") as handle:
        job = json.load(handle)
    sys.stdout = sys.stderr  # the check's own prints all go to the log
    try:
        result = _check(job["module"])(job["output"], job["context"])
        if inspect.isawaitable(result):
            result = asyncio.run(_awaited(result))
        if isinstance(result, bool):
            outcome: dict[str, Any] = {"result": result}
        elif isinstance(result, dict) and isinstance(result.get("pass"), bool):
            message = result.get("message")
            if isinstance(message, str) and len(message) > MESSAGE_MAX_CHARS:
                result = {**result, "message": message[:MESSAGE_MAX_CHARS]}
            outcome = {"result": result}
        else:
            outcome = {"invalid": repr(result)[:200]}
    except BaseException as exc:  # SystemExit and KeyboardInterrupt included: all are the check's failure
        outcome = {"error": f"raised {type(exc).__name__}: {str(exc)[:MESSAGE_MAX_CHARS]}"}
    with open(result_path, "w", encoding="utf-8") as handle:
        json.dump(outcome, handle, default=str)


if __name__ == "__main__":
    main()
