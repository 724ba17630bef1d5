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
import contextlib
import inspect
import json
import shlex
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from pytest_omk._util.proctree import kill_group, kill_tagged, tagged_environment
from pytest_omk.errors import ExecutionError
from pytest_omk.execute.base import ExecutorDefaults
from pytest_omk.execute.mock_channel import MockChannel
from pytest_omk.execute.protocol import check_answer, check_mock_stats, check_output, is_protocol
from pytest_omk.execute.spawn import start_session
from pytest_omk.js.text import js_trim
from pytest_omk.models.results import MAX_NUMBER, ExecutionResult, shown_number
from pytest_omk.models.run import ExecutionRequest
from pytest_omk.recordings.scrub import environment_snapshot

_STDERR_LIMIT = 400
MAX_STDOUT_BYTES = 32 * 1024 * 1024
"""Largest answer read from an executor command; more is an execution error (the command is killed)."""
_STDERR_KEPT = 64 * 1024


class EchoExecutor(ExecutorDefaults):
    """Answers with the prompt itself: a smoke test of the plumbing, no model involved."""

    id = "echo"
    supports_mocks = False

    async def execute(self, request: ExecutionRequest) -> ExecutionResult:
        """The prompt, as the answer."""
        return ExecutionResult(output=request.prompt, numTurns=1, costUSD=0.0)

    async def aclose(self) -> None:
        """Nothing to close."""
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
        check_numbers(result, source)
        if result.mockStats is not None:
            check_mock_stats(result.mockStats.hits, result.mockStats.perMock, source=source)
        return result if "numTurns" in payload else result.model_copy(update={"numTurns": 1})
    raise ExecutionError(
        f"{source} returned {type(payload).__name__}; expected a str, a dict or an ExecutionResult"
    )


def check_numbers(result: ExecutionResult, source: str) -> None:
    """Counts and costs are finite, non-negative and below :data:`MAX_NUMBER`, else an execution error.

    A negative cost would make ``cost_max`` pass; a 400-digit token count would overflow later.
    """
    invalid = result.invalid_number()
    if invalid is not None:
        name, value = invalid
        raise ExecutionError(
            f"{source} returned an invalid {name}: {shown_number(value)} (allowed: 0 to {MAX_NUMBER})"
        )


class CommandExecutor(ExecutorDefaults):
    """Runs a command per sample, speaking omk's stdin/stdout JSON protocol."""

    def __init__(self, command: str, *, timeout: float, supports_mocks: bool = False) -> None:
        self.argv = shlex.split(command)
        if not self.argv:
            raise ExecutionError("the executor command is empty")
        self.timeout = timeout
        self.supports_mocks = supports_mocks
        self.id = "command:" + " ".join(self.argv)
        # Read here, on the thread that builds executors, not on the loop's thread per call.
        self._environ = environment_snapshot()
        self._live: dict[str, int] = {}
        """Marker -> process group of each command running now (``aclose`` kills what is left)."""

    async def execute(self, request: ExecutionRequest) -> ExecutionResult:
        """Run the command with the request on stdin and read its answer from stdout."""
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
            # An app under test reaches its models through the gateway's URLs for this sample.
            out = await self._run(stdin, request, {**channel.env, **(request.model_env or {})})
            result = _parse_stdout(out.decode(errors="replace"))
            stats = channel.stats()
        if stats is not None and result.mockStats is None:
            result = result.model_copy(update={"mockStats": stats})
        if result.mockStats is not None:
            check_mock_stats(result.mockStats.hits, result.mockStats.perMock, source="the executor command")
        return result

    async def _run(self, stdin: bytes, request: ExecutionRequest, extra_env: dict[str, str]) -> bytes:
        env, tag = tagged_environment({**self._environ, **extra_env})
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
        self._live[tag] = proc.pid
        try:
            async with asyncio.timeout(self.timeout):
                out, err = await _exchange(proc, stdin)
        except TimeoutError:
            # Not retried (an ExecutionError): the same command would time out again.
            raise ExecutionError(f"executor command timed out after {self.timeout:g}s") from None
        except asyncio.CancelledError:
            # Interrupted: the group dies now (cheap); the /proc scan for children that left it is
            # left to aclose, which the run's shutdown awaits, so the loop stays free to cancel
            # the other calls.
            kill_group(proc.pid)
            raise
        finally:
            if tag in self._live and not _cancelling():
                # Before waiting: a child that left the group (setsid) and holds stdout open
                # would otherwise keep the exchange, and asyncio's wait(), going forever.
                kill_tagged(tag, group=proc.pid)
                del self._live[tag]
        if proc.returncode != 0:
            detail = err.decode(errors="replace").strip()[-_STDERR_LIMIT:]
            raise ExecutionError(detail or f"executor exited with code {proc.returncode}")
        return out

    async def aclose(self) -> None:
        """Kill every command still running or interrupted, children that left its group included."""
        live, self._live = self._live, {}
        for group in live.values():
            kill_group(group)
        if live:
            kill_tagged(live.keys())


def _cancelling() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


async def _exchange(proc: asyncio.subprocess.Process, stdin: bytes) -> tuple[bytes, bytes]:
    """Send ``stdin``, read stdout (capped) and the tail of stderr until both close, then wait."""
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None

    async def feed(stream: asyncio.StreamWriter) -> None:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            stream.write(stdin)
            await stream.drain()
        stream.close()

    async def read(stream: asyncio.StreamReader, limit: int, keep_tail: bool) -> bytes:
        data = bytearray()
        while chunk := await stream.read(65536):
            data += chunk
            if len(data) > limit:
                if not keep_tail:
                    raise ExecutionError(f"the executor command printed more than {limit} bytes")
                del data[:-limit]
        return bytes(data)

    out = asyncio.ensure_future(read(proc.stdout, MAX_STDOUT_BYTES, False))
    err = asyncio.ensure_future(read(proc.stderr, _STDERR_KEPT, True))
    fed = asyncio.ensure_future(feed(proc.stdin))
    try:
        await asyncio.gather(out, err, fed)
    finally:
        for task in (out, err, fed):
            task.cancel()
    await proc.wait()
    return out.result(), err.result()


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


class CallableExecutor(ExecutorDefaults):
    """Calls the user's Python function (sync or async) with the :class:`ExecutionRequest`."""

    def __init__(self, func: Callable[..., Any], *, name: str, supports_mocks: bool = False) -> None:
        self.func = func
        self.id = f"python:{name}"
        self.supports_mocks = supports_mocks or bool(getattr(func, "supports_mocks", False))

    async def execute(self, request: ExecutionRequest) -> ExecutionResult:
        """Call the function (awaited when it is a coroutine function) and read its answer."""
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
        """Nothing to close."""
        return None
