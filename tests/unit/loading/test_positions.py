"""Each check's line in its file (YAML block and flow style, JSON pretty and on one line)."""

from __future__ import annotations

import json

import pytest

from pytest_omk.loading.positions import FileLines, check_lines

DOC = {
    "schemaVersion": "omk.eval-sample-set/v2",
    "samples": [
        {"sample_id": "a", "prompt": "x", "assertions": [{"type": "contains", "value": "{[\"'"}]},
        {
            "sample_id": "b",
            "prompt": "y\nz",
            "assertions": [
                {"type": "contains", "value": "q"},
                {"type": "assert-set", "mode": "any", "children": [{"type": "contains", "value": "r"}]},
            ],
            "rubric": {"clarity": {"criterion": "c", "weight": 1}},
        },
    ],
}

BLOCK = """\
schemaVersion: omk.eval-sample-set/v2
samples:
  - sample_id: a
    prompt: x
    assertions:
      - {type: contains, value: "{[\\"'"}
  - prompt: |
      y
      z
    sample_id: b
    assertions:
      - type: contains
        value: q
      - type: assert-set
        mode: any
        children:
          - type: contains
            value: r
    rubric:
      clarity:
        criterion: c
        weight: 1
"""


def test_yaml_block_style() -> None:
    a, b = check_lines(BLOCK, yaml_format=True)
    assert a.assertion(0) == 6
    assert [b.assertion(0), b.assertion(1), b.assertion(1, [0])] == [12, 14, 17]
    assert b.rubric == {"clarity": 20}


def test_json_pretty_and_compact() -> None:
    text = json.dumps(DOC, indent=2)
    lines = text.splitlines()
    a, b = check_lines(text, yaml_format=False)
    first, child = a.assertion(0), b.assertion(1, [0])
    assert first is not None and child is not None
    assert lines[first - 1].strip() == "{"
    assert lines[child - 1].strip() == "{" and '"value": "r"' in lines[child + 1]
    assert '"clarity"' in lines[b.rubric["clarity"] - 1]
    one = check_lines(json.dumps(DOC), yaml_format=False)
    assert [s.assertion(0) for s in one] == [1, 1]


def test_a_path_deeper_than_the_file_stops_at_the_deepest_known_line() -> None:
    _, b = check_lines(BLOCK, yaml_format=True)
    assert b.assertion(1, [5]) == 14
    assert b.assertion(9) is None


@pytest.mark.parametrize(
    ("text", "yaml_format"), [("{not json", False), ("samples: [", True), ("[1, 2]", False), ("", True)]
)
def test_unreadable_text_gives_no_lines(text: str, yaml_format: bool) -> None:
    assert FileLines(text, yaml_format=yaml_format).sample(0) is None
