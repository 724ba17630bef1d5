"""The JSON Schema of eval-sample files, generated from :mod:`pytest_omk.models`.

The schema is pydantic's rendering of :class:`~pytest_omk.models.SampleSet` (field docstrings become
descriptions), reshaped where pydantic's output is not plain JSON Schema or says less than the models
enforce: optional keys may be absent but never ``null``, constraints that pydantic leaves as ``ge``/
``le`` become ``minimum``/``maximum``, the assertion union is a ``oneOf`` without OpenAPI's
``discriminator``, ``assert-set`` children exclude the asynchronous types, and the mock, regex-flag
and ``Tool:needle`` rules are spelled out. Rules that need more than one value at a time (or a
JavaScript engine) are listed in the root ``$comment``; the loader enforces them.

Run ``python -m pytest_omk.models.schema_export`` to rewrite the committed copies of this schema and of the
report's (:mod:`pytest_omk.models.report_schema`), ``--check`` to verify them.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_omk.models import ASSERTION_CLASSES, SampleSet, report_schema, trend_schema
from pytest_omk.models.field_docs import document_fields

SCHEMA_ID = "https://pytest-omk.dev/schemas/eval-samples/v2/eval-sample-set.schema.json"
SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
RELATIVE_PATH = Path("schemas/eval-samples/v2/eval-sample-set.schema.json")
"""Where the schema lives, both below the repository root and inside the ``pytest_omk`` package."""

CROSS_FIELD_RULES = (
    "Rules this schema cannot express, enforced by the pytest-omk loader: "
    "(1) a sample's rubric weights sum to 1 within 1e-9; "
    "(2) every mock_hit value Tool:N (also inside assert-set) names the Nth declared mock whose tool is "
    "exactly Tool; "
    "(3) sample_id values are unique within a file (and across the files of a split directory); "
    "(4) a regex pattern compiles as a JavaScript RegExp with its flags (default i); "
    "(5) a json_schema assertion's schema is a draft-07 JSON Schema a default strict Ajv 8 compiles "
    "(no unknown keyword, no format, no other $schema, patterns are JavaScript u-flag expressions); "
    "(6) faithfulness and context_recall need a non-blank reference or a non-blank sample context; "
    "(7) assert-set nesting stays below 16 levels. "
    "YAML files also may not repeat a key, and unquoted YAML 1.1 booleans (yes/no/on/off) or dates "
    "are rejected where a string is required."
)

# A string JavaScript's trim() would not empty: see pytest_omk.models._base.NON_BLANK_PATTERN.
# "(?![\s\S])" is an end-of-string test that means the same in ECMA-262 and Python (unlike "$").
_END = r"(?![\s\S])"
TOOL_NEEDLE_PATTERN = r"^[^:]+:[\s\S]"
"""``Tool:needle``: a colon that is neither the first nor the last character."""
MOCK_REF_PATTERN = rf"^[^:]+:[1-9][0-9]*{_END}"
"""``Tool:N`` with N a positive whole number."""
REGEX_FLAGS_PATTERN = rf"^(?![\s\S]*([\s\S])[\s\S]*\1)[dgimsuvy]*{_END}"
"""JavaScript regex flags, each at most once."""

_CONSTRAINT_NAMES = {"ge": "minimum", "le": "maximum", "gt": "exclusiveMinimum", "lt": "exclusiveMaximum"}
_SCHEMA_MAPS = ("properties", "$defs", "patternProperties", "dependentSchemas")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_VALUES = ("items", "additionalProperties", "not", "propertyNames", "contains", "if", "then", "else")
_HEADER_ORDER = (
    "$schema",
    "$id",
    "title",
    "description",
    "$comment",
    "type",
    "required",
    "additionalProperties",
)


def build_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of an ``omk.eval-sample-set/v2`` document."""
    document_fields(SampleSet)
    raw = SampleSet.model_json_schema(by_alias=True, mode="validation")
    _walk(raw, _plain_json_schema)
    defs: dict[str, Any] = raw["$defs"]
    _assertion_unions(defs)
    _spell_out_rules(defs)
    root = {
        "$schema": SCHEMA_DIALECT,
        "$id": SCHEMA_ID,
        "title": "omk eval-sample set (omk.eval-sample-set/v2)",
        "description": (
            "An eval-samples file as pytest-omk loads it: a schemaVersion, a non-empty samples array and "
            "optional requires. Every object is closed: unknown keys are errors."
        ),
        "$comment": CROSS_FIELD_RULES,
        **{k: v for k, v in raw.items() if k not in ("title", "description", "$defs")},
        "$defs": dict(sorted(defs.items())),
    }
    return {**{k: root[k] for k in _HEADER_ORDER if k in root}, **root}


def render(schema: dict[str, Any]) -> str:
    """The committed text of ``schema``: two-space indents, UTF-8, trailing newline."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def schema_files(root: Path, relative: Path = RELATIVE_PATH) -> list[Path]:
    """The committed copies: the repository's ``schemas/`` file and the one shipped in the package."""
    package = Path(__file__).resolve().parents[1]
    return [root / relative, package / relative]


