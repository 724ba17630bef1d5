"""Each sample's line in its file, JSON and YAML, for ``reportinfo``."""

from __future__ import annotations

import json

from pytest_omk.loading.lines import sample_lines


def test_json_lines() -> None:
    text = '{\n  "samples": [\n    {"sample_id": "a", "prompt": "x"},\n    {\n      "sample_id": "b\\u00e9"\n    }\n  ]\n}'
    assert sample_lines(text) == {"a": 2, "bé": 4}


def test_yaml_lines_plain_and_quoted() -> None:
    text = "samples:\n  - sample_id: first\n    prompt: p\n  - prompt: q\n    sample_id: 'it''s'\n  - {sample_id: \"third\", prompt: r}\n"
    assert sample_lines(text) == {"first": 1, "it's": 4, "third": 5}


def test_every_id_of_a_dumped_file_is_found_on_its_line() -> None:
    # Plain ids (read as written) and ids that JSON escapes (read through the JSON decoder).
    ids = [
        "case-1",
        'say "hi"',
        "tab\tin",
        "back\\slash",
        "naïve",
        "emoji-\U0001f600",
        "sample_id: trap",
        "x" * 80,
    ]
    text = json.dumps(
        {"samples": [{"sample_id": sid, "prompt": f"p{i}"} for i, sid in enumerate(ids)]}, indent=2
    )
    expected = {
        sid: n
        for sid in ids
        for n, line in enumerate(text.splitlines())
        if line.strip().startswith(f'"sample_id": {json.dumps(sid)}')
    }
    assert len(expected) == len(ids)
    assert sample_lines(text) == expected
