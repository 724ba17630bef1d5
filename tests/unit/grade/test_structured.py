"""json_valid and json_schema: JSON.parse semantics on the raw output, then JSON Schema."""

from __future__ import annotations

import http.server
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from pytest_omk.grade.structured import parse_json
from pytest_omk.models.jsonschema_check import check_schema
from tests.support.grading import ENGINE, read, status

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
    deep = '{"a":' * depth + '[1, 2.5e3, true, null, "x\\u00e9"]' + "}" * depth
    parsed = parse_json(deep)
    assert parsed.error is None
    assert status(JSON_VALID, deep) == "pass"
    assert status({"type": "json_schema", "schema": {"type": "object", "required": ["a"]}}, deep) == "pass"


@pytest.mark.parametrize(
    "broken",
    [
        "[" * 3_000 + "]" * 2_999,
        "[" * 3_000 + "1,]" + "]" * 2_999,
        "[" * 3_000 + "NaN" + "]" * 3_000,
        "[" * 3_000 + "]" * 3_000 + " x",
        '{"a":' * 3_000 + "1" + "}" * 2_999 + "]",
    ],
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


def test_json_schema_is_draft_07_with_ref_siblings_applied() -> None:
    # Ajv 8 applies the keywords beside $ref (jsonschema's draft-07 ignores them).
    schema = {"$ref": "#/definitions/s", "maxLength": 1, "definitions": {"s": {"type": "string"}}}
    assert status({"type": "json_schema", "schema": schema}, '"abc"') == "fail"
    assert status({"type": "json_schema", "schema": schema}, '"a"') == "pass"
    tuple_schema = {"$schema": "http://json-schema.org/draft-07/schema", "items": [{"type": "string"}]}
    assert status({"type": "json_schema", "schema": tuple_schema}, "[1]") == "fail"


def test_pattern_is_a_javascript_u_flag_expression() -> None:
    digits = {"type": "string", "pattern": "^\\d+$"}
    assert status({"type": "json_schema", "schema": digits}, '"123"') == "pass"
    assert status({"type": "json_schema", "schema": digits}, '"\u0663\u0663"') == "fail"  # Arabic-Indic
    keyed = {
        "type": "object",
        "patternProperties": {"^\\p{Lu}": {"type": "integer"}},
        "additionalProperties": False,
    }
    assert status({"type": "json_schema", "schema": keyed}, '{"\u00c9t\u00e9": 1}') == "pass"
    assert status({"type": "json_schema", "schema": keyed}, '{"x": 1}') == "fail"


@pytest.mark.parametrize(
    ("schema", "named"),
    [
        ({"type": "string", "format": "email"}, '"format"'),
        ({"type": "object", "example": {}}, 'unknown keyword "example"'),
        ({"items": {"prefixItems": []}}, 'unknown keyword "prefixItems" at #/items'),
        ({"$schema": "https://json-schema.org/draft/2020-12/schema"}, "unknown JSON Schema dialect"),
        ({"if": {"type": "string"}}, '"if" without "then"'),
        ({"additionalItems": False}, '"additionalItems" without a tuple'),
        ({"properties": {"a": {"minLength": "x"}}}, "invalid JSON Schema"),
    ],
)
def test_what_a_strict_ajv_refuses_never_loads(schema: dict[str, Any], named: str) -> None:
    with pytest.raises(ValueError, match=re.escape(named)):
        check_schema(schema, ENGINE)


def test_an_invalid_u_flag_pattern_never_loads() -> None:
    with pytest.raises(ValueError, match="u flag"):
        check_schema({"type": "string", "pattern": "a{"}, ENGINE)


def test_a_local_reference_that_resolves_nowhere_is_an_error_reading() -> None:
    schema = {"type": "object", "properties": {"a": {"$ref": "#/definitions/nowhere"}}}
    reading = read({"type": "json_schema", "schema": schema, "not": True}, '{"a": 1}')
    assert (reading.status, reading.final) == ("fail", True)
    assert "never fetched" in reading.message


def test_a_remote_reference_is_never_fetched(tmp_path: Path) -> None:
    # A schema must not make the grader an HTTP client (nor read files): zero requests reach the server.
    requests: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            requests.append(self.path)
            body = b'{"type": "string"}'
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        (tmp_path / "x.json").write_text('{"type": "string"}', encoding="utf-8")
        for ref in (f"http://127.0.0.1:{port}/x.json", (tmp_path / "x.json").as_uri()):
            reading = read({"type": "json_schema", "schema": {"$ref": ref}}, '"a"')
            assert reading.status == "fail" and "never fetched" in reading.message
    finally:
        server.shutdown()
        server.server_close()
    assert requests == []


def test_not_inverts_structured_readings() -> None:
    assert status({"type": "json_valid", "not": True}, "plain prose") == "pass"
    assert (
        status({"type": "json_schema", "schema": SCHEMA, "not": True}, '{"name": "a", "tags": []}') == "fail"
    )