def generated(root: Path) -> list[tuple[Path, str]]:
    """Every committed schema file with the text it must hold: the sample set's, the report's, the trend's."""
    texts = [
        (RELATIVE_PATH, render(build_schema())),
        (report_schema.RELATIVE_PATH, render(report_schema.build_report_schema())),
        (trend_schema.RELATIVE_PATH, render(trend_schema.build_trend_schema())),
    ]
    return [(file, text) for relative, text in texts for file in schema_files(root, relative)]


# --- generic clean-up ------------------------------------------------------------------------------


def _walk(schema: Any, fix: Callable[[dict[str, Any]], None]) -> None:
    """Apply ``fix`` to ``schema`` and every subschema in it (not to property names or values)."""
    if not isinstance(schema, dict):
        return
    fix(schema)
    for key in _SCHEMA_MAPS:
        for sub in schema.get(key, {}).values():
            _walk(sub, fix)
    for key in _SCHEMA_LISTS:
        for sub in schema.get(key, []):
            _walk(sub, fix)
    for key in _SCHEMA_VALUES:
        _walk(schema.get(key), fix)


def _plain_json_schema(schema: dict[str, Any]) -> None:
    # Optional keys are "absent or a value" in the format; the models reject an explicit null.
    options = schema.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options:
        options = [o for o in options if o != {"type": "null"}]
        del schema["anyOf"]
        if len(options) == 1:
            schema.update({k: v for k, v in options[0].items() if k not in schema})
        else:
            schema["anyOf"] = options
    if "default" in schema and schema["default"] is None:
        del schema["default"]
    for short, keyword in _CONSTRAINT_NAMES.items():
        if short in schema:
            schema[keyword] = schema.pop(short)
    # Pydantic's per-field titles ("Sample Id") only repeat the key.
    for sub in schema.get("properties", {}).values():
        sub.pop("title", None)
    if isinstance(schema.get("description"), str):
        schema["description"] = re.sub(r"``([^`]+)``", r"`\1`", schema["description"])


# --- targeted rules -------------------------------------------------------------------------------


def _assertion_unions(defs: dict[str, Any]) -> None:
    """One ``Assertion`` union for top-level assertions, a ``SyncAssertion`` one for assert-set children."""
    ref = {name: {"$ref": f"#/$defs/{cls.__name__}"} for name, cls in ASSERTION_CLASSES.items()}
    defs["Assertion"] = {
        "description": "Any assertion, chosen by its `type`.",
        "oneOf": list(ref.values()),
    }
    defs["SyncAssertion"] = {
        "description": (
            "An assertion allowed inside an assert-set: every type except the asynchronous "
            + ", ".join(sorted(n for n, c in ASSERTION_CLASSES.items() if c.is_async))
            + "."
        ),
        "oneOf": [r for name, r in ref.items() if not ASSERTION_CLASSES[name].is_async],
    }
    defs["Sample"]["properties"]["assertions"]["items"] = {"$ref": "#/$defs/Assertion"}
    defs["AssertSet"]["properties"]["children"]["items"] = {"$ref": "#/$defs/SyncAssertion"}


def _spell_out_rules(defs: dict[str, Any]) -> None:
    sample = defs["Sample"]
    sample["properties"]["rubric"]["propertyNames"] = dict(defs["RubricDimension"]["properties"]["criterion"])
    sample["properties"]["rubric"]["propertyNames"].pop("description", None)
    sample["dependentRequired"] = {"mocksStrict": ["mocks"]}

    defs["Mock"]["oneOf"] = [{"required": [key]} for key in ("return", "return_file", "return_seq")]
    defs["Mock"]["$comment"] = "Exactly one return source."
    defs["MockMatch"]["not"] = {"required": ["url", "url_glob"]}
    defs["MockMatch"]["$comment"] = "url and url_glob exclude each other."

    defs["Regex"]["properties"]["flags"]["pattern"] = REGEX_FLAGS_PATTERN
    for name in ("ToolOutputContains", "ToolInputContains", "ToolInputNotContains"):
        defs[name]["properties"]["value"]["allOf"] = [{"pattern": TOOL_NEEDLE_PATTERN}]
    defs["MockHit"]["properties"]["value"]["allOf"] = [{"pattern": MOCK_REF_PATTERN}]


# --- command line ---------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """Write the committed schema files, or with ``--check`` report whether they are current."""
    parser = argparse.ArgumentParser(
        prog="python -m pytest_omk.models.schema_export", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--check", action="store_true", help="fail if a committed copy is out of date")
    parser.add_argument(
        "--root",
        type=Path,
        default=Path(__file__).resolve().parents[2],
        help="repository root holding schemas/ (default: the checkout this package is in)",
    )
    args = parser.parse_args(argv)
    stale = []
    for file, text in generated(args.root):
        current = file.read_text(encoding="utf-8") if file.is_file() else None
        if current == text:
            continue
        if args.check:
            stale.append(file)
        else:
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_text(text, encoding="utf-8")
            print(f"wrote {file}")
    if stale:
        for file in stale:
            print(f"out of date: {file} (run python -m pytest_omk.models.schema_export)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
