"""What the judge asks of the provider's output: a JSON object, the score's JSON schema, or nothing.

``--omk-judge-response-format`` picks one (:data:`JUDGE_RESPONSE_FORMATS`). ``json_schema`` sends
the shape the templates ask for in words: for a rubric dimension ``reasoning`` then ``score`` then
``reason``, for a judge-scored assertion ``score`` then ``reason``; the score is one of the integers
1 to 5. The schemas use only what OpenAI's strict structured outputs accept (every property
required, no other property allowed, ``enum``), and llama.cpp, vLLM and Ollama turn the same schema
into a grammar, so even a small local model answers in a shape the reply parser reads. Whatever the
setting, the reply is read by :mod:`pytest_omk.judge.parse` exactly as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Literal, get_args

JudgeResponseFormat = Literal["json_object", "json_schema", "none"]
JUDGE_RESPONSE_FORMATS: tuple[str, ...] = get_args(JudgeResponseFormat)
"""The values of ``--omk-judge-response-format``."""

_SCORE: Mapping[str, Any] = MappingProxyType({"type": "integer", "enum": [1, 2, 3, 4, 5]})
_TEXT: Mapping[str, Any] = MappingProxyType({"type": "string"})


def score_schema(*, reasoning: bool) -> dict[str, Any]:
    """The JSON schema of a judge reply (``reasoning`` first for a rubric dimension)."""
    names = ("reasoning", "score", "reason") if reasoning else ("score", "reason")
    properties = {name: dict(_SCORE if name == "score" else _TEXT) for name in names}
    return {
        "type": "object",
        "properties": properties,
        "required": list(names),
        "additionalProperties": False,
    }


def request_format(setting: str, *, rubric: bool) -> tuple[bool, dict[str, Any] | None]:
    """``(json_mode, json_schema)`` of a judge request under ``setting``."""
    if setting == "json_schema":
        return False, score_schema(reasoning=rubric)
    return setting == "json_object", None
