"""Property tests: whatever bytes a sample file holds, loading returns a SampleSet or raises
SampleFileError, never another exception, and never hangs.

Inputs are valid documents mutated at random (keys dropped, unknown keys added, values swapped for
other JSON types, deep structures inserted, odd numbers and Unicode), plus random JSON/YAML-like text
and raw bytes.
"""

from __future__ import annotations

import copy
import json
import signal
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_omk.errors import SampleFileError
from pytest_omk.loading import SampleBundle, load_file
from tests.loader_inputs import FORMAT_KEYS, VALID_JSON_SEEDS, Hang, containers, node_at, time_limit

SEEDS = VALID_JSON_SEEDS
PER_CALL_SECONDS = 5

FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

ODD_NUMBERS = st.sampled_from(
    [
        0,
        -0.0,
        1,
        1.0,
        2.5,
        -1,
        1e308,
        -1e308,
        5e-324,
        2**53 - 1,
        2**53,
        2**53 + 1,
        2**64,
        10**30,
        0.3333333333333333,
    ]
)
ODD_TEXT = st.sampled_from(
    [
        "",
        " ",
        "\ufeff",
        "\u3000",
        "\u2028",
        "no",
        "yes",
        "Read:1",
        "Read:0",
        ":",
        "a:",
        ":a",
        "Tool:needle",
        "omk.eval-sample-set/v2",
        "assert-set",
        "contains",
        "(",
        "[^]",
        "\\",
        "\x00",
        "\U0001f600",
        "é",
        "i",
        "gg",
    ]
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    ODD_NUMBERS,
    st.text(max_size=12),
    ODD_TEXT,
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10) | ODD_TEXT, inner, max_size=4)
    ),
    max_leaves=12,
)
KEYS = st.sampled_from([*FORMAT_KEYS, "extra"]) | st.text(max_size=10)


def load_outcome(path: Path) -> SampleBundle | SampleFileError:
    """Load ``path``; any exception other than SampleFileError fails the test with the input shown."""
    with time_limit(PER_CALL_SECONDS):
        try:
            return load_file(path)
        except SampleFileError as exc:
            assert exc.message.startswith(str(path))
            return exc


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def _deep(depth: int, leaf: Any) -> Any:
    for level in range(depth):
        leaf = [leaf] if level % 2 else {"k": leaf}
    return leaf


