"""Invalid input is never a traceback: YAML text fuzzing and a corpus of malformed encodings.

Property: whatever bytes a sample file holds, ``parse_text`` + ``validate_document`` (and
``load_file``) either return a sample set or raise :class:`SampleFileError` naming the file, in
bounded time. The YAML inputs are valid documents, mutated, rendered by ``yaml.safe_dump`` in
random styles and then edited as text (lines dropped, duplicated, re-indented, swapped, cut, YAML
syntax spliced in), so most reach deep into the parser rather than failing on the first byte.

The corpus covers encodings and sizes: byte-order marks, UTF-16, invalid UTF-8, a 5 MB line,
10,000 levels of nesting and a 50 MB file; each also goes through a real pytest run, where an
invalid file is a collection error naming it (exit code 2, no traceback).
"""

from __future__ import annotations

import copy
import json
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from pytest_omk.errors import SampleFileError
from pytest_omk.loading import load_file
from pytest_omk.loading.parse import MAX_FILE_BYTES, parse_text
from pytest_omk.loading.validate import validate_document
from pytest_omk.models import SampleSet
from tests.budget import loader_budget
from tests.loader_inputs import VALID_DIR, containers, node_at, time_limit
from tests.support import OmkRun

PER_INPUT_SECONDS = 5
"""The floor of the per-input time limit; a loaded machine scales it (``tests/budget.py``)."""
SCHEMA = "omk.eval-sample-set/v2"


def _plain(data: Any) -> Any:
    """JSON types only (the loader's YAML string subclasses are not representable by safe_dump)."""
    return json.loads(json.dumps(data))


def _seed(path: Path) -> Any:
    return _plain(parse_text(path.read_bytes(), path=str(path), yaml_format=path.suffix != ".json"))


SEEDS: list[Any] = [_seed(p) for p in sorted(VALID_DIR.iterdir()) if p.suffix in (".json", ".yaml")]

FUZZ = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


# --- the check ------------------------------------------------------------------------------------


def check_bytes(raw: bytes, *, name: str, yaml_format: bool) -> SampleSet | SampleFileError:
    """Parse and validate ``raw``; anything but a SampleSet or a SampleFileError fails the test."""
    with time_limit(loader_budget(PER_INPUT_SECONDS)):
        try:
            data = parse_text(raw, path=name, yaml_format=yaml_format)
            text = raw.decode("utf-8") if yaml_format else None
            return validate_document(data, path=name, text=text)
        except SampleFileError as exc:
            assert exc.message.startswith(name), exc.message
            assert exc.reason.strip(), "an error without a reason"
            assert "Traceback" not in exc.message
            return exc


def check_file(path: Path) -> Any:
    """``load_file`` under a time limit: a bundle, or the SampleFileError (anything else fails)."""
    with time_limit(loader_budget(PER_INPUT_SECONDS)):
        try:
            return load_file(path)
        except SampleFileError as exc:
            assert exc.message.startswith(str(path)), exc.message
            return exc


# --- YAML documents: mutated, dumped in random styles, then edited as text ------------------------

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**64), max_value=2**64),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=16),
    st.sampled_from(
        ["yes", "No", "on", "2026-01-01", "0o17", "0x1F", "1e3", ".inf", "~", "null", "<<", "*a", "&a"]
    ),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
FIELD_NAMES = st.sampled_from(
    [
        "sample_id",
        "prompt",
        "context",
        "assertions",
        "rubric",
        "type",
        "value",
        "values",
        "pattern",
        "weight",
        "criterion",
        "mocks",
        "requires",
        "schemaVersion",
        "samples",
        "not",
        "children",
        "cwd",
    ]
) | st.text(max_size=8)


