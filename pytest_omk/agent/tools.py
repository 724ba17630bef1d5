"""The agent's built-in tools: ``Bash``, ``Read``, ``Write``, ``Edit``, ``Glob`` and ``Grep``.

Every tool works inside one directory, the sample's temporary working copy (:mod:`.isolation`).
The file tools confine every path to it: a relative path is taken from the copy, an absolute path
must lie inside it, and symbolic links are resolved before the check, so neither ``../..`` nor a
link pointing elsewhere reaches the user's files; they open regular files only, with size caps.
``Grep`` runs in a child process killed at the tool timeout (a regex may backtrack for hours).
``Bash`` runs in the sandbox of :mod:`.sandbox` (bubblewrap where available) with resource limits,
an allow-listed environment (:mod:`.environment`), and cannot outlive its timeout: its process group and every
process carrying its marker (``setsid`` jobs included) are killed when the time is up and when the
command ends.

Results sent back to the model are capped at :data:`MAX_OUTPUT_CHARS` characters; a longer result
keeps its beginning and says how much was cut. Paths in ``Glob`` and ``Grep`` results are relative
to the working copy, so traces do not depend on where the copy happened to be created.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pytest_omk._util.proctree import kill_group, kill_tagged, tagged_environment
from pytest_omk.agent import file_tools
from pytest_omk.agent.environment import shell_environment
from pytest_omk.agent.file_tools import ToolError
from pytest_omk.agent.sandbox import Sandbox
from pytest_omk.execute.spawn import start_session
from pytest_omk.recordings.scrub import environment_snapshot

MAX_OUTPUT_CHARS = 30_000
"""Cap on the text of one tool result (the rest is replaced by a note saying how much was cut)."""

Status = Literal["success", "failure", "cancelled"]


@dataclass(frozen=True)
class ToolResult:
    """The text a tool call produced, and whether it succeeded."""

    output: str
    success: bool = True
    status: Status = "success"

    @classmethod
    def failed(cls, output: str, status: Status = "failure") -> ToolResult:
        """A result of a tool call that did not succeed."""
        return cls(output, success=False, status=status)


@dataclass(frozen=True)
class ToolSpec:
    """What the model is told about a tool: its name, purpose and JSON Schema of arguments."""

    name: str
    description: str
    schema: Mapping[str, Any]


def truncate(text: str, limit: int = MAX_OUTPUT_CHARS) -> str:
    """``text`` cut to ``limit`` characters, with a note of how many were dropped."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[output truncated: {len(text) - limit} more characters]"


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


_PATH = {"type": "string", "description": "Path relative to the working directory (or absolute inside it)"}

BUILTIN_SPECS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "Bash",
        "Run a bash command in the working directory and return its combined stdout and stderr.",
        _object({"command": {"type": "string", "description": "The command line to run"}}, ["command"]),
    ),
    ToolSpec(
        "Read",
        "Read a text file; lines are numbered from 1. Use offset and limit for long files.",
        _object(
            {
                "file_path": _PATH,
                "offset": {"type": "integer", "minimum": 1, "description": "First line to read (1-based)"},
                "limit": {"type": "integer", "minimum": 1, "description": "Number of lines to read"},
            },
            ["file_path"],
        ),
    ),
    ToolSpec(
        "Write",
        "Create or overwrite a text file (parent directories are created).",
        _object({"file_path": _PATH, "content": {"type": "string"}}, ["file_path", "content"]),
    ),
    ToolSpec(
        "Edit",
        "Replace an exact string in a file. old_string must occur exactly once unless replace_all is true.",
        _object(
            {
                "file_path": _PATH,
                "old_string": {"type": "string"},
                "new_string": {"type": "string"},
                "replace_all": {"type": "boolean", "default": False},
            },
            ["file_path", "old_string", "new_string"],
        ),
    ),
    ToolSpec(
        "Glob",
        "List files matching a glob pattern such as **/*.py, relative to the working directory.",
        _object({"pattern": {"type": "string"}, "path": _PATH}, ["pattern"]),
    ),
    ToolSpec(
        "Grep",
        "Search file contents with a Python regular expression; prints path:line:text for each match.",
        _object(
            {
                "pattern": {"type": "string", "description": "Python regular expression"},
                "path": _PATH,
                "glob": {"type": "string", "description": "Only search files whose path matches this glob"},
                "ignore_case": {"type": "boolean", "default": False},
                "files_only": {
                    "type": "boolean",
                    "default": False,
                    "description": "List matching files only",
                },
            },
            ["pattern"],
        ),
    ),
)
BUILTIN_NAMES = tuple(spec.name for spec in BUILTIN_SPECS)