@st.composite
def mutated_documents(draw: st.DrawFn) -> Any:
    """A valid seed document with one to four random edits."""
    document = copy.deepcopy(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        paths = containers(document)
        if not paths:
            break
        target = node_at(document, draw(st.sampled_from(paths)))
        action = draw(st.sampled_from(["drop", "add", "swap", "deep", "odd"]))
        if isinstance(target, dict):
            keys = list(target)
            if action == "drop" and keys:
                del target[draw(st.sampled_from(keys))]
            elif action == "add":
                target[draw(KEYS)] = draw(JSON_VALUES)
            elif action in ("swap", "odd") and keys:
                target[draw(st.sampled_from(keys))] = draw(
                    JSON_VALUES if action == "swap" else ODD_NUMBERS | ODD_TEXT
                )
            elif action == "deep":
                target[draw(KEYS)] = _deep(draw(st.integers(min_value=1, max_value=90)), draw(SCALARS))
        elif isinstance(target, list):
            if action == "drop" and target:
                del target[draw(st.integers(min_value=0, max_value=len(target) - 1))]
            elif action == "deep":
                target.append(_deep(draw(st.integers(min_value=1, max_value=90)), draw(SCALARS)))
            elif target and action in ("swap", "odd"):
                index = draw(st.integers(min_value=0, max_value=len(target) - 1))
                target[index] = draw(JSON_VALUES if action == "swap" else ODD_NUMBERS | ODD_TEXT)
            else:
                target.append(draw(JSON_VALUES))
    if draw(st.booleans()) and isinstance(document, dict):
        # Sometimes replace the whole document with a different JSON type.
        document = draw(st.sampled_from([document, [document], document.get("samples"), None, "text", 3]))
    return document


@FUZZ
@given(document=mutated_documents())
def test_mutated_json_documents(scratch: Path, document: Any) -> None:
    path = scratch / "mutated.json"
    path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    load_outcome(path)


@FUZZ
@given(document=mutated_documents())
def test_mutated_yaml_documents(scratch: Path, document: Any) -> None:
    path = scratch / "mutated.yaml"
    path.write_text(yaml.safe_dump(document, allow_unicode=True), encoding="utf-8")
    load_outcome(path)


YAML_PIECES = st.sampled_from(
    [
        "schemaVersion: omk.eval-sample-set/v2\n",
        "samples:\n",
        "  - ",
        "sample_id: ",
        "prompt: ",
        "assertions:\n",
        "type: contains\n",
        "value: ",
        "&a ",
        "*a ",
        "<<: ",
        "[",
        "]",
        "{",
        "}",
        ": ",
        ", ",
        "- ",
        "\n",
        "  ",
        "yes",
        "no",
        "on",
        "2026-01-01",
        "2026-01-01 10:00:00",
        "!!binary ",
        "!!python/none",
        "!!str ",
        "!!int ",
        "'",
        '"',
        "# c\n",
        "|\n",
        ">-\n",
        "? ",
        "~",
        "1e3",
        "010",
        "0x1F",
        "0o7",
        ".nan",
        "-.inf",
        "1_000",
        "---\n",
        "...\n",
        "%YAML 1.2\n",
        "\t",
        "\ufeff",
        "\x85",
        "\\u0000",
        "é",
        "\U0001f600",
        "9" * 5000,
        "0x" + "f" * 5000,
    ]
)


@FUZZ
@given(pieces=st.lists(YAML_PIECES | st.text(max_size=5), max_size=40))
def test_yaml_like_text(scratch: Path, pieces: list[str]) -> None:
    path = scratch / "pieces.yaml"
    path.write_bytes("".join(pieces).encode("utf-8", "surrogatepass"))
    load_outcome(path)


JSON_PIECES = st.sampled_from(
    [
        '{"schemaVersion": "omk.eval-sample-set/v2", ',
        '"samples": ',
        "[",
        "]",
        "{",
        "}",
        ", ",
        ": ",
        '"sample_id"',
        '"prompt"',
        '"x"',
        "NaN",
        "-Infinity",
        "1e999",
        "-0",
        "1" * 30,
        "true",
        "null",
        '"\\ud800"',
        '"\\u0000"',
        "\ufeff",
        " ",
        "\n",
        "9" * 5000,
        "-" + "9" * 400,
        "0." + "0" * 400 + "1e-400",
    ]
)


@FUZZ
@given(pieces=st.lists(JSON_PIECES | st.text(max_size=5), max_size=40))
def test_json_like_text(scratch: Path, pieces: list[str]) -> None:
    path = scratch / "pieces.json"
    path.write_bytes("".join(pieces).encode("utf-8", "surrogatepass"))
    load_outcome(path)


@settings(FUZZ, max_examples=100)
@given(raw=st.binary(max_size=200), yaml_format=st.booleans())
def test_random_bytes(scratch: Path, raw: bytes, yaml_format: bool) -> None:
    path = scratch / ("bytes.yaml" if yaml_format else "bytes.json")
    path.write_bytes(raw)
    load_outcome(path)


@settings(FUZZ, max_examples=40)
@given(
    width=st.integers(min_value=1, max_value=12),
    depth=st.integers(min_value=1, max_value=12),
    where=st.sampled_from(["capability", "context", "extra"]),
)
def test_nested_aliases_load_or_fail_fast(scratch: Path, width: int, depth: int, where: str) -> None:
    # The "billion laughs" shape: each level repeats the previous anchor ``width`` times.
    lines = ["schemaVersion: omk.eval-sample-set/v2", "l0: &l0 [lol, lol]"]
    for level in range(1, depth + 1):
        lines.append(f"l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * width) + "]")
    lines += ["samples:", "  - sample_id: s1", "    prompt: hi", f"    {where}: *l{depth}"]
    path = scratch / "aliases.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    outcome = load_outcome(path)
    assert isinstance(outcome, SampleFileError)  # "l0" is an unknown root key either way


@settings(FUZZ, max_examples=10)
@given(
    count=st.integers(min_value=1, max_value=1500),
    # YAML text may not hold control characters, surrogates or non-characters (js-yaml agrees).
    prompt=st.text(
        st.characters(exclude_categories=("Cc", "Cs", "Cn", "Zs", "Zl", "Zp")), min_size=1, max_size=30
    ),
    shared_rubric=st.booleans(),
)
def test_large_valid_documents_round_trip(
    scratch: Path, count: int, prompt: str, shared_rubric: bool
) -> None:
    samples = [{"sample_id": f"s{i}", "prompt": f"{prompt} {i}"} for i in range(count)]
    json_path = scratch / "large.json"
    json_path.write_text(
        json.dumps({"schemaVersion": "omk.eval-sample-set/v2", "samples": samples}), encoding="utf-8"
    )
    # YAML with every scalar quoted (plain-scalar typing has its own tests) and, optionally, one
    # rubric anchored once and aliased by every sample.
    lines = ['"schemaVersion": "omk.eval-sample-set/v2"', '"samples":']
    for i, sample in enumerate(samples):
        # ensure_ascii=False: libyaml refuses escaped surrogate pairs ("\\ud800\\udc00") in YAML.
        lines.append(f"  - sample_id: {json.dumps(sample['sample_id'], ensure_ascii=False)}")
        lines.append(f"    prompt: {json.dumps(sample['prompt'], ensure_ascii=False)}")
        if shared_rubric:
            lines.append(
                '    rubric: &r {"r": {"criterion": "c", "weight": 1}}' if i == 0 else "    rubric: *r"
            )
    yaml_path = scratch / "large.yaml"
    yaml_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for path in (json_path, yaml_path):
        outcome = load_outcome(path)
        assert isinstance(outcome, SampleBundle), outcome
        assert [s.sample.sample_id for s in outcome.samples] == [s["sample_id"] for s in samples]
        assert outcome.samples[-1].sample.prompt == samples[-1]["prompt"]


def test_time_limit_turns_a_hang_into_an_error() -> None:
    if not hasattr(signal, "setitimer"):
        pytest.skip("no SIGALRM on this platform")
    with pytest.raises(Hang), time_limit(1):
        threading.Event().wait(3)