@st.composite
def mutated_data(draw: st.DrawFn) -> Any:
    """A valid seed with zero to three structural edits of its data."""
    document = copy.deepcopy(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        target = node_at(document, draw(st.sampled_from(containers(document))))
        action = draw(st.sampled_from(["drop", "add", "replace", "wrap"]))
        if isinstance(target, dict) and target:
            key = draw(st.sampled_from(sorted(target, key=str)))
            if action == "drop":
                del target[key]
            elif action == "add":
                target[draw(FIELD_NAMES)] = draw(VALUES)
            elif action == "replace":
                target[key] = draw(VALUES)
            else:
                target[key] = [target[key]] if draw(st.booleans()) else {"k": target[key]}
        elif isinstance(target, list):
            if action == "drop" and target:
                target.pop(draw(st.integers(min_value=0, max_value=len(target) - 1)))
            elif action == "replace" and target:
                target[draw(st.integers(min_value=0, max_value=len(target) - 1))] = draw(VALUES)
            else:
                target.append(draw(VALUES))
    return document


@st.composite
def dumped_yaml(draw: st.DrawFn, data: Any) -> str:
    """``data`` as YAML text in one of the styles safe_dump can produce."""
    return yaml.safe_dump(
        data,
        default_flow_style=draw(st.sampled_from([False, True, None])),
        indent=draw(st.integers(min_value=2, max_value=6)),
        width=draw(st.integers(min_value=20, max_value=200)),
        allow_unicode=draw(st.booleans()),
        explicit_start=draw(st.booleans()),
        explicit_end=draw(st.booleans()),
        sort_keys=draw(st.booleans()),
        canonical=draw(st.sampled_from([False, False, False, True])),
    )


YAML_SPLICES = st.sampled_from(
    [
        ": ",
        ":",
        "- ",
        "-",
        "? ",
        "&a ",
        "*a",
        "*missing",
        "<<: *a\n",
        "[",
        "]",
        "{",
        "}",
        ",",
        "'",
        '"',
        "|",
        ">-",
        "#",
        "\t",
        "  ",
        "\n",
        "\n  ",
        "\n- ",
        "!!str ",
        "!!binary ",
        "!!python/object:os.system ",
        "!custom ",
        "%YAML 1.1\n",
        "---\n",
        "...\n",
        "\ufeff",
        "\x00",
        "\x85",
        "\u2028",
        "\U0001f600",
        "\\",
        "@",
        "`",
        "yes",
        "2026-01-01",
        "0x",
        "9" * 400,
        "&b [*b]",
        "schemaVersion: omk.eval-sample-set/v2\n",
    ]
)


def _edit(text: str, data: st.DataObject) -> str:
    """One structural text edit of ``text``."""
    lines = text.split("\n")
    action = data.draw(
        st.sampled_from(["drop", "duplicate", "indent", "dedent", "swap", "cut", "splice", "tab"])
    )
    index = data.draw(st.integers(min_value=0, max_value=max(len(lines) - 1, 0)))
    if action == "drop" and len(lines) > 1:
        del lines[index]
    elif action == "duplicate":
        lines.insert(index, lines[index])
    elif action == "indent":
        lines[index] = " " * data.draw(st.integers(min_value=1, max_value=8)) + lines[index]
    elif action == "dedent":
        lines[index] = lines[index].lstrip(" ")
    elif action == "swap":
        other = data.draw(st.integers(min_value=0, max_value=len(lines) - 1))
        lines[index], lines[other] = lines[other], lines[index]
    elif action == "tab":
        lines[index] = "\t" + lines[index]
    elif action == "cut":
        return text[: data.draw(st.integers(min_value=0, max_value=len(text)))]
    else:
        at = data.draw(st.integers(min_value=0, max_value=len(text)))
        return text[:at] + data.draw(YAML_SPLICES | st.text(max_size=3)) + text[at:]
    return "\n".join(lines)


@FUZZ
@given(document=mutated_data(), data=st.data())
def test_edited_yaml_text_loads_or_is_a_sample_file_error(
    tmp_path_factory: pytest.TempPathFactory, document: Any, data: st.DataObject
) -> None:
    text = data.draw(dumped_yaml(document))
    for _ in range(data.draw(st.integers(min_value=0, max_value=4))):
        text = _edit(text, data)
    raw = text.encode("utf-8", "surrogatepass")
    outcome = check_bytes(raw, name="fuzz.yaml", yaml_format=True)
    # --hypothesis-show-statistics shows how the inputs split between valid and each kind of error.
    event("valid" if isinstance(outcome, SampleSet) else outcome.reason.split(":")[0][:40])
    # The file path gives the same verdict as the in-memory one.
    path = tmp_path_factory.getbasetemp() / "fuzz-edited.yaml"
    path.write_bytes(raw)
    from_file = check_file(path)
    assert isinstance(from_file, SampleFileError) == isinstance(outcome, SampleFileError)
    if isinstance(outcome, SampleFileError):
        assert from_file.message == outcome.message.replace("fuzz.yaml", str(path), 1)


@FUZZ
@given(document=st.sampled_from(SEEDS), data=st.data())
def test_valid_documents_survive_every_dump_style(document: Any, data: st.DataObject) -> None:
    # Without edits, every rendering of a valid document is valid: the fuzzing above starts from
    # documents that load, so its errors come from the edits, not from the dumper.
    text = data.draw(dumped_yaml(document))
    outcome = check_bytes(text.encode("utf-8"), name="styled.yaml", yaml_format=True)
    assert isinstance(outcome, SampleSet), outcome.message
    assert outcome.samples


@settings(FUZZ, max_examples=100)
@given(
    document=mutated_data(),
    prefix=st.sampled_from([b"\xff\xfe", b"\xfe\xff", b"\xef\xbb\xbf", b""]),
    encoding=st.sampled_from(["utf-8", "utf-16-le", "utf-16-be", "latin-1", "cp1252"]),
    yaml_format=st.booleans(),
)
def test_any_encoding_of_any_document_is_handled(
    document: Any, prefix: bytes, encoding: str, yaml_format: bool
) -> None:
    text = (
        yaml.safe_dump(document, allow_unicode=True)
        if yaml_format
        else json.dumps(document, ensure_ascii=False)
    )
    try:
        raw = prefix + text.encode(encoding)
    except UnicodeEncodeError:
        assume(False)
    check_bytes(raw, name="encoded.yaml" if yaml_format else "encoded.json", yaml_format=yaml_format)


# --- the corpus of malformed encodings and sizes --------------------------------------------------

VALID_JSON = json.dumps({"schemaVersion": SCHEMA, "samples": [{"sample_id": "s1", "prompt": "hi"}]})
VALID_YAML = f"schemaVersion: {SCHEMA}\nsamples:\n  - sample_id: s1\n    prompt: hi\n"
FIVE_MB = 5 * 1024 * 1024


@dataclass(frozen=True)
class Case:
    name: str
    suffix: str
    make: Callable[[], bytes]
    error: str | None
    """A phrase of the expected error, or ``None`` when the file is valid."""


CORPUS = [
    Case(
        "json-utf8-bom",
        ".json",
        lambda: b"\xef\xbb\xbf" + VALID_JSON.encode(),
        "byte-order mark, which JSON does not allow",
    ),
    Case("yaml-utf8-bom", ".yaml", lambda: b"\xef\xbb\xbf" + VALID_YAML.encode(), None),
    Case(
        "json-utf16-le",
        ".json",
        lambda: b"\xff\xfe" + VALID_JSON.encode("utf-16-le"),
        "UTF-16 encoded; save it as UTF-8",
    ),
    Case(
        "json-utf16-be",
        ".json",
        lambda: b"\xfe\xff" + VALID_JSON.encode("utf-16-be"),
        "UTF-16 encoded; save it as UTF-8",
    ),
    Case(
        "yaml-utf16-le",
        ".yaml",
        lambda: b"\xff\xfe" + VALID_YAML.encode("utf-16-le"),
        "UTF-16 encoded; save it as UTF-8",
    ),
    Case(
        "yaml-utf16-be",
        ".yaml",
        lambda: b"\xfe\xff" + VALID_YAML.encode("utf-16-be"),
        "UTF-16 encoded; save it as UTF-8",
    ),
    Case(
        "json-invalid-utf8",
        ".json",
        lambda: VALID_JSON.replace("hi", "h\udcffi").encode("utf-8", "surrogateescape"),
        "not valid UTF-8 (byte offset",
    ),
    Case(
        "yaml-invalid-utf8",
        ".yaml",
        lambda: VALID_YAML.encode() + b"    context: caf\xe9 \xc3\x28\n",
        "not valid UTF-8 (byte offset",
    ),
    Case(
        "json-5mb-line", ".json", lambda: VALID_JSON.replace('"hi"', json.dumps("x" * FIVE_MB)).encode(), None
    ),
    Case("yaml-5mb-line", ".yaml", lambda: VALID_YAML.replace("hi", "y" * FIVE_MB).encode(), None),
    Case(
        "json-5mb-line-unterminated",
        ".json",
        lambda: VALID_JSON.replace('"hi"', '"' + "x" * FIVE_MB).encode(),
        "invalid JSON",
    ),
    Case("json-deep-arrays", ".json", lambda: ("[" * 10_000 + "]" * 10_000).encode(), "nests deeper than"),
    Case(
        "json-deep-objects",
        ".json",
        lambda: ('{"a":' * 10_000 + "1" + "}" * 10_000).encode(),
        "nests deeper than",
    ),
    Case(
        "json-deep-in-sample",
        ".json",
        lambda: VALID_JSON.replace('"hi"', '"hi", "context": ' + "[" * 10_000 + "]" * 10_000).encode(),
        "nests deeper than",
    ),
    Case(
        "yaml-deep-flow",
        ".yaml",
        lambda: ("[" * 10_000 + "]" * 10_000).encode(),
        "nests deeper than 64 levels",
    ),
    Case(
        "yaml-deep-flow-mappings",
        ".yaml",
        lambda: ("{a: " * 10_000 + "1" + "}" * 10_000).encode(),
        "nests deeper than 64 levels",
    ),
    Case(
        "yaml-deep-block-sequences",
        ".yaml",
        lambda: ("- " * 10_000 + "x\n").encode(),
        "nests deeper than 64 levels",
    ),
    Case(
        "yaml-deep-in-sample",
        ".yaml",
        lambda: (VALID_YAML + "    context: " + "[" * 10_000 + "]" * 10_000 + "\n").encode(),
        "nests deeper than 64 levels",
    ),
]


def _write(directory: Path, case: Case) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"eval-samples{case.suffix}"
    path.write_bytes(case.make())
    return path


@pytest.mark.parametrize("case", CORPUS, ids=[c.name for c in CORPUS])
def test_corpus_file_loads_or_fails_with_a_clear_message(tmp_path: Path, case: Case) -> None:
    path = _write(tmp_path, case)
    started = time.perf_counter()
    outcome = check_file(path)
    assert time.perf_counter() - started < loader_budget(PER_INPUT_SECONDS)
    if case.error is None:
        assert not isinstance(outcome, SampleFileError), outcome.message
        assert [s.sample.sample_id for s in outcome.samples] == ["s1"]
    else:
        assert isinstance(outcome, SampleFileError), f"{case.name} was accepted"
        assert case.error in outcome.message, outcome.message
        assert len(outcome.message) < 500, "an error message should be one readable line"


@pytest.mark.parametrize("case", CORPUS, ids=[c.name for c in CORPUS])
def test_corpus_file_in_a_pytest_run(pytester: pytest.Pytester, omk_run: OmkRun, case: Case) -> None:
    path = _write(pytester.path / case.name, case)
    result = omk_run(case.name)
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in output
    if case.error is None:
        # No executor configured: the sample is collected and skipped with the hint.
        result.assert_outcomes(skipped=1)
        assert result.ret == pytest.ExitCode.OK
        return
    assert result.ret == pytest.ExitCode.INTERRUPTED  # 2: collection errors stop the run
    relative = path.relative_to(pytester.path).as_posix()
    result.stdout.fnmatch_lines([f"*ERROR collecting {relative}*", f"{relative}*{case.error}*"])
    assert "during collection" in output


# --- a 50 MB file ---------------------------------------------------------------------------------

FIFTY_MB = 50 * 1024 * 1024


def _fifty_mb(path: Path) -> Path:
    # Written in 1 MB pieces: a valid-looking JSON start, then spaces (the content never matters).
    with path.open("wb") as handle:
        handle.write(VALID_JSON[:-1].encode())
        handle.write(b', "padding": "')
        chunk = b"x" * (1024 * 1024)
        while handle.tell() < FIFTY_MB:
            handle.write(chunk)
        handle.write(b'"}')
    return path


@pytest.fixture(scope="module")
def fifty_mb_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("fifty-mb")
    _fifty_mb(directory / "eval-samples.json")
    return directory


def test_a_50_mb_file_is_rejected_by_size_without_being_read(fifty_mb_dir: Path) -> None:
    path = fifty_mb_dir / "eval-samples.json"
    size = path.stat().st_size
    assert size > FIFTY_MB > MAX_FILE_BYTES
    # The time budget's baseline (loading sample files, measured once per process) must not be
    # measured inside the traced window: whether this test is the first to ask depends on order.
    loader_budget(PER_INPUT_SECONDS)
    tracemalloc.start()
    try:
        outcome = check_file(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert isinstance(outcome, SampleFileError)
    # The message gives the file's real size and the limit.
    assert f"file is {size:,} bytes; sample files may be at most {MAX_FILE_BYTES:,} bytes" in outcome.message
    # Rejected from its size alone: no read of the (tens of megabytes of) content, and fast.
    assert peak < 4 * 1024 * 1024, f"{peak:,} bytes allocated while rejecting a file by its size"


def test_a_50_mb_file_in_a_pytest_run(pytester: pytest.Pytester, omk_run: OmkRun, fifty_mb_dir: Path) -> None:
    target = pytester.path / "big"
    target.mkdir()
    (target / "eval-samples.json").symlink_to(fifty_mb_dir / "eval-samples.json")
    result = omk_run("big")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        ["*ERROR collecting big/eval-samples.json*", "big/eval-samples.json: file is *bytes*"]
    )
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
