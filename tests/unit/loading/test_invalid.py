"""Every document of the invalid corpus is a located ``SampleFileError``, never anything else.

The corpus lives in ``tests/data/invalid``: one file per broken rule, described in ``cases.yaml``
(expected JSON path, YAML line and a reason substring). pytest does not recurse into ``data``.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_omk.errors import SampleFileError
from pytest_omk.loading import load_file
from tests.budget import loader_budget

INVALID_DIR = Path(__file__).resolve().parents[2] / "data" / "invalid"
CASES: list[dict[str, Any]] = yaml.safe_load((INVALID_DIR / "cases.yaml").read_text(encoding="utf-8"))[
    "cases"
]
_NAME = re.compile(r"^(\d{3})-[a-z0-9]+(?:-[a-z0-9]+)*\.(json|yaml)$")

# A few file-name fragments per rule family that the corpus must keep covering.
REQUIRED_RULES = (
    "root-unknown-key",
    "sample-unknown-key",
    "assertion-unknown-key",
    "mock-unknown-key",
    "mock-match-unknown-key",
    "rubric-unknown-key",
    "environment-unknown-key",
    "covers-unknown-key",
    "requires-unknown-key",
    "assert-set-child-unknown-key",
    "schemaversion-missing",
    "schemaversion-v1",
    "legacy-array",
    "samples-empty",
    "whitespace",
    "bom-only",
    "rubric-empty",
    "rubric-blank-name",
    "rubric-blank-criterion",
    "rubric-weight-zero",
    "rubric-weight-negative",
    "rubric-weight-over-one",
    "rubric-weights-sum",
    "rubric-weight-string",
    "assertion-type-unknown",
    "value-missing",
    "values-missing",
    "pattern-missing",
    "json-schema-missing",
    "reference-missing",
    "fn-missing",
    "weight-zero",
    "weight-negative",
    "min-length-negative",
    "max-length-string",
    "values-empty",
    "values-blank",
    "regex-invalid",
    "regex-flags-unknown",
    "regex-flags-duplicate",
    "json-schema-invalid",
    "rouge-threshold",
    "bleu-threshold",
    "llm-threshold-below",
    "llm-threshold-above",
    "rouge-n-zero",
    "rouge-n-fraction",
    "tool-needle-no-colon",
    "tool-needle-colon-first",
    "tool-needle-colon-last",
    "mock-hit-bad-format",
    "mock-hit-missing-mock",
    "assert-set-async-semantic-similarity",
    "assert-set-async-custom",
    "assert-set-async-faithfulness",
    "assert-set-async-answer-relevancy",
    "assert-set-async-context-recall",
    "assert-set-depth-16",
    "assert-set-children-empty",
    "assert-set-mode",
    "mocksstrict-without-mocks",
    "mocks-empty",
    "mock-no-return",
    "mock-two-returns",
    "url-and-glob",
    "faithfulness-without-context",
    "context-recall-blank",
    "duplicate-sample-id",
    "difficulty-enum",
    "provenance-enum",
    "targetkind-enum",
    "yaml-duplicate-key",
    "yaml-11-bool",
    "yaml-alias-bomb",
    "yaml-syntax",
    "json-syntax",
    "json-nan",
    "json-infinity",
    "json-bom",
    "utf16",
    "invalid-utf8",
    "deep-nesting",
)


def _load_error(case: dict[str, Any]) -> SampleFileError:
    try:
        load_file(INVALID_DIR / case["file"], display=case["file"])
    except SampleFileError as exc:
        return exc
    except Exception as exc:  # the point of the test: nothing but SampleFileError may escape
        pytest.fail(f"{case['file']}: {type(exc).__name__} escaped the loader: {exc}")
    pytest.fail(f"{case['file']} was accepted; it breaks: {case['rule']}")


@pytest.mark.parametrize("case", CASES, ids=[c["file"] for c in CASES])
def test_invalid_document_is_a_located_error(case: dict[str, Any]) -> None:
    error = _load_error(case)
    assert error.path == case["file"]
    assert error.where == case["where"], error.message
    if case["file"].endswith(".yaml"):
        assert error.line == case["line"], error.message
    assert case["reason"] in error.reason, error.message
    # The one line a user sees names the file, the JSON path, the YAML line and the reason.
    message = error.message
    assert message.startswith(case["file"])
    if case["where"]:
        assert f"{case['file']}: {case['where']}" in message
    if error.line is not None:
        column = "" if error.column is None else f", column {error.column}"
        assert f"(line {error.line}{column})" in message
    assert message.endswith(error.reason)
    assert str(error) == message


def test_manifest_lists_every_file_once_with_well_formed_names() -> None:
    listed = [c["file"] for c in CASES]
    on_disk = sorted(p.name for p in INVALID_DIR.iterdir() if p.name != "cases.yaml")
    assert sorted(listed) == on_disk
    assert len(set(listed)) == len(listed)
    matches = [_NAME.match(name) for name in listed]
    assert all(matches), [name for name, m in zip(listed, matches, strict=True) if not m]
    numbers = [int(m.group(1)) for m in matches if m]
    assert len(set(numbers)) == len(numbers)
    # Canonical names would be auto-collected by the plugin if pytest ever walked this folder.
    assert not any(name.startswith("eval-samples.") for name in listed)
    assert len(CASES) >= 70


def test_manifest_entries_are_complete() -> None:
    for case in CASES:
        assert set(case) <= {"file", "rule", "where", "line", "reason", "stage", "cross_field", "note"}, case
        assert case["rule"] and case["reason"], case
        assert case.get("stage", "validate") in ("parse", "validate"), case
        if case.get("stage") == "parse":
            # Parse errors have no document path, except those found while building the data
            # from a parsed YAML tree (a duplicate key), which can name the key's path.
            assert not case.get("cross_field"), case
            assert case["where"] is None or "duplicate" in case["reason"], case
        if case["file"].endswith(".yaml"):
            assert "line" in case, case


@pytest.mark.parametrize("fragment", REQUIRED_RULES)
def test_corpus_covers_rule(fragment: str) -> None:
    assert any(fragment in c["file"] for c in CASES), f"no invalid document for {fragment!r}"


def test_alias_bomb_fails_fast() -> None:
    case = next(c for c in CASES if "alias-bomb" in c["file"])
    limit = loader_budget(2.0)
    started = time.perf_counter()
    _load_error(case)
    assert time.perf_counter() - started < limit


def test_error_reports_the_deepest_problem_and_lists_others(tmp_path: Path) -> None:
    path = tmp_path / "two.json"
    path.write_text(
        '{"schemaVersion": "omk.eval-sample-set/v2", "samples": ['
        '{"sample_id": "a", "prompt": "p", "assertions": [{"type": "contains", "value": "x", "weight": 0}]},'
        '{"sample_id": "b", "prompt": "p", "extra": 1}]}',
        encoding="utf-8",
    )
    with pytest.raises(SampleFileError) as info:
        load_file(path)
    assert info.value.where == "samples[0].assertions[0].weight"
    assert "also samples[1].extra: unknown key" in info.value.reason


def test_unreadable_file_is_a_sample_file_error(tmp_path: Path) -> None:
    with pytest.raises(SampleFileError, match="cannot read file"):
        load_file(tmp_path / "missing.json")
    with pytest.raises(SampleFileError, match="cannot read file"):
        load_file(tmp_path)


def test_oversized_file_is_refused_without_parsing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pytest_omk.loading.load as load_module
    import pytest_omk.loading.parse as parse_module

    monkeypatch.setattr(parse_module, "MAX_FILE_BYTES", 100)
    monkeypatch.setattr(load_module, "MAX_FILE_BYTES", 100)
    path = tmp_path / "big.json"
    path.write_text(
        '{"schemaVersion": "omk.eval-sample-set/v2", "samples": []}' + " " * 200, encoding="utf-8"
    )
    with pytest.raises(SampleFileError, match="at most 100 bytes"):
        load_file(path)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("samples: [{sample_id: a, prompt: p}]\nschemaVersion: !!binary b21r\n", "unsupported schemaVersion"),
        ("? [a, b]\n: c\n", "a mapping key must be a plain value"),
        (
            "schemaVersion: omk.eval-sample-set/v2\nsamples:\n  - sample_id: a\n    prompt: p\n    1: x\n",
            "Keys should be strings",
        ),
    ],
)
def test_odd_yaml_keys_and_tags_are_errors(tmp_path: Path, text: str, reason: str) -> None:
    path = tmp_path / "odd.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SampleFileError) as info:
        load_file(path)
    assert reason in info.value.reason


@pytest.mark.parametrize(
    ("raw", "yaml_format", "shown"),
    [
        # An unclosed quote opened at line 4, column 13 is reported there, not where the parser gave up.
        (
            b'schemaVersion: x\nsamples:\n  - sample_id: a\n    prompt: "unclosed\n  - sample_id: b\n    prompt: x\n',
            True,
            "f.yaml (line 4, column 13): invalid YAML: found unexpected end of stream (while scanning a quoted scalar "
            "that starts here; noticed at line 7, column 1)",
        ),
        (
            b"a: b: c\n",
            True,
            "f.yaml (line 1, column 5): invalid YAML: mapping values are not allowed in this context",
        ),
        (b'{"a": 1,\n  "b": }', False, "f.yaml (line 2, column 8): invalid JSON: Expecting value"),
    ],
)
def test_syntax_errors_carry_the_parsers_line_and_column(raw: bytes, yaml_format: bool, shown: str) -> None:
    from pytest_omk.loading.parse import parse_text

    with pytest.raises(SampleFileError) as caught:
        parse_text(raw, path="f.yaml", yaml_format=yaml_format)
    assert caught.value.message == shown


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        # Found by the loader fuzz test: PyYAML's bool constructor raised a bare KeyError here.
        ('a: !!bool ": false"\n', "invalid YAML: ': false' is not a valid !!bool value"),
        # PyYAML would accept the YAML 1.1 forms; js-yaml (the format's owner) refuses them.
        ("a: !!bool yes\n", "invalid YAML: 'yes' is not a valid !!bool value"),
        ("a: !!int 1_000\n", "invalid YAML: '1_000' is not a valid !!int value"),
        ("a: !!int abc\n", "invalid YAML: 'abc' is not a valid !!int value"),
        ("a: !!null nothing\n", "invalid YAML: 'nothing' is not a valid !!null value"),
        ('a: !!float "1,5"\n', "invalid YAML: '1,5' is not a valid !!float value"),
    ],
)
def test_explicitly_tagged_scalar_must_have_its_tags_form(text: str, shown: str) -> None:
    from pytest_omk.loading.parse import parse_text

    with pytest.raises(SampleFileError) as caught:
        parse_text(text.encode(), path="f.yaml", yaml_format=True)
    assert caught.value.message == f"f.yaml: a (line 1, column 4): {shown}"


def test_explicitly_tagged_scalar_in_its_form_is_typed() -> None:
    from pytest_omk.loading.parse import parse_text

    text = 'a: !!int "0x1F"\nb: !!float 1\nc: !!bool "False"\nd: !!null ""\ne: !!str 10\n'
    assert parse_text(text.encode(), path="f.yaml", yaml_format=True) == {
        "a": 31,
        "b": 1.0,
        "c": False,
        "d": None,
        "e": "10",
    }


def _nested(levels: int, leaf: str) -> str:
    """JSON text with ``leaf`` ``levels`` levels below the root, alternating objects and arrays,
    beside a wide flat part (so the walk meets many containers on its way down)."""
    text = leaf
    for level in range(levels):
        text = f"[{text}]" if level % 2 else f'{{"k": {text}}}'
    return f'{{"wide": [{", ".join(["{}"] * 50)}], "deep": {text}}}'


@pytest.mark.parametrize("leaf", ["1", '"s"', "[]", "{}", "[1]", '{"a": 1}'])
def test_nesting_is_allowed_to_exactly_64_levels_below_the_root(leaf: str) -> None:
    from pytest_omk.loading.parse import parse_text
    from pytest_omk.loading.parsed import MAX_DEPTH

    # The root object is level 0 and "deep" adds one: a leaf that is itself a non-empty container
    # adds a level of its own.
    extra = 1 + (leaf in ("[1]", '{"a": 1}'))
    allowed = _nested(MAX_DEPTH - extra, leaf)
    assert parse_text(allowed.encode(), path="f.json", yaml_format=False)["wide"] == [{}] * 50
    with pytest.raises(SampleFileError, match="nests deeper than 64 levels"):
        parse_text(_nested(MAX_DEPTH - extra + 1, leaf).encode(), path="f.json", yaml_format=False)
