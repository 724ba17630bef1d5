"""Option values are checked at start-up: a bad one is a usage error (exit 4) naming the option,
the value and what is allowed, whether it came from the command line or the ini file."""

from __future__ import annotations

import json

import pytest

from tests.support import OmkRun, write_sample_set

pytestmark = pytest.mark.floor("pytest")
"""pytest parses these options and ini keys: its lowest version runs them too (.ci/lowest)."""

BAD_CLI = [
    ("--omk-rubric-threshold=6", "--omk-rubric-threshold must be a number between 1 and 5, not '6'"),
    ("--omk-rubric-threshold=0.5", "--omk-rubric-threshold must be a number between 1 and 5, not '0.5'"),
    ("--omk-concurrency=0", "--omk-concurrency must be an integer >= 1, not '0'"),
    ("--omk-concurrency=many", "--omk-concurrency must be an integer >= 1, not 'many'"),
    ("--omk-timeout=0", "--omk-timeout must be a number > 0, not '0'"),
    ("--omk-timeout=nan", "--omk-timeout must be a number > 0, not 'nan'"),
    ("--omk-retries=-1", "--omk-retries must be an integer >= 0, not '-1'"),
    (
        "--omk-record-mode=sometimes",
        "--omk-record-mode must be one of none, once, new_episodes, all, rewrite, off, not 'sometimes'",
    ),
]
BAD_INI = [
    ("omk_concurrency = abc", "ini key omk_concurrency must be an integer >= 1, not 'abc'"),
    ("omk_timeout = -1", "ini key omk_timeout must be a number > 0, not '-1'"),
    ("omk_rubric_threshold = 9", "ini key omk_rubric_threshold must be a number between 1 and 5, not '9'"),
    ("omk_strict = maybe", "ini key omk_strict must be true or false, not 'maybe'"),
]


@pytest.mark.parametrize(("option", "message"), BAD_CLI)
def test_bad_cli_value_is_a_usage_error(
    pytester: pytest.Pytester, omk_run: OmkRun, option: str, message: str
) -> None:
    write_sample_set(pytester, {"sample_id": "s", "prompt": "p"})
    result = omk_run("--omk-executor=echo", option)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()
    assert "Traceback" not in result.stderr.str() + result.stdout.str()


@pytest.mark.parametrize(("line", "message"), BAD_INI)
def test_bad_ini_value_is_a_usage_error(
    pytester: pytest.Pytester, omk_run: OmkRun, line: str, message: str
) -> None:
    write_sample_set(pytester, {"sample_id": "s", "prompt": "p"})
    pytester.makeini(f"[pytest]\nomk_executor = echo\n{line}\n")
    result = omk_run()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()
    assert "INTERNALERROR" not in result.stderr.str() + result.stdout.str()


def test_good_ini_values_are_typed(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    write_sample_set(
        pytester, {"sample_id": "s", "prompt": "p", "assertions": [{"type": "contains", "value": "p"}]}
    )
    pytester.makeini(
        "[pytest]\nomk_executor = echo\nomk_concurrency = 2\nomk_timeout = 5\nomk_strict = true\n"
    )
    omk_run("--omk-report=r.json").assert_outcomes(passed=1)
    config = json.loads((pytester.path / "r.json").read_text())["config"]
    assert (config["concurrency"], config["timeout"], config["strict"]) == (2, 5.0, True)


def test_help_shows_defaults(omk_run: OmkRun) -> None:
    result = omk_run("--help")
    text = " ".join(result.stdout.str().split())
    for shown in (
        "(default: 8)",
        "(default: 120)",
        "(default: new_episodes; none when CI is set)",
        "(default: 3)",
    ):
        assert shown in text
