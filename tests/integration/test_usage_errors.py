"""Green means green: a misconfigured run stops with one line and exit 4, with or without xdist.

Each test is one misconfiguration as a user meets it: the same usage error under
``-n 2`` as without it (never an INTERNALERROR), a path option that must not change which ini file
is read, a regression gate that compared nothing, typos that ended in "all skipped, exit 0", and
an ini record mode that made live calls in CI.
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from tests.fakes.fake_llm import FakeLLM
from tests.support import NO_EXECUTOR, OmkRun, printed, run_pytest, sample, write_sample_set
from tests.support.wrapped import unwrapped

DOCS = Path(__file__).resolve().parents[2] / "docs"


def usage_line(result: pytest.RunResult, capfd: pytest.CaptureFixture[str] | None = None) -> str:
    """The run's one usage-error line; the run must have exited 4 without a traceback.

    ``capfd``: the run was in this process with xdist workers, which write to the file descriptors
    1 and 2 themselves (a child pytest's pipes would hold that): it is read too.
    """
    text = printed(result, capfd)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, text
    assert "INTERNALERROR" not in text and "Traceback" not in text, text
    lines = [line for line in result.stderr.lines if line.startswith("ERROR: ")]
    assert len(lines) == 1, text
    return lines[0]


XDIST_OR_NOT = [pytest.param(False, id="alone"), pytest.param(True, id="n2", marks=pytest.mark.multiprocess)]
"""Without xdist, then under ``-n 2``: only the latter starts processes (its workers)."""


def two_samples(pytester: pytest.Pytester) -> None:
    write_sample_set(
        pytester,
        sample(
            "refund-annual", "what is the refund policy", assertions=[{"type": "contains", "value": "refund"}]
        ),
        sample("graded", "say hi", rubric={"tone": {"criterion": "friendly", "weight": 1}}),
        name="eval-samples.yaml",
    )
    pytester.makepyfile(test_plain="def test_plain():\n    assert True\n")


# --- 1. usage errors under -n -------------------------------------------------------------------


@pytest.mark.multiprocess
def test_a_missing_key_is_the_same_usage_error_with_and_without_xdist(
    pytester: pytest.Pytester, omk_run: OmkRun, capfd: pytest.CaptureFixture[str]
) -> None:
    two_samples(pytester)
    pytester.makeini("[pytest]\nomk_executor = openai\n")
    args = ("--omk-record-mode=new_episodes", "--omk-recordings=rec")
    alone = usage_line(omk_run(*args))
    spread = usage_line(omk_run(*args, "-n", "2"), capfd)
    assert "OPENAI_API_KEY" in alone and "has no recording to replay" in alone
    assert spread == alone


@pytest.mark.multiprocess
def test_a_judge_without_key_is_a_usage_error_under_xdist_and_blames_no_test(
    pytester: pytest.Pytester, omk_run: OmkRun, capfd: pytest.CaptureFixture[str]
) -> None:
    two_samples(pytester)
    result = omk_run("--omk-executor=echo", "--omk-judge=openai", "--omk-record-mode=off", "-n", "2")
    text = printed(result, capfd)  # the workers' own output too
    line = usage_line(result)
    assert "INTERNALERROR" not in text and "Traceback" not in text, text
    assert "--omk-judge" in line and "OPENAI_API_KEY" in line
    assert "test_plain" not in text


def docs_conftest() -> str:
    """The conftest implementing ``pytest_omk_make_executor`` exactly as docs/apps.md shows it."""
    text = (DOCS / "apps.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    found = [textwrap.dedent(block) for block in blocks if "def pytest_omk_make_executor" in block]
    assert found, "docs/apps.md shows no conftest implementing pytest_omk_make_executor"
    return found[0]


@pytest.mark.parametrize("xdist", XDIST_OR_NOT)
def test_disabling_the_plugin_next_to_a_conftest_from_the_docs_works(
    pytester: pytest.Pytester, capfd: pytest.CaptureFixture[str], xdist: bool
) -> None:
    pytester.makeconftest(docs_conftest())
    pytester.makepyfile(test_plain="def test_plain():\n    assert True\n")
    # Not omk_run: its --omk-* arguments do not exist with the plugin turned off.
    result = run_pytest(pytester, "-p", "no:omk", *(("-n", "2") if xdist else ()))
    text = printed(result, capfd)
    assert "PluginValidationError" not in text and "INTERNALERROR" not in text, text
    result.assert_outcomes(passed=1)


@pytest.mark.parametrize("xdist", XDIST_OR_NOT)
def test_an_unreadable_system_prompt_file_is_one_line(
    pytester: pytest.Pytester, omk_run: OmkRun, capfd: pytest.CaptureFixture[str], xdist: bool
) -> None:
    two_samples(pytester)
    args = ("--omk-executor=echo", "--omk-system", "nope.md", *(("-n", "2") if xdist else ()))
    line = usage_line(omk_run(*args), capfd)
    assert "--omk-system" in line and "nope.md" in line


@pytest.mark.parametrize("xdist", XDIST_OR_NOT)
def test_an_unimportable_python_executor_is_one_line(
    pytester: pytest.Pytester, omk_run: OmkRun, capfd: pytest.CaptureFixture[str], xdist: bool
) -> None:
    two_samples(pytester)
    args = ("--omk-executor=python:myapp.nope:executor", *(("-n", "2") if xdist else ()))
    line = usage_line(omk_run(*args), capfd)
    assert "--omk-executor" in line and "myapp.nope" in line


def test_the_agent_shorthands_of_the_docs_are_executors(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    assert "`agent:anthropic` are shorthands" in (DOCS / "agents.md").read_text(encoding="utf-8")
    two_samples(pytester)
    for spec in ("agent:anthropic", "agent:openai"):
        result = omk_run(f"--omk-executor={spec}", "--collect-only", "-q")
        assert result.ret == pytest.ExitCode.OK, result.stderr.str()


def test_a_misspelt_assertion_type_gets_a_suggestion(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    write_sample_set(pytester, sample("s", assertions=[{"type": "contain", "value": "hi"}]))
    result = omk_run("--omk-executor=echo")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*unknown assertion type 'contain'; did you mean 'contains'?*"])


# --- 2. a path option must not change which configuration is read -------------------------------


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """Eight samples and an ini file that names the executor: nothing runs without that ini."""
    pytester.makeini("[pytest]\nomk_executor = echo\n")
    write_sample_set(
        pytester,
        *(sample(f"s{i}", f"say {i}", assertions=[{"type": "contains", "value": f"{i}"}]) for i in range(8)),
    )
    return pytester


@pytest.fixture
def elsewhere(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory outside the project (and outside any ini file's reach)."""
    return tmp_path_factory.mktemp("elsewhere")


def test_a_space_form_path_outside_the_project_is_a_usage_error_showing_the_equals_form(
    project: pytest.Pytester, omk_run: OmkRun, elsewhere: Path
) -> None:
    baseline = elsewhere / "baseline.json"
    assert omk_run(f"--omk-report={baseline}").ret == pytest.ExitCode.OK
    result = omk_run("--omk-baseline", str(baseline), "--omk-fail-on-regression", "0.1")
    line = usage_line(result)
    assert f"--omk-baseline={baseline}" in line
    assert "8 skipped" not in result.stdout.str()
    # The = form reads the project's ini file and compares.
    fine = omk_run(f"--omk-baseline={baseline}", "--omk-fail-on-regression=0.1")
    fine.assert_outcomes(passed=8)


def test_a_report_path_outside_the_project_works_every_time(
    project: pytest.Pytester, omk_run: OmkRun, elsewhere: Path
) -> None:
    report = elsewhere / "x.json"
    omk_run("--omk-report", str(report)).assert_outcomes(passed=8)
    assert report.is_file()
    second = omk_run("--omk-report", str(report))  # the file exists now: pytest took it for a test path
    assert f"--omk-report={report}" in usage_line(second)


# --- 3. a regression gate that matched nothing ---------------------------------------------------


def test_a_gate_with_no_sample_in_common_with_its_baseline_is_a_usage_error(
    project: pytest.Pytester, omk_run: OmkRun, elsewhere: Path
) -> None:
    other = elsewhere / "other.json"
    rows = [
        {"nodeid": f"elsewhere/eval-samples.json::t{i}", "file": "elsewhere/eval-samples.json", "sample_id": f"t{i}",
         "variant": None, "outcome": "passed", "scores": {"composite": 1}}
        for i in range(3)
    ]  # fmt: skip
    other.write_text(json.dumps({"schemaVersion": "pytest-omk.report/v1", "samples": rows}), encoding="utf-8")
    line = usage_line(omk_run(f"--omk-baseline={other}", "--omk-fail-on-regression=0.1"))
    assert "--omk-fail-on-regression" in line and "none of the 8 selected items is in the baseline" in line


# --- 4. typos that ended in "all skipped, exit 0" ------------------------------------------------


def test_a_misspelt_ini_key_is_a_usage_error_with_a_suggestion(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    two_samples(pytester)
    pytester.makeini("[pytest]\nomk_exector = echo\n")
    line = usage_line(omk_run())
    assert "omk_exector" in line and "did you mean omk_executor" in line


@pytest.mark.parametrize("key", ["omk-judge", "OMK_JUDGE"])
def test_a_flag_or_variable_spelling_in_pyproject_is_a_usage_error(
    pytester: pytest.Pytester, omk_run: OmkRun, key: str
) -> None:
    two_samples(pytester)
    pytester.makepyprojecttoml(f'[tool.pytest.ini_options]\n{key} = "openai"\n')
    line = usage_line(omk_run("--omk-executor=echo"))
    assert f"unknown ini key {key}" in line and "did you mean omk_judge?" in line


@pytest.mark.parametrize("name", ["eval-samples.yml", "eval_samples.json", "evals-samples.yaml"])
def test_a_near_miss_sample_file_name_is_a_warning_naming_the_canonical_names(
    pytester: pytest.Pytester, omk_run: OmkRun, name: str
) -> None:
    write_sample_set(pytester, sample("s"), name=f"evals/{name}")
    pytester.makepyfile(test_plain="def test_plain():\n    assert True\n")
    result = omk_run("--omk-executor=echo")
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(
        [f"evals/{name}:1", f"*{name}*not collected*eval-samples.json*eval-samples.yaml*"]
    )


def test_no_executor_says_why_in_the_summary_without_rs(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    two_samples(pytester)
    result = omk_run()
    result.assert_outcomes(passed=1, skipped=2)
    assert "-rs" not in result.stdout.str()
    unwrapped(result).fnmatch_lines([f"*skipped 2*{NO_EXECUTOR}*"])


@pytest.mark.parametrize("xdist", XDIST_OR_NOT)
def test_no_executor_under_ci_is_a_usage_error(
    pytester: pytest.Pytester,
    omk_run: OmkRun,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    xdist: bool,
) -> None:
    two_samples(pytester)
    monkeypatch.setenv("CI", "true")
    line = usage_line(omk_run(*(("-n", "2") if xdist else ())), capfd)
    assert NO_EXECUTOR in line


# --- 8. an ini record mode must not make live calls in CI ----------------------------------------


def test_an_ini_record_mode_makes_no_live_call_in_ci(
    pytester: pytest.Pytester, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-green-ci-ini-mode-4b1d")
    monkeypatch.setenv("CI", "true")
    write_sample_set(pytester, sample("s", "Say hi", assertions=[{"type": "contains", "value": "hi"}]))
    fake_llm.add_rule("Say hi", "hi")
    result = run_pytest(
        pytester, "--omk-executor=openai", "--omk-recordings=rec", "-o", "omk_record_mode=new_episodes"
    )
    assert fake_llm.requests == []
    result.assert_outcomes(errors=1)  # a replay miss: nothing is recorded yet
    unwrapped(result).fnmatch_lines(["*omk_record_mode*ignored*CI*"])
    # The CI job may still record on purpose: on the command line, or through OMK_RECORD_MODE.
    run_pytest(pytester, "--omk-executor=openai", "--omk-recordings=rec", "--omk-record-mode=new_episodes")
    assert len(fake_llm.requests) == 1
    monkeypatch.setenv("OMK_RECORD_MODE", "all")
    run_pytest(pytester, "--omk-executor=openai", "--omk-recordings=rec")
    assert len(fake_llm.requests) == 2
