"""The executor contract: one request in, one :class:`ExecutionResult` out.

Executors are asynchronous so that many model calls can be in flight at once. They raise
:class:`TransientError` for failures worth retrying (HTTP 429/5xx, timeouts, dropped
connections) and :class:`~pytest_omk.errors.ExecutionError` for everything else. Retries,
concurrency limits, timing and recordings are applied around them by the call pipeline, so an
executor only speaks its protocol.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from pytest_omk.errors import ExecutionError
from pytest_omk.models import Sample
from pytest_omk.models.results import ExecutionResult

Purpose = Literal["execute", "judge"]


@dataclass(frozen=True)
class ExecutionRequest:
    """What the model under test (or the judge) is asked."""

    prompt: str
    """The full user prompt (environment block, prompt, fenced context, URLs inlined)."""
    system: str | None = None
    model: str | None = None
    sample_id: str = ""
    cwd: Path | None = None
    """Absolute working directory for command executors and agents."""
    cwd_key: str = ""
    """``cwd`` relative to the sample file's directory, in POSIX form: the part of it that identifies
    the call."""
    mocks: list[dict[str, Any]] | None = None
    """The sample's mocks as written in the file (aliases such as ``return`` kept)."""
    mocks_strict: bool = True
    allowed_tools: list[str] | None = None
    repeat: int = 0
    """Repeat index (``--omk-repeat``); part of the recording key."""
    purpose: Purpose = "execute"
    json_mode: bool = False
    """Ask the provider for a JSON object (judge calls)."""
    template: str | None = None
    """Judge template id and hash; part of the recording key."""
    sample: Sample | None = field(default=None, compare=False)
    """The sample itself, for Python callables (not part of the recording key)."""
    source: Path | None = field(default=None, compare=False)
    """The sample file the call is made for: stored in its recording, never part of the key
    (``--omk-record-mode=once`` asks whether that file has recordings)."""
    take: int = 0
    """Attempt of the same item (a rerun by pytest-rerunfailures is take 1, 2 ...); part of the key."""
    mock_base_dir: Path | None = field(default=None, compare=False)
    """Where a mock's relative ``return_file`` is found: the sample file's directory (not part of
    the recording key)."""

    def identity(self) -> dict[str, Any]:
        """The JSON-able fields that change the answer: the recording key is a hash of these."""
        return {
            "purpose": self.purpose,
            "model": self.model,
            "system": self.system,
            "prompt": self.prompt,
            "cwd": self.cwd_key,
            "mocks": self.mocks,
            "mocksStrict": self.mocks_strict if self.mocks else None,
            "allowedTools": sorted(self.allowed_tools) if self.allowed_tools is not None else None,
            "repeat": self.repeat,
            "take": self.take,
            "jsonMode": self.json_mode,
            "template": self.template,
        }


class TransientError(ExecutionError):
    """A failure that may succeed when retried; ``retry_after`` is the server's hint in seconds."""

    def __init__(self, message: str, *, retry_after: float | None = None, rate_limited: bool = False):
        super().__init__(message)
        self.retry_after = retry_after
        self.rate_limited = rate_limited


@runtime_checkable
class Executor(Protocol):
    """Anything that can answer an :class:`ExecutionRequest`."""

    @property
    def id(self) -> str:
        """Stable identity, part of the recording key (``openai``, ``command:./run.sh`` ...)."""
        ...

    @property
    def supports_mocks(self) -> bool:
        """Whether the executor intercepts tool calls with the sample's mocks."""
        ...

    async def execute(self, request: ExecutionRequest) -> ExecutionResult:
        """Answer ``request`` or raise :class:`TransientError` / ``ExecutionError``."""
        ...

    async def aclose(self) -> None:
        """Release connections and processes."""
        ...
