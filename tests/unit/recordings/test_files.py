"""What a readable recording must be (``recordings/files.py``): finite numbers, bounded nesting."""

from __future__ import annotations

import json

import pytest

from pytest_omk.recordings.files import FORMAT, MAX_DEPTH, RecordingFileError, parse_document


def _raw(result: str) -> bytes:
    return f'{{"format": "{FORMAT}", "key": "k", "kind": "execute", "result": {result}}}'.encode()


@pytest.mark.parametrize(
    ("number", "where"),
    [
        ("NaN", "result.costUSD"),
        ("Infinity", "result.costUSD"),
        ("-Infinity", "result.costUSD"),
        ("1e400", "result.costUSD"),
    ],
)
def test_a_number_that_is_not_finite_is_refused_where_it_is(number: str, where: str) -> None:
    with pytest.raises(RecordingFileError, match=f"not finite .{number}. at {where}"):
        parse_document("r.json", _raw(f'{{"output": "x", "costUSD": {number}}}'))


def test_a_non_finite_number_in_a_list_is_located_too() -> None:
    with pytest.raises(RecordingFileError, match=r"at result\.turns\[1\]\.durationMs"):
        parse_document("r.json", _raw('{"turns": [{"durationMs": 1}, {"durationMs": NaN}]}'))


@pytest.mark.parametrize("depth", [MAX_DEPTH, 500, 100_000])
def test_nesting_deeper_than_the_limit_is_refused(depth: int) -> None:
    with pytest.raises(RecordingFileError, match=f"nests deeper than {MAX_DEPTH} levels"):
        parse_document("r.json", _raw('{"deep": ' + "[" * depth + "]" * depth + "}"))


def test_nesting_within_the_limit_is_read() -> None:
    depth = MAX_DEPTH - 3  # the document and its result are two levels already
    document = parse_document("r.json", _raw('{"deep": ' + "[" * depth + "]" * depth + "}"))
    assert json.dumps(document.result).count("[") == depth
