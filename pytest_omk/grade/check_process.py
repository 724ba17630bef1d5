"""Running one custom check in a process of its own, and taking its verdict over a channel the
output cannot write.

The check sees the model's output and may print it (``console.log(output)``, a child process
writing to the inherited stdout): a verdict read from the check's stdout could be forged by the
output, a "pass" line followed by padding. So nothing the check prints is ever parsed. The runner
(``py_runner.py``, ``node_runner.mjs``) is handed two paths in a private directory this module
creates (mode 0700): the request it reads (module, output, context) and the result file it writes
the verdict to, once the check has returned. What the check prints goes to a log file in the same
directory, not a pipe, so a child that keeps the output open cannot hold pytest (the same reason
the agent's ``Bash`` writes to a file), and only its last bytes are read, to explain an error.

The process runs in a session of its own with a marker in its environment
(:mod:`pytest_omk._util.proctree`): when the check ends, times out or is interrupted (Ctrl-C), its
process group and every process carrying the marker are killed.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from pytest_omk._util.proctree import kill_tagged, tagged_environment

RESULT_MAX_BYTES = 1024 * 1024
"""Largest result file read (the runners cut a check's message to 64 Ki characters first)."""
LOG_TAIL_BYTES = 64 * 1024
"""How much of the end of what the check printed is kept to explain an error."""


class CheckError(Exception):
    """The check could not produce a valid reading."""


def run_check(
    argv: list[str], request: dict[str, Any], timeout: float, cwd: Path, env: dict[str, str]
) -> Any:
    """Run ``argv`` + ``[request file, result file]`` and return the result file's JSON object.

    Raise :class:`CheckError` when the process outlived ``timeout`` or ended without a result
    (it exited, crashed or was killed), the error naming the exit code and what it printed last.
    Whatever happens (an answer, a timeout, Ctrl-C), the child and everything it started die.
    """
    with tempfile.TemporaryDirectory(prefix="omk-check-") as folder:
        request_path, result_path = Path(folder, "request.json"), Path(folder, "result.json")
        request_path.write_text(json.dumps(request), encoding="utf-8")
        with open(Path(folder, "printed.log"), "w+b") as log:
            code = _run([*argv, str(request_path), str(result_path)], log.fileno(), timeout, cwd, env)
            outcome = _read_result(result_path)
            if outcome is None:
                log.seek(max(os.fstat(log.fileno()).st_size - LOG_TAIL_BYTES, 0))
                printed = log.read().decode("utf-8", "replace")
                raise CheckError(_no_result(code, printed))
    return outcome


def _run(argv: list[str], log: int, timeout: float, cwd: Path, env: dict[str, str]) -> int:
    tagged, tag = tagged_environment(env)
    with subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        cwd=cwd if cwd.is_dir() else None,
        env=tagged,
        start_new_session=True,
    ) as process:
        try:
            return process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise CheckError(f"timed out after {timeout:g} s (its process was killed)") from None
        finally:
            kill_tagged(tag, group=process.pid)


def _read_result(path: Path) -> dict[str, Any] | None:
    """The runner's verdict; ``None`` when it wrote none."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read(RESULT_MAX_BYTES + 1)
    except FileNotFoundError:
        return None
    if len(raw) > RESULT_MAX_BYTES:
        raise CheckError(f"the check's result is larger than {RESULT_MAX_BYTES} bytes")
    try:
        outcome = json.loads(raw)
    except ValueError:
        raise CheckError("the check's runner wrote an unreadable result") from None
    if not isinstance(outcome, dict):
        raise CheckError("the check's runner wrote an unreadable result")
    return outcome


def _no_result(code: int, printed: str) -> str:
    shown = " ".join(printed.split())
    tail = f": ...{shown[-200:]}" if len(shown) > 200 else f": {shown}" if shown else ""
    return f"the check's process ended without a result (exit code {code}; it exited or crashed){tail}"
