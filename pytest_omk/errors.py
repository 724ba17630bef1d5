"""Errors raised by pytest-omk, each a user-facing message rather than a traceback.

OmkError
 ├── SampleFileError      an eval-samples file cannot be read or is invalid (collection error)
 ├── ConfigError          an option, executor spec or config file is unusable (usage error)
 ├── ExecutionError       the model under test could not produce an answer (item ERROR)
 │    └── ReplayMissError a call has no recording while replay-only mode is on
 ├── ResolveError         a URL in a sample could not be resolved (item ERROR)
 └── JudgeError           the judge provider failed after retries (item ERROR)
"""

from __future__ import annotations

import re

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


class OmkError(Exception):
    """Base of every pytest-omk error."""


class SampleFileError(OmkError):
    """An eval-samples file is unreadable or breaks the format; names the file, path and line."""

    def __init__(
        self,
        path: str,
        reason: str,
        *,
        where: str | None = None,
        line: int | None = None,
        column: int | None = None,
    ):
        self.path = path
        self.reason = reason
        self.where = where
        self.line = line
        self.column = column
        super().__init__(self.message)

    @property
    def message(self) -> str:
        """``file: json.path (line N, column C): reason``."""
        location = self.path
        if self.where:
            location += f": {self.where}"
        if self.line is not None:
            column = f", column {self.column}" if self.column is not None else ""
            location += f" (line {self.line}{column})"
        return f"{location}: {self.reason}"


class ConfigError(OmkError):
    """A pytest-omk option or configuration file is unusable."""


class ExecutionError(OmkError):
    """The executor failed to produce an output for a sample (after retries)."""


class ReplayMissError(ExecutionError):
    """``--omk-record-mode=none`` and no recording matches the call."""


class ResolveError(OmkError):
    """A URL in a sample could not be resolved; the raw URL is never sent instead."""


class JudgeError(OmkError):
    """The judge provider failed after retries (not a verdict about the model)."""


def format_path(parts: list[str | int]) -> str:
    """``["samples", 3, "assertions", 0, "weight"]`` -> ``samples[3].assertions[0].weight``."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _IDENT.match(part):
            out += f".{part}" if out else part
        else:
            out += f"[{part!r}]"
    return out


class BudgetExhausted(Exception):
    """A live call was refused because the run's budget is spent: the sample is SKIPPED with this
    message as its reason (never failed, never an error), so it is deliberately no ``OmkError``."""

    PREFIX = "omk budget"
    """Every such reason starts with this (``skipReason`` in the report)."""


class SampleFailed(Exception):
    """Raised by an item or an assertion subtest to report a failed reading in one line."""

    def __init__(self, message: str, *, line: int | None = None, check: str = "") -> None:
        super().__init__(message)
        self.line = line
        """The 1-based line of the failed check in its sample file (``None``: the sample's line)."""
        self.check = check
        """The check's name (``assertion 1: contains``), shown with the line in long tracebacks."""
