"""Tool-call mocks at run time: which mock a call hits, what it returns, and the hit statistics.

Matching follows the format's owner (omk-semantics §6.1): mocks are tried in the sample's order
and the first whose ``tool`` and every ``match`` condition hold wins. A hit answers instead of the
real tool. A miss is refused with ``[omk-mock-strict] unmocked <tool> call blocked`` when the
sample is strict (the default), and otherwise runs the real tool.

``return_seq`` gives the 1st, 2nd, ... element to the 1st, 2nd, ... hit of that mock. Once the
sequence is used up, **the last element repeats**. The owner's two runtimes disagree here (one
returns ``""``, the other repeats); repeating is chosen because a model that retries a call after
the scripted sequence should keep seeing a realistic answer, while an empty string would read as
a successful call that printed nothing and silently change what the model does next.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from pytest_omk.agent.file_tools import ToolError, read_regular
from pytest_omk.errors import ExecutionError
from pytest_omk.js.text import js_json_stringify
from pytest_omk.js.v8 import JsEngine
from pytest_omk.models.mocks import Mock, MockMatch, mock_keys
from pytest_omk.models.results import MockStats
from pytest_omk.models.tool_names import canonical_tool_name, same_tool

Lower = Callable[..., list[str]]
"""``toLowerCase()`` of each argument, in one V8 evaluation (:meth:`pytest_omk.js.v8.JsEngine.lower`)."""

STRICT_DENIAL = "[omk-mock-strict] unmocked {tool} call blocked"
MISSING_FILE = "[omk-mock-error] return_file not found: {path}"
UNSAFE_FILE = "[omk-mock-error] return_file refused: {reason}"
MAX_RETURN_FILE_BYTES = 10 * 1024 * 1024
"""Largest ``return_file`` read (a mock's answer, not a data set)."""


@dataclass(frozen=True)
class MockOutcome:
    """What to do with one tool call: answer with ``output`` (a hit), refuse it, or run it."""

    action: Literal["hit", "deny", "run"]
    output: str = ""
    key: str | None = None
    """The ``Tool:N`` key of the mock that was hit."""
    error: bool = False
    """The hit could not produce its result (a missing ``return_file``)."""


def _expand_home(path: str) -> str:
    # Only "~" and "~/..." are expanded, as the format's owner does ("~user" stays literal).
    if path == "~":
        return str(Path.home())
    if path.startswith("~/"):
        return str(Path.home()) + path[1:]
    return path


def glob_matches(pattern: str, text: str) -> bool:
    """Whole-string match where only ``*`` is special and matches any run, newlines included."""
    regex = "".join(r"[\s\S]*" if char == "*" else re.escape(char) for char in pattern)
    return re.fullmatch(regex, text) is not None


def _js_equal(expected: Any, actual: Any) -> bool:
    """JavaScript ``===`` on JSON primitives (``true`` is not ``1``; ``1`` is ``1.0``)."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and expected is actual
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        return expected == actual
    if expected is None or actual is None:
        return expected is None and actual is None
    return type(expected) is type(actual) and bool(expected == actual)


def _deep_equal(expected: Any, actual: Any) -> bool:
    if isinstance(expected, dict):
        return (
            isinstance(actual, dict)
            and expected.keys() == actual.keys()
            and all(_deep_equal(v, actual[k]) for k, v in expected.items())
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(expected) == len(actual)
            and all(_deep_equal(e, a) for e, a in zip(expected, actual, strict=True))
        )
    return _js_equal(expected, actual)


def input_subset(expected: Mapping[str, Any], actual: Any) -> bool:
    """Every expected key exists in ``actual``; objects recurse as subsets, arrays are exact."""
    if not isinstance(actual, dict):
        return False
    for key, want in expected.items():
        if key not in actual:
            return False
        got = actual[key]
        if isinstance(want, dict):
            if not input_subset(want, got):
                return False
        elif not _deep_equal(want, got):
            return False
    return True


def _strings(value: Any) -> list[str]:
    """Every string value anywhere in ``value`` (keys and numbers are not strings here)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def _field(tool_input: Any, name: str) -> str | None:
    value = tool_input.get(name) if isinstance(tool_input, dict) else None
    return value if isinstance(value, str) else None


def conditions_hold(match: MockMatch | None, tool_input: Any, lower: Lower) -> bool:
    """Whether every condition of ``match`` holds for the call's input (no ``match``: always).

    ``input_contains`` compares ``toLowerCase()`` of the needle and of each string value (``lower``).
    """
    if match is None:
        return True
    file_path = _field(tool_input, "file_path")
    if match.file_path is not None and (
        file_path is None or _expand_home(file_path) != _expand_home(match.file_path)
    ):
        return False
    if match.file_path_endswith is not None:
        if file_path is None:
            return False
        path, suffix = _expand_home(file_path), _expand_home(match.file_path_endswith)
        at_separator = path.endswith(suffix) and path[-len(suffix) - 1 : -len(suffix)] in ("/", "\\")
        if path != suffix and not at_separator:
            return False
    url = _field(tool_input, "url")
    if match.url is not None and url != match.url:
        return False
    if match.url_glob is not None and (url is None or not glob_matches(match.url_glob, url)):
        return False
    command = _field(tool_input, "command")
    if match.command_glob is not None and (command is None or not glob_matches(match.command_glob, command)):
        return False
    if match.input is not None and not input_subset(match.input, tool_input):
        return False
    if match.input_contains is not None:
        needle, *texts = lower(match.input_contains, *_strings(tool_input))
        if not any(needle in text for text in texts):
            return False
    return True


class V8Lower:
    """``toLowerCase()`` of each text in a V8 engine started on first use (``close`` stops it)."""

    def __init__(self) -> None:
        self._js: JsEngine | None = None

    def __call__(self, *texts: str) -> list[str]:
        """The texts in lower case, as JavaScript's ``toLowerCase`` makes them."""
        if self._js is None:
            self._js = JsEngine()
        return self._js.lower(*texts)

    def close(self) -> None:
        """Stop the engine, if it was started."""
        if self._js is not None:
            self._js.close()
            self._js = None


def _one_shot_lower(*texts: str) -> list[str]:
    """``toLowerCase()`` in an engine of its own, for a book built without one."""
    lower = V8Lower()
    try:
        return lower(*texts)
    finally:
        lower.close()


class MockBook:
    """The mocks of one sample run, with their hit counts (one instance per agent run)."""

    def __init__(
        self,
        mocks: Sequence[Mapping[str, Any]] | None,
        *,
        lower: Lower | None = None,
        strict: bool = True,
        base_dir: Path | None = None,
    ) -> None:
        try:
            self.mocks = [Mock.model_validate(dict(m)) for m in mocks or ()]
        except ValidationError as exc:
            raise ExecutionError(f"invalid mock: {exc.errors()[0]['msg']}") from None
        self.keys = mock_keys(self.mocks)
        self.strict = strict
        self.base_dir = base_dir
        self.lower = lower or _one_shot_lower
        """``toLowerCase`` for ``input_contains`` (the agent passes its engine's)."""
        self._hits = [0] * len(self.mocks)
        self._misses = 0

    @property
    def active(self) -> bool:
        """Whether the sample declares mocks at all (interception and ``mockStats`` only then)."""
        return bool(self.mocks)

    def declared_tools(self) -> list[str]:
        """The literal tool names the mocks intercept (``*`` left out), in declaration order."""
        return list(dict.fromkeys(m.tool for m in self.mocks if m.tool != "*"))

    def intercept(self, tool: str, tool_input: Any) -> MockOutcome:
        """Decide a call of ``tool`` (the name the model used) with ``tool_input``."""
        if not self.active:
            return MockOutcome("run")
        for index, mock in enumerate(self.mocks):
            if (mock.tool == "*" or same_tool(mock.tool, tool)) and conditions_hold(
                mock.match, tool_input, self.lower
            ):
                count = self._hits[index]
                self._hits[index] += 1
                output, error = self._result(mock, count)
                return MockOutcome("hit", output, self.keys[index], error)
        self._misses += 1
        if self.strict:
            return MockOutcome("deny", STRICT_DENIAL.format(tool=canonical_tool_name(tool)))
        return MockOutcome("run")

    def _result(self, mock: Mock, count: int) -> tuple[str, bool]:
        if mock.return_seq is not None:
            return _text(mock.return_seq[min(count, len(mock.return_seq) - 1)]), False
        if mock.return_file is not None:
            path = Path(_expand_home(mock.return_file))
            if not path.is_absolute():
                path = (self.base_dir or Path.cwd()) / path
            path = Path(os.path.abspath(path))
            return self._read_return_file(path)
        return _text(mock.return_ if mock.return_ is not None else ""), False

    def _read_return_file(self, path: Path) -> tuple[str, bool]:
        # Confined to the sample file's directory tree (links resolved), regular files only, capped:
        # a mock may not hand the model /proc/self/environ or the user's home directory.
        base = Path(os.path.realpath(self.base_dir or Path.cwd()))
        real = Path(os.path.realpath(path))
        if real != base and base not in real.parents:
            return UNSAFE_FILE.format(reason=f"{path} is outside the sample's directory {base}"), True
        if not real.exists():
            return MISSING_FILE.format(path=path), True
        try:
            data = read_regular(real, MAX_RETURN_FILE_BYTES, str(path))
        except ToolError as exc:
            return UNSAFE_FILE.format(reason=str(exc)), True
        return data.decode("utf-8", "replace"), False

    def stats(self) -> MockStats | None:
        """``{hits, misses, perMock}`` when the sample has mocks, else ``None`` (not reported)."""
        if not self.active:
            return None
        per_mock: dict[str, int] = {}
        for key, hits in zip(self.keys, self._hits, strict=True):
            if hits:
                per_mock[key] = hits
        return MockStats(hits=sum(self._hits), misses=self._misses, perMock=per_mock)


def _text(value: str | dict[str, Any]) -> str:
    """A mock result as the model receives it: text verbatim, an object as compact JSON."""
    return value if isinstance(value, str) else js_json_stringify(value)
