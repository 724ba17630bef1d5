"""Assertions that bound a number: output length, word count, cost, latency, turns, tool calls."""

from typing import ClassVar, Literal

from pytest_omk.models.assertions._base import Layer, _Bound


class MinLength(_Bound):
    """Output length (UTF-16 code units) >= value."""

    type: Literal["min_length"]
    layer: ClassVar[Layer | None] = "behavior"


class MaxLength(_Bound):
    """Output length (UTF-16 code units) <= value."""

    type: Literal["max_length"]
    layer: ClassVar[Layer | None] = "behavior"


class WordCountMin(_Bound):
    """Whitespace-separated word count >= value."""

    type: Literal["word_count_min"]
    layer: ClassVar[Layer | None] = "behavior"


class WordCountMax(_Bound):
    """Whitespace-separated word count <= value."""

    type: Literal["word_count_max"]
    layer: ClassVar[Layer | None] = "behavior"


class CostMax(_Bound):
    """Reported execution cost in USD <= value."""

    type: Literal["cost_max"]
    layer: ClassVar[Layer | None] = "behavior"


class LatencyMax(_Bound):
    """Execution wall time in milliseconds <= value."""

    type: Literal["latency_max"]
    layer: ClassVar[Layer | None] = "behavior"


class TurnsMin(_Bound):
    """Reported turn count >= value."""

    type: Literal["turns_min"]
    layer: ClassVar[Layer | None] = "behavior"


class TurnsMax(_Bound):
    """Reported turn count <= value."""

    type: Literal["turns_max"]
    layer: ClassVar[Layer | None] = "behavior"


class ToolsCountMin(_Bound):
    """Number of tool calls in the trace >= value."""

    type: Literal["tools_count_min"]
    layer: ClassVar[Layer | None] = "behavior"


class ToolsCountMax(_Bound):
    """Number of tool calls in the trace <= value."""

    type: Literal["tools_count_max"]
    layer: ClassVar[Layer | None] = "behavior"
