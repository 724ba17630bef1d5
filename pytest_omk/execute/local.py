"""Executors that run on this machine: ``echo``, a command, and a Python callable.

Command protocol (upstream-compatible): the argv is split like a shell would split it, but no
shell runs; stdin receives one JSON object ``{"model", "system", "prompt", "sample_id", "cwd",
"mocks", "mocksStrict", "allowedTools"}``; stdout is either a protocol JSON object (one with
``ok`` or ``output``, validated as the reference does: :mod:`pytest_omk.execute.protocol`) or plain
text (the output). A non-zero exit, a timeout, a refused answer or a blank one fails the execution.
A sample's mocks also reach the command as the reference's script executor passes them
(:mod:`pytest_omk.execute.mock_channel`).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import shlex
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from pytest_omk.errors import ExecutionError
from pytest_omk.execute.mock_channel import MockChannel
from pytest_omk.execute.protocol import check_answer, check_output, is_protocol
from pytest_omk.execute.spawn import kill_session, start_session
from pytest_omk.js.text import js_trim
from pytest_omk.models.results import ExecutionResult
from pytest_omk.models.run import ExecutionRequest

_STDERR_LIMIT = 400


class EchoExecutor:
    """Answers with the prompt itself: a smoke test of the plumbing, no model involved."""

    id = "echo"
    supports_mocks = False

    async def execute(self, request: ExecutionRequest) -> ExecutionResult:
        return ExecutionResult(output=request.prompt, numTurns=1, costUSD=0.0)

    async def aclose(self) -> None:
        return None


def parse_result(payload: Any, *, source: str) -> ExecutionResult:
    """Turn what a command printed or a callable returned into an :class:`ExecutionResult`."""
    if isinstance(payload, ExecutionResult):
        check_output(payload.output, source=source)
        return payload
    if isinstance(payload, str):
        check_output(payload, source=source)
        return ExecutionResult(output=payload, numTurns=1)
    if isinstance(payload, dict):
        check_answer(payload, source=source)
        try:
            result = ExecutionResult.model_validate(payload)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ExecutionError(f"{source} returned an invalid result: {where}: {first['msg']}") from None
        return result if "numTurns" in payload else result.model_copy(update={"numTurns": 1})
    raise ExecutionError(
        f"{source} returned {type(payload).__name__}; expected a str, a dict or an ExecutionResult"
    )


class CommandExecutor:
    """Runs a command per sample, speaking omk's stdin/stdout JSON protocol."""

    def __init__(self, command: str, *, timeout: float, supports_mocks: bool = False) -> None:
        self.argv = shlex.split(command)
        if not self.argv:
            raise ExecutionError("the executor command is empty")
        self.timeout = timeout
        self.supports_mocks = supports_mocks
        self.id = "command:" + " ".join(self.argv)

    async def execute(self, request: ExecutionRequest) -> ExecutionResult:
        stdin = json.dumps(
            {
                "model": request.model,
                "system": request.system or "",
                "prompt": request.prompt,
                "sample_id": request.sample_id,
                "cwd": str(request.cwd) if request.cwd else None,
                "mocks": request.mocks,
                "mocksStrict": request.mocks_strict if request.mocks else None,
                "allowedTools": request.allowed_tools,
            },
            ensure_ascii=False,
        ).encode()
        with MockChannel.open(request) as channel:
            out = await self._run(stdin, request, channel.env)
            result = _parse_stdout(out.decode(errors="replace"))
            stats = channel.stats()
        if stats is not None and result.mockStats is None:
            result = result.model_copy(update={"mockStats": stats})
        return result

    async def _run(self, stdin: bytes, request: ExecutionRequest, env: dict[str, str] | None) -> bytes:
        try:
            # A session of its own, so that a timeout or a cancellation can end the whole group.
            proc = await start_session(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=request.cwd,
                env=env,
            )
        except OSError as exc:
            raise ExecutionError(f"cannot start executor command {self.argv[0]!r}: {exc.strerror}") from None
        try:
            out, err = await asyncio.wait_for(proc.communicate(stdin), self.timeout)
        except (TimeoutError, asyncio.CancelledError) as exc:
            kill_session(proc.pid)
            await proc.wait()
            if isinstance(exc, asyncio.CancelledError):
                raise
            raise ExecutionError(f"executor command timed out after {self.timeout:g}s") from None
        if proc.returncode != 0:
            detail = err.decode(errors="replace").strip()[-_STDERR_LIMIT:]
            raise ExecutionError(detail or f"executor exited with code {proc.returncode}")
        return out

    async def aclose(self) -> None:
        return None


def _parse_stdout(text: str) -> ExecutionResult:
    source = "the executor command"
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if is_protocol(data):
        return parse_result(data, source=source)
    # Anything else (not JSON, a bare scalar such as "4", an object without ok/output) is the
    # model's plain-text answer, trimmed, as the reference reads it.
    output = js_trim(text)
    check_output(output, source=source)
    return ExecutionResult(output=output, numTurns=1)


class CallableExecutor:
    """Calls the user's Python function (sync or async) with the :class:`ExecutionRequest`."""

    def __init__(self, func: Callable[..., Any], *, name: str, supports_mocks: bool = False) -> None:
        self.func = func
        self.id = f"python:{name}"
        self.supports_mocks = supports_mocks or bool(getattr(func, "supports_mocks", False))

    async def execute(self, request: ExecutionRequest) -> ExecutionResult:
        try:
            if inspect.iscoroutinefunction(self.func):
                value = await self.func(request)
            else:
                value = await asyncio.to_thread(self.func, request)
                if inspect.isawaitable(value):
                    value = await value
        except ExecutionError:
            raise
        except Exception as exc:
            raise ExecutionError(f"{self.id} raised {type(exc).__name__}: {exc}") from exc
        return parse_result(value, source=self.id)

    async def aclose(self) -> None:
        return None
