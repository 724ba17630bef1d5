"""Assertions on the output text: substrings, equality, regular expressions and JSON."""

from typing import Any, ClassVar, Literal, Self

from pydantic import Field, ValidationInfo, field_validator, model_validator

from pytest_omk.js.regex import VALID_FLAGS, JsRegexError, compile_js_regex
from pytest_omk.models._base import LocatedValueError, NonBlankStr
from pytest_omk.models.assertions._base import AssertionBase, Layer, _TextValues


class _TextValue(AssertionBase):
    value: NonBlankStr
    """The text to look for."""


class Contains(_TextValue):
    """Case-insensitive substring must appear."""

    type: Literal["contains"]
    layer: ClassVar[Layer | None] = "fact"


class NotContains(_TextValue):
    """Case-insensitive substring must not appear (legacy alias of ``contains`` + ``not``)."""

    type: Literal["not_contains"]
    layer: ClassVar[Layer | None] = "fact"


class StartsWith(_TextValue):
    """Output starts with the value (case-insensitive, untrimmed)."""

    type: Literal["starts_with"]
    layer: ClassVar[Layer | None] = "behavior"


class EndsWith(_TextValue):
    """Output ends with the value (case-insensitive, untrimmed)."""

    type: Literal["ends_with"]
    layer: ClassVar[Layer | None] = "behavior"


class Equals(_TextValue):
    """Trimmed output equals the trimmed value (case-sensitive)."""

    type: Literal["equals"]
    layer: ClassVar[Layer | None] = "fact"


class NotEquals(_TextValue):
    """Trimmed output differs from the trimmed value (legacy alias of ``equals`` + ``not``)."""

    type: Literal["not_equals"]
    layer: ClassVar[Layer | None] = "fact"


class ContainsAll(_TextValues):
    """Every value appears (case-insensitive)."""

    type: Literal["contains_all"]
    layer: ClassVar[Layer | None] = "fact"


class ContainsAny(_TextValues):
    """At least one value appears (case-insensitive)."""

    type: Literal["contains_any"]
    layer: ClassVar[Layer | None] = "fact"


class Regex(AssertionBase):
    """JavaScript regular expression test on the output."""

    type: Literal["regex"]
    layer: ClassVar[Layer | None] = "fact"
    pattern: str
    """JavaScript regex source."""
    flags: str | None = None
    """JavaScript flags (``d g i m s u v y``, each at most once); absent or empty means ``i``."""

    @field_validator("flags")
    @classmethod
    def _known_flags(cls, flags: str | None) -> str | None:
        if flags is not None:
            unknown = sorted(set(flags) - VALID_FLAGS)
            if unknown:
                raise ValueError(f"unknown regex flag {unknown[0]!r} (allowed: d g i m s u v y)")
            if len(set(flags)) != len(flags):
                raise ValueError(f"duplicate regex flag in {flags!r}")
        return flags

    @property
    def effective_flags(self) -> str:
        """The flags the reference compiles with: ``flags || 'i'``."""
        return self.flags or "i"

    @model_validator(mode="after")
    def _compiles(self, info: ValidationInfo) -> Self:
        js = (info.context or {}).get("js")
        if js is not None:
            # The loader's engine: V8 decides, so what loads is exactly what the reference loads.
            error = js.regex_error(self.pattern, self.effective_flags)
            if error is not None:
                raise LocatedValueError(f"invalid regex (JavaScript refuses it): {error}", "pattern")
            return self
        # Built without an engine (programmatic use): the translator's check, which refuses a few
        # patterns that JavaScript accepts (variable-length lookbehind, \p{...} without u).
        try:
            compile_js_regex(self.pattern, self.flags)
        except JsRegexError as exc:
            raise LocatedValueError(str(exc), "pattern") from None
        return self


class JsonValid(AssertionBase):
    """The raw output parses as JSON (any JSON value)."""

    type: Literal["json_valid"]
    layer: ClassVar[Layer | None] = "fact"


class JsonSchema(AssertionBase):
    """The raw output parses as JSON and validates against ``schema``."""

    type: Literal["json_schema"]
    layer: ClassVar[Layer | None] = "fact"
    schema_: dict[str, Any] = Field(alias="schema")
    """JSON Schema, draft-07 as a default strict Ajv 8 reads it (see ``models.jsonschema_check``)."""

    @field_validator("schema_")
    @classmethod
    def _valid_schema(cls, schema: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        from pytest_omk.models.jsonschema_check import check_schema

        check_schema(schema, (info.context or {}).get("js"))
        return schema
