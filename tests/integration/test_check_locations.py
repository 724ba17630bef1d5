"""A failed check points at its own line in the sample file (YAML and JSON, nested ``assert-set``
children at the child's line): under ``--tb=line``, in the long and short tracebacks and in the JSON
report; the sample item keeps the sample's line."""

from __future__ import annotations

import json

import pytest

from tests.support import OmkRun, load_report, report_samples

YAML = """\
schemaVersion: omk.eval-sample-set/v2
samples:
  - sample_id: first
    prompt: hello there
    assertions:
      - type: contains
        value: hello
      - type: contains
        value: zzz-missing
      - type: assert-set
        mode: all
        children:
          - type: contains
            value: there
          - type: assert-set
            mode: any
            children:
              - type: contains
                value: nested-absent
              - type: starts_with
                value: nope
  - sample_id: second
    prompt: bye
    assertions:
      - type: equals
        value: goodbye
"""


def line_of(text: str, needle: str) -> int:
    """The 1-based line of the first line containing ``needle``."""
    return next(i for i, line in enumerate(text.splitlines(), start=1) if needle in line)


def json_text() -> str:
    """The same samples as JSON, one key per line (as a person or ``json.dumps(indent=2)`` writes it)."""
    import yaml

    return json.dumps(yaml.safe_load(YAML), indent=2)


@pytest.fixture(params=["yaml", "json"])
def sample_file(request: pytest.FixtureRequest, pytester: pytest.Pytester) -> tuple[str, str, int]:
    """The file's name, its text, and how many lines above a check's ``value`` the check starts:
    YAML's ``- type:`` line, JSON's ``{`` line."""
    text = YAML if request.param == "yaml" else json_text()
    name = f"eval-samples.{request.param}"
    (pytester.path / name).write_text(text, encoding="utf-8")
    return name, text, 1 if request.param == "yaml" else 2


def test_tb_line_points_at_each_failed_assertion(sample_file: tuple[str, str, int], omk_run: OmkRun) -> None:
    name, text, above = sample_file
    result = omk_run("--omk-executor=echo", "--tb=line")
    out = result.stdout.str()
    contains = line_of(text, "zzz-missing") - above  # the child mapping starts at its ``type`` key
    nested = line_of(text, "nested-absent") - above
    equals = line_of(text, "goodbye") - above
    for line in (contains, nested, equals):
        assert f"{name}:{line}: " in out, (line, out)
    # The sample-level failure stays at the sample's line.
    assert f"{name}:{line_of(text, 'sample_id')}: 2 of 3 checks failed" in out


def test_long_and_short_tracebacks_name_the_assertion_line(
    sample_file: tuple[str, str, int], omk_run: OmkRun
) -> None:
    name, text, above = sample_file
    for style in ("long", "short"):
        out = omk_run("--omk-executor=echo", f"--tb={style}").stdout.str()
        assert f"{name}:{line_of(text, 'zzz-missing') - above}: assertion 1: contains" in out, out


def test_json_report_carries_each_check_line(
    sample_file: tuple[str, str, int], omk_run: OmkRun, pytester: pytest.Pytester
) -> None:
    _, text, above = sample_file
    omk_run("--omk-executor=echo", "--omk-report=r.json")
    samples = report_samples(load_report(pytester.path / "r.json"))
    first = samples["first"]
    assert first["line"] == line_of(text, "sample_id")
    assert [a["line"] for a in first["assertions"]] == [
        line_of(text, "value") - above,
        line_of(text, "zzz-missing") - above,
        line_of(text, "nested-absent") - above,  # the failing child, not the set
    ]
    assert samples["second"]["assertions"][0]["line"] == line_of(text, "goodbye") - above
