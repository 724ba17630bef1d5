"""Shared building blocks of the sample-file models: the strict base class and constrained types.

The format's owner validates with JavaScript semantics, so "blank" here means blank after a JS
``String.prototype.trim()``, which strips a slightly different set of characters than ``str.strip()``.

The modules that define pydantic models do without ``from __future__ import annotations``: pydantic
would compile and evaluate every field's annotation string for every class (about a fifth of
importing the models, which a live run does before its first call). A class that refers to itself
returns ``Self``; a reference to a later name is quoted.
"""

import math
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    WithJsonSchema,
    model_validator,
)

from pytest_omk.js.text import JS_WHITESPACE, js_trim

MAX_SAFE_INTEGER = 2**53 - 1

NON_BLANK_PATTERN = "[^" + "".join(f"\\u{ord(c):04x}" for c in JS_WHITESPACE) + "]"
"""An ECMA-262 (and Python ``re``) pattern that finds a character JavaScript's ``trim()`` keeps.

Written as an explicit class rather than ``\\S`` because the two engines disagree on ``\\s`` (U+FEFF,
U+001C-U+001F, U+0085), and JSON Schema validators run patterns in either engine.
"""


class LocatedValueError(ValueError):
    """A validation failure about one part of the value being validated.

    Pydantic reports an error raised in a validator at the validated field or model; ``loc`` is the
    rest of the way down to the offending key (``("assertions", 2, "value")``), which the loader
    appends so that messages point at the exact JSON path.
    """

    def __init__(self, message: str, *loc: str | int) -> None:
        super().__init__(message)
        self.loc: tuple[str | int, ...] = loc


class StrictModel(BaseModel):
    """Base of every sample-file model: unknown keys fail, no type coercion, immutable."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        frozen=True,
        populate_by_name=False,
        # No use_attribute_docstrings: the schema generators add the field docstrings themselves
        # (pytest_omk.models.field_docs); pydantic reading every model's source cost each pytest run.
    )

    @model_validator(mode="before")
    @classmethod
    def _no_nulls(cls, data: Any) -> Any:
        # The format's owner declares optional keys as "absent or a value": an explicit null fails
        # there, while pydantic would quietly read it as "absent" through the ``X | None`` fields.
        # Every model of every sample passes here: the scan for a null is the C loop of ``in``,
        # and only a mapping that holds one is matched against the fields (a third of loading a
        # large file went to walking every model's fields).
        if isinstance(data, dict) and None in data.values():
            for field_name, info in cls.model_fields.items():
                key = info.alias or field_name
                if key in data and data[key] is None:
                    hint = "" if info.is_required() else " (leave the key out instead)"
                    raise LocatedValueError(f"must not be null{hint}", key)
        return data


def _non_blank(value: str) -> str:
    if not js_trim(value):
        raise ValueError("must be a non-blank string")
    return value


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError("must be a finite number")
    return value


def _safe_number(value: float) -> float:
    if abs(value) > MAX_SAFE_INTEGER:
        raise ValueError(f"must be a number with magnitude at most {MAX_SAFE_INTEGER}")
    return value


def _positive_integer(value: Any) -> Any:
    # JSON and YAML give 2.0 for "2.0"; JavaScript's Number.isSafeInteger accepts it, so do we.
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return value


NonBlankStr = Annotated[
    str,
    Field(min_length=1),
    AfterValidator(_non_blank),
    WithJsonSchema({"type": "string", "minLength": 1, "pattern": NON_BLANK_PATTERN}),
]
"""A string that is not empty and not only whitespace."""

NonEmptyStr = Annotated[str, Field(min_length=1)]
"""A string with at least one character."""

FiniteNumber = Annotated[float, AfterValidator(_finite)]
"""Any finite number (integers are accepted)."""

NonNegativeNumber = Annotated[
    float,
    Field(ge=0),
    AfterValidator(_finite),
    AfterValidator(_safe_number),
    WithJsonSchema({"type": "number", "minimum": 0, "maximum": MAX_SAFE_INTEGER}),
]
"""A finite number >= 0."""

PositiveWeight = Annotated[float, Field(gt=0), AfterValidator(_finite)]
"""A finite number > 0."""

PositiveInteger = Annotated[int, BeforeValidator(_positive_integer), Field(ge=1, le=MAX_SAFE_INTEGER)]
"""A whole number >= 1 (``2.0`` is accepted as ``2``)."""

NonBlankList = Annotated[list[NonBlankStr], Field(min_length=1)]
"""A non-empty list of non-blank strings."""
