"""json_valid and json_schema: JSON.parse semantics on the raw output, then JSON Schema."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_omk.grade.structured import parse_json
from tests.unit._grading import read, status

JSON_VALID = {"type": "json_valid"}


@pytest.mark.parametrize(
    "output",
    [
        '{"a": 1}',
        "[1, 2]",
        "42",
        '"x"',
        "null",
        "true",
        "-0.5e3",
        ' \t\r\n{"a":[]}\n ',
        '{"a":1,"a":2}',
        "1e400",
    ],
)
def test_json_valid_accepts_any_json_value(output: str) -> None:
    assert status(JSON_VALID, output) == "pass"


@pytest.mark.parametrize(
    "output",
    [
        "",
        "   ",
        '```json\n{"a": 1}\n```',  # no fence stripping
        'Here you go: {"a": 1}',  # no extraction
        "NaN",
        "[Infinity]",
        "-Infinity",
        "{'a': 1}",
        '{"a": 1,}',
        "01",
        "\ufeff{}",  # a BOM is not JSON whitespace
        "\u00a0{}",  # nor is a no-break space
        '"tab\there"',  # raw control characters inside strings
        "1٣",  # only ASCII digits
        '{"a": 1} trailing',
    ],
)
def test_json_valid_rejects_what_json_parse_rejects(output: str) -> None:
    assert status(JSON_VALID, output) == "fail"


def test_json_valid_failure_message_explains_and_quotes() -> None:
    reading = read(JSON_VALID, "```json\n{}\n```")
    assert reading.message.startswith("expected the output to be valid JSON (")
    assert "output: '```json {} ```'" in reading.message


@pytest.mark.parametrize("depth", [3_000, 100_000])
def test_any_nesting_depth_json_parse_accepts_is_valid(depth: int) -> None:
    # JSON.parse is not recursive; Python's parser stops near 1,000 levels.
    deep = '{"a":' * depth + "[1, 2.5e3, true, null, \"x\\u00e9\"]" + "}" * depth
    parsed = parse_json(deep)
    assert parsed.error is None
    assert status(JSON_VALID, deep) == "pass"
    assert status({"type": "json_schema", "schema": {"type": "object", "required": ["a"]}}, deep) == "pass"


@pytest.mark.parametrize(
    "broken",
    ["[" * 3_000 + "]" * 2_999, "[" * 3_000 + "1,]" + "]" * 2_999, "[" * 3_000 + "NaN" + "]" * 3_000,
     "[" * 3_000 + "]" * 3_000 + " x", '{"a":' * 3_000 + "1" + "}" * 2_999 + "]"],
)
def test_deep_invalid_json_is_invalid(broken: str) -> None:
    assert status(JSON_VALID, broken) == "fail"


SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["name", "tags"],
    "properties": {"name": {"type": "string"}, "tags": {"type": "array", "items": {"type": "integer"}}},
}


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ('{"name": "a", "tags": [1, 2.0]}', "pass"),  # 2.0 is an integer in JSON Schema, as in Ajv
        ('{"name": "a", "tags": [1, "x"]}', "fail"),
        ('{"name": "a"}', "fail"),
        ('```json\n{"name": "a", "tags": []}\n```', "fail"),
        ("NaN", "fail"),
    ],
)
def test_json_schema(output: str, expected: str) -> None:
    assert status({"type": "json_schema", "schema": SCHEMA}, output) == expected


def test_json_schema_message_points_at_the_offending_value() -> None:
    reading = read({"type": "json_schema", "schema": SCHEMA}, '{"name": "a", "tags": [1, "x"]}')
    assert reading.message.startswith("expected the output to match the JSON Schema; at /tags/1:")
    assert "'x' is not of type 'integer'" in reading.message


def test_json_schema_draft_from_dollar_schema() -> None:
    # prefixItems exists in 2020-12 only; under draft-07 (the default) it is ignored.
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "prefixItems": [{"type": "string"}]}
    assert status({"type": "json_schema", "schema": schema}, "[1]") == "fail"
    assert status({"type": "json_schema", "schema": {"prefixItems": [{"type": "string"}]}}, "[1]") == "pass"


def test_a_schema_that_breaks_while_validating_is_a_failure() -> None:
    schema = {"type": "object", "properties": {"a": {"$ref": "#/definitions/nowhere"}}}
    reading = read({"type": "json_schema", "schema": schema}, '{"a": 1}')
    assert reading.status == "fail"
    assert "could not be applied" in reading.message


def test_not_inverts_structured_readings() -> None:
    assert status({"type": "json_valid", "not": True}, "plain prose") == "pass"
    assert (
        status({"type": "json_schema", "schema": SCHEMA, "not": True}, '{"name": "a", "tags": []}') == "fail"
    )
