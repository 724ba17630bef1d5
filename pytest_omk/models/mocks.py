"""Tool-call mocks: what a call must look like to be intercepted, and what it returns instead."""

from typing import Any, Self

from pydantic import Field, model_validator

from pytest_omk.models._base import LocatedValueError, NonEmptyStr, StrictModel


class MockMatch(StrictModel):
    """Conditions on the tool call's input; every key present must hold."""

    file_path: NonEmptyStr | None = None
    """``input.file_path`` equals this (after ``~`` expansion)."""
    file_path_endswith: NonEmptyStr | None = None
    """``input.file_path`` ends with this path suffix at a separator."""
    command_glob: NonEmptyStr | None = None
    """``input.command`` matches this glob (only ``*`` is special)."""
    input_contains: NonEmptyStr | None = None
    """Some string value anywhere in the input contains this (case-insensitive)."""
    input: dict[str, Any] | None = None
    """The input contains these keys and values (recursive subset)."""
    url: NonEmptyStr | None = None
    """``input.url`` equals this exactly."""
    url_glob: NonEmptyStr | None = None
    """``input.url`` matches this glob (only ``*`` is special)."""

    @model_validator(mode="after")
    def _url_or_glob(self) -> Self:
        if self.url is not None and self.url_glob is not None:
            raise LocatedValueError('"url" and "url_glob" cannot be combined; use one of them', "url_glob")
        return self


ReturnValue = str | dict[str, Any]


class Mock(StrictModel):
    """Intercept calls to ``tool`` that satisfy ``match``; answer with exactly one return source."""

    tool: NonEmptyStr
    """Tool name (canonical, e.g. ``Bash``, ``Read``; ``*`` = any tool)."""
    match: MockMatch | None = None
    """Conditions on the call's input (all must hold); absent means every call of ``tool``."""
    return_: ReturnValue | None = Field(default=None, alias="return")
    """Result text, or a JSON object sent as compact JSON."""
    return_file: NonEmptyStr | None = None
    """File whose text is the result, relative to the sample file's directory."""
    return_seq: list[ReturnValue] | None = Field(default=None, min_length=1)
    """Results for the 1st, 2nd, ... hit of this mock."""

    @model_validator(mode="after")
    def _one_return_source(self) -> Self:
        sources = [s for s in (self.return_, self.return_file, self.return_seq) if s is not None]
        if len(sources) != 1:
            raise ValueError("a mock needs exactly one of return, return_file or return_seq")
        return self


def mock_keys(mocks: list[Mock]) -> list[str]:
    """The ``Tool:N`` keys of ``mocks``: per literal tool name, 1-based, in declaration order."""
    seen: dict[str, int] = {}
    keys: list[str] = []
    for mock in mocks:
        seen[mock.tool] = seen.get(mock.tool, 0) + 1
        keys.append(f"{mock.tool}:{seen[mock.tool]}")
    return keys
