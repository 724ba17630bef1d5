"""Assertions on an agent's trace: which tools were called, with what, and which mocks were hit."""

import re
from typing import ClassVar, Literal

from pydantic import field_validator

from pytest_omk.models._base import FiniteNumber, NonBlankStr
from pytest_omk.models.assertions._base import AssertionBase, Layer, _TextValues

# ASCII digits and a true end of string: Python's \d and $ would also take "Read:1\n" or Arabic digits.
_TOOL_REF = re.compile(r"[^:]+:[1-9][0-9]*")


class ToolsCalled(_TextValues):
    """Every named tool was called (case-insensitive names)."""

    type: Literal["tools_called"]
    layer: ClassVar[Layer | None] = "behavior"


class ToolsNotCalled(_TextValues):
    """None of the named tools was called."""

    type: Literal["tools_not_called"]
    layer: ClassVar[Layer | None] = "behavior"


class _ToolNeedle(AssertionBase):
    value: NonBlankStr
    """``Tool:needle``; split at the first colon, so the needle may contain colons."""

    @field_validator("value")
    @classmethod
    def _tool_and_needle(cls, value: str) -> str:
        colon = value.find(":")
        if colon <= 0 or colon == len(value) - 1:
            raise ValueError('must look like "Tool:needle" (a colon that is neither first nor last)')
        return value


class ToolOutputContains(_ToolNeedle):
    """Some call of the tool has output containing the needle (case-insensitive)."""

    type: Literal["tool_output_contains"]
    layer: ClassVar[Layer | None] = "fact"


class ToolInputContains(_ToolNeedle):
    """Some call of the tool has compact-JSON input containing the needle (case-insensitive)."""

    type: Literal["tool_input_contains"]
    layer: ClassVar[Layer | None] = "fact"


class ToolInputNotContains(_ToolNeedle):
    """No call of the tool has input containing the needle."""

    type: Literal["tool_input_not_contains"]
    layer: ClassVar[Layer | None] = "fact"


class MockHit(AssertionBase):
    """The declared mock ``Tool:N`` was hit at least ``threshold`` times."""

    type: Literal["mock_hit"]
    layer: ClassVar[Layer | None] = "behavior"
    value: NonBlankStr
    """``Tool:N``: the literal ``tool`` of a mock and its 1-based ordinal among mocks of that tool."""
    threshold: FiniteNumber = 1.0
    """Minimum hit count (default 1)."""

    @field_validator("value")
    @classmethod
    def _tool_ordinal(cls, value: str) -> str:
        if not _TOOL_REF.fullmatch(value):
            raise ValueError('must look like "Tool:N" with N a positive whole number, e.g. "Read:1"')
        return value