_kill_group = kill_group


class BuiltinTools:
    """Runs the built-in tools inside ``root`` with a per-call ``timeout`` in seconds."""

    def __init__(
        self,
        root: Path,
        *,
        timeout: float,
        environ: Mapping[str, str] | None = None,
        sandbox: Sandbox | None = None,
        env_names: tuple[str, ...] = (),
        mask: Callable[[str], str] = str,
    ) -> None:
        self.root = Path(os.path.realpath(root))
        self._mask = mask  # the run's scrubber: an output is masked whole before it is cut
        self.timeout = timeout
        # An allow-list (agent/environment.py): the command's output goes to the model provider.
        self._environ = shell_environment(environment_snapshot() if environ is None else environ, env_names)
        self.sandbox = sandbox or Sandbox(None)

    async def run(self, name: str, arguments: Any) -> ToolResult:
        """Run the built-in tool ``name``; bad arguments and confinement errors are failed results."""
        if not isinstance(arguments, dict):
            return ToolResult.failed(f"{name}: the arguments must be a JSON object")
        try:
            if name == "Bash":
                return await self.bash(file_tools.text_arg(arguments, "command"))
            if name == "Grep":
                text = await self._grep(arguments)
            else:
                text = await self._in_thread(name, arguments)
        except ToolError as exc:
            return ToolResult.failed(f"{name}: {exc}")
        return ToolResult(truncate(self._mask(text)))

    async def _in_thread(self, name: str, arguments: dict[str, Any]) -> str:
        # File tools are synchronous; a thread keeps a large Grep from stalling other samples, and
        # the deadline makes the thread itself stop (a thread cannot be cancelled from outside).
        deadline = asyncio.get_running_loop().time() + self.timeout
        clock = asyncio.get_running_loop().time
        call = file_tools.dispatch(name, self.root, arguments, lambda: clock() > deadline)
        try:
            async with asyncio.timeout(self.timeout + 1):
                return await asyncio.to_thread(call)
        except TimeoutError:
            raise ToolError(f"timed out after {self.timeout:g} s") from None

    async def _grep(self, arguments: dict[str, Any]) -> str:
        """``Grep`` in a child process killed at the tool timeout (a regex may backtrack for hours)."""
        job = json.dumps({"root": str(self.root), "arguments": arguments}).encode()
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-I",
            file_tools.__file__,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            async with asyncio.timeout(self.timeout):
                out, _ = await process.communicate(job)
        except TimeoutError:
            raise ToolError(
                f"timed out after {self.timeout:g} s (the tool time limit); simplify the pattern or narrow the path"
            ) from None
        finally:
            _kill_group(process.pid)
            if process.returncode is None:
                await process.wait()
        try:
            answer = json.loads(out)
        except ValueError:
            raise ToolError(f"the search failed (exit code {process.returncode})") from None
        if not answer.get("ok"):
            raise ToolError(str(answer.get("text")))
        return str(answer.get("text"))

    async def bash(self, command: str) -> ToolResult:
        """Run ``command`` with ``bash -c`` in the working copy (see the module docstring)."""
        env, tag = tagged_environment({**self._environ, "PWD": str(self.root)})
        # As root the command runs as an unprivileged user, which must own what it may change.
        await asyncio.to_thread(self.sandbox.prepare, self.root)
        # Output goes to a file, not a pipe: a background job holding a pipe open would keep us
        # reading long after bash itself has exited.
        with tempfile.TemporaryFile() as sink:
            process = await start_session(
                *self.sandbox.argv(command, self.root),
                cwd=self.root,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
            )
            timed_out = False
            try:
                async with asyncio.timeout(self.timeout):
                    code = await process.wait()
            except TimeoutError:
                timed_out = True
                code = -1
            finally:
                # Always: on timeout, on cancellation, and after a normal exit (stray jobs).
                kill_tagged(tag, group=process.pid)
                if process.returncode is None:
                    await process.wait()
            sink.seek(0)
            output = sink.read(MAX_OUTPUT_CHARS * 4 + 1).decode("utf-8", "replace")
        output = truncate(self._mask(output))
        if timed_out:
            note = f"[omk-agent] Bash timed out after {self.timeout:g} s; its process group was killed"
            return ToolResult.failed(f"{output}\n{note}" if output else note)
        if code != 0:
            return ToolResult.failed(f"{output}\n[exit code {code}]" if output else f"[exit code {code}]")
        return ToolResult(output)
