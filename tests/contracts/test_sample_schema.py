"""The published sample-file JSON Schema is current, and it agrees with the loader.

Agreement means: every valid document (upstream v2 files, ``tests/data/valid``) passes both; every
document of the invalid corpus fails both, except those marked ``cross_field`` in its manifest (rules
JSON Schema cannot express), which the schema accepts and only the loader rejects; ``stage: parse``
documents never become JSON data. A differential property test checks the same split on random
mutations of valid documents.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema.exceptions import ValidationError

from pytest_omk.errors import SampleFileError
from pytest_omk.loading import load_file
from pytest_omk.loading.load import is_yaml_path
from pytest_omk.loading.parse import parse_text
from pytest_omk.loading.validate import validate_document
from pytest_omk.models import ASSERTION_CLASSES
from pytest_omk.models.schema_export import RELATIVE_PATH, SCHEMA_ID, build_schema, main, render, schema_files
from tests.loader_inputs import FORMAT_KEYS, VALID_JSON_SEEDS, containers, node_at

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
INVALID_CASES: list[dict[str, Any]] = yaml.safe_load(
    (DATA / "invalid" / "cases.yaml").read_text(encoding="utf-8")
)["cases"]
VALID_FILES = sorted((DATA / "valid").iterdir())

# What the loader says when a rule JSON Schema cannot express is broken.
CROSS_FIELD_REASONS = re.compile(
    r"rubric weights must sum to 1|references missing mock|duplicate sample_id|invalid regex|"
    r"invalid JSON Schema|unknown JSON Schema dialect|could never pass|\"\$schema\" must be a string|nesting reaches|"
    r"needs a non-blank \"reference\"|look-behind|YAML 1\.1|read as a date"
)


@pytest.fixture(scope="module")
def validator() -> jsonschema.protocols.Validator:
    schema = json.loads((REPO / RELATIVE_PATH).read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def parsed(path: Path) -> Any:
    return parse_text(path.read_bytes(), path=str(path), yaml_format=is_yaml_path(path))


# --- the committed files ----------------------------------------------------------------------------


def test_committed_schema_matches_the_models() -> None:
    expected = render(build_schema())
    for file in schema_files(REPO):
        assert file.is_file(), f"{file} is missing: run python -m pytest_omk.models.schema_export"
        assert file.read_text(encoding="utf-8") == expected, (
            f"{file} is stale: run python -m pytest_omk.models.schema_export"
        )
    assert main(["--check", "--root", str(REPO)]) == 0


def test_check_mode_reports_a_stale_copy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stale = tmp_path / RELATIVE_PATH
    stale.parent.mkdir(parents=True)
    stale.write_text("{}\n", encoding="utf-8")
    assert main(["--check", "--root", str(tmp_path)]) == 1
    assert "out of date" in capsys.readouterr().err


def test_schema_header_and_comment() -> None:
    schema = build_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == SCHEMA_ID and schema["$id"].endswith(RELATIVE_PATH.as_posix())
    assert schema["title"] and schema["description"]
    for rule in ("sum to 1", "mock_hit", "sample_id", "regex", "json_schema", "faithfulness", "16 levels"):
        assert rule in schema["$comment"]
    text = render(schema)
    assert '"discriminator"' not in text and '"null"' not in text
    assert not re.search(r'"(ge|le|gt|lt)":', text)


def test_every_assertion_type_and_field_is_described() -> None:
    defs = build_schema()["$defs"]
    async_types = {name for name, cls in ASSERTION_CLASSES.items() if cls.is_async}
    sync_refs = {ref["$ref"].rsplit("/", 1)[1] for ref in defs["SyncAssertion"]["oneOf"]}
    all_refs = {ref["$ref"].rsplit("/", 1)[1] for ref in defs["Assertion"]["oneOf"]}
    assert all_refs == {cls.__name__ for cls in ASSERTION_CLASSES.values()}
    assert all_refs - sync_refs == {ASSERTION_CLASSES[name].__name__ for name in async_types}
    for name, definition in defs.items():
        assert definition.get("description"), name
        for key, prop in definition.get("properties", {}).items():
            if key != "type":
                assert prop.get("description"), f"{name}.{key} has no description"


# --- schema and loader agree ------------------------------------------------------------------------


@pytest.mark.parametrize("path", VALID_FILES, ids=lambda p: p.name)
def test_valid_corpus_passes_both(validator: jsonschema.protocols.Validator, path: Path) -> None:
    load_file(path)
    data = parsed(path)
    errors = [e.message for e in validator.iter_errors(data)]
    assert not errors
    assert DIFFERENTIAL_VALIDATOR.is_valid(data)  # the property test's validator agrees


def test_upstream_files_split_the_same_way(
    validator: jsonschema.protocols.Validator, upstream_samples: Path
) -> None:
    accepted_by_loader: set[str] = set()
    accepted_by_schema: set[str] = set()
    for path in sorted(upstream_samples.rglob("*")):
        if not path.is_file() or path.suffix not in (".json", ".yaml", ".yml"):
            continue
        name = path.relative_to(upstream_samples).as_posix()
        try:
            load_file(path)
            accepted_by_loader.add(name)
        except SampleFileError:
            pass
        if validator.is_valid(parsed(path)):
            accepted_by_schema.add(name)
    assert accepted_by_schema == accepted_by_loader
    assert len(accepted_by_loader) == 12  # the V2 rows of omk-semantics.md §15


@pytest.mark.parametrize("case", INVALID_CASES, ids=[c["file"] for c in INVALID_CASES])
def test_invalid_corpus_split(validator: jsonschema.protocols.Validator, case: dict[str, Any]) -> None:
    path = DATA / "invalid" / case["file"]
    with pytest.raises(SampleFileError):
        load_file(path)
    if case.get("stage") == "parse":
        with pytest.raises(SampleFileError):
            parsed(path)
        return
    data = parsed(path)
    if case.get("cross_field"):
        errors = [f"{e.json_path}: {e.message}" for e in validator.iter_errors(data)]
        assert not errors, f"marked cross_field, yet the schema rejects it: {errors}"
    else:
        assert not validator.is_valid(data), f"{case['file']} ({case['rule']}) passes the JSON Schema"
    # The property test's validator (memoized) gives the stock validator's verdict.
    assert DIFFERENTIAL_VALIDATOR.is_valid(data) is bool(case.get("cross_field"))


def test_cross_field_cases_break_only_the_rules_named_in_the_comment() -> None:
    cross = [c for c in INVALID_CASES if c.get("cross_field")]
    assert len(cross) >= 10
    for case in cross:
        with pytest.raises(SampleFileError) as info:
            load_file(DATA / "invalid" / case["file"])
        assert CROSS_FIELD_REASONS.search(info.value.reason), info.value.message


# --- differential property test ---------------------------------------------------------------------

SEEDS = VALID_JSON_SEEDS
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**60), max_value=2**60),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(
        [
            0,
            -0.0,
            0.5,
            1,
            1.5,
            5,
            6,
            16,
            2**53,
            "",
            " ",
            "\ufeff",
            "x",
            "Read:1",
            "Read:9",
            "a:",
            "gi",
            "ii",
            "any",
            "some",
            "easy",
            "human",
            "workflow",
            "contains",
            "custom",
            "assert-set",
            "(",
            "[a-z]",
        ]
    ),
    st.text(max_size=6),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
KEYS = st.sampled_from(sorted({*FORMAT_KEYS, "cwd", "targetKind", "ref", "notes", "url", "url_glob"}))


@st.composite
def edited_documents(draw: st.DrawFn) -> Any:
    document = copy.deepcopy(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        target = node_at(document, draw(st.sampled_from(containers(document))))
        if isinstance(target, dict):
            key = draw(st.sampled_from(sorted(target)) | KEYS) if target else draw(KEYS)
            if draw(st.booleans()) and key in target:
                del target[key]
            else:
                target[key] = draw(VALUES)
        elif target and draw(st.booleans()):
            del target[draw(st.integers(min_value=0, max_value=len(target) - 1))]
        else:
            target.append(draw(VALUES))
    return document


STOCK_VALIDATOR = jsonschema.Draft202012Validator
_STOCK_REF = STOCK_VALIDATOR.VALIDATORS["$ref"]


def memoized_validator(schema: dict[str, Any]) -> jsonschema.protocols.Validator:
    """The stock 2020-12 validator, but each ``$ref`` verdict is remembered per instance.

    Mutated documents share nearly all their samples and assertions with their seed and with
    earlier examples, and the stock validator spent ~35 ms re-checking those (every assertion
    against each branch of the ``oneOf`` of assertion types). Sound here because a ``$ref``'s
    verdict depends only on the reference and the instance: every reference is ``#/$defs/...``
    under the one root ``$id``, and nothing reads annotations across it (no ``unevaluated*``, no
    ``$dynamicRef``). The key (canonical JSON) tells apart what JSON tells apart. Only the
    verdict is kept: error messages come from the stock validator.
    """
    text = json.dumps(schema)
    assert text.count('"$id":') == 1 and set(re.findall(r'"\$ref": "(#/\$defs/)?', text)) == {"#/$defs/"}
    assert not re.search(r'"(\$\w*[aA]nchor|\$dynamicRef|\$recursiveRef|unevaluated\w+)":', text)
    verdicts: dict[tuple[str, str], bool] = {}

    def ref(validator: Any, ref: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
        key = (ref, json.dumps(instance, sort_keys=True))
        passed = verdicts.get(key)
        if passed is None:
            passed = verdicts[key] = next(_STOCK_REF(validator, ref, instance, schema), None) is None
        if not passed:
            yield ValidationError(f"{instance!r} is not valid under {ref}")

    cls = jsonschema.validators.extend(STOCK_VALIDATOR, {"$ref": ref})  # type: ignore[no-untyped-call]
    validator: jsonschema.protocols.Validator = cls(schema)
    return validator


DIFFERENTIAL_VALIDATOR = memoized_validator(build_schema())
EXPLAINING_VALIDATOR = STOCK_VALIDATOR(build_schema())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=edited_documents())
def test_schema_and_loader_agree_on_edited_documents(document: Any) -> None:
    # Through JSON text, as a real file would be read.
    schema_validator = DIFFERENTIAL_VALIDATOR
    try:
        data = parse_text(json.dumps(document).encode(), path="edited.json", yaml_format=False)
    except SampleFileError:
        return  # too deep to be a document at all; the schema never sees it
    schema_ok = schema_validator.is_valid(data)
    try:
        validate_document(data, path="edited.json", text=None)
    except SampleFileError as exc:
        if schema_ok:
            assert CROSS_FIELD_REASONS.search(exc.reason), f"schema accepts, loader says: {exc.message}"
        return
    assert schema_ok, [e.message for e in EXPLAINING_VALIDATOR.iter_errors(data)][:3]
