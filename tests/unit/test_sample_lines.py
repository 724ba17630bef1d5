"""Each sample's line in its file, JSON and YAML, for ``reportinfo``."""

from __future__ import annotations

from pytest_omk.loading.lines import sample_lines


def test_json_lines() -> None:
    text = '{\n  "samples": [\n    {"sample_id": "a", "prompt": "x"},\n    {\n      "sample_id": "b\\u00e9"\n    }\n  ]\n}'
    assert sample_lines(text) == {"a": 2, "bé": 4}


def test_yaml_lines_plain_and_quoted() -> None:
    text = "samples:\n  - sample_id: first\n    prompt: p\n  - prompt: q\n    sample_id: 'it''s'\n  - {sample_id: \"third\", prompt: r}\n"
    assert sample_lines(text) == {"first": 1, "it's": 4, "third": 5}
