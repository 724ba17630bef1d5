"""``--omk-lint``: warnings naming the values the reference's strict loader would refuse."""

from __future__ import annotations

import pytest

from tests.support import OmkRun, sample, sample_set, write_samples

ASSERTIONS = [
    {"type": "contains", "value": "prepared statement"},
    {"type": "contains_any", "values": ["ok", "安全"]},
    {"type": "equals", "value": "x"},
    {"type": "regex", "pattern": "中文"},
    {"type": "contains_all", "values": ["a" * 41]},
    {"type": "contains", "value": "portable"},
    {"type": "assert-set", "children": [{"type": "contains", "value": "two words"}]},
]


def test_lint_warns_once_per_value_omk_would_refuse(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    write_samples(pytester, "eval-samples.json", sample_set(sample("s1", assertions=ASSERTIONS)))
    result = omk_run("--collect-only", "-q", "--omk-lint")
    result.stdout.fnmatch_lines(
        [
            "*omk-lint: s1: assertions[[]0[]]: contains value 'prepared statement' contains whitespace*",
            "*omk-lint: s1: assertions[[]1[]]: contains_any value '安全'*CJK*",
            "*omk-lint: s1: assertions[[]2[]]: equals value 'x' is not 2 to 40 characters*",
            "*omk-lint: s1: assertions[[]3[]]: regex pattern '中文'*",
            "*omk-lint: s1: assertions[[]4[]]: contains_all value 'aaaa*",
        ]
    )
    assert "assertions[5]" not in result.stdout.str()
    assert "assertions[6]" not in result.stdout.str()  # assert-set children are exempt, as in omk
    assert result.ret == pytest.ExitCode.OK


def test_without_lint_no_warning(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    write_samples(pytester, "eval-samples.json", sample_set(sample("s1", assertions=ASSERTIONS)))
    result = omk_run("--collect-only", "-q")
    assert "omk-lint" not in result.stdout.str()
