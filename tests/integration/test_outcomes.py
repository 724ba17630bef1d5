"""What a sample item's outcome is (CONTRACT §4), run end to end with ``pytester``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support import (
    NO_EXECUTOR,
    FakeCommand,
    OmkRun,
    executor_arg,
    judge_reply,
    load_report,
    parse_junit,
    report_samples,
    sample,
    sample_set,
    write_sample_set,
    write_samples,
)
from tests.support.wrapped import unwrapped


def test_no_executor_skips_with_the_hint(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    write_sample_set(pytester, sample("a"), sample("b"))
    result = omk_run("-rs")
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines([f"SKIPPED [[]2[]] *: {NO_EXECUTOR}"])
    assert result.ret == pytest.ExitCode.OK


def test_executor_from_ini(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    write_sample_set(pytester, sample("a", "ping", assertions=[{"type": "equals", "value": "ping"}]))
    pytester.makeini("[pytest]\nomk_executor = echo\n")
    omk_run().assert_outcomes(passed=1)


def test_cli_executor_wins_over_ini(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand
) -> None:
    write_sample_set(pytester, sample("a", "ping", assertions=[{"type": "equals", "value": "pong"}]))
    pytester.makeini("[pytest]\nomk_executor = echo\n")
    omk_run(executor_arg(fake_command.script({"a": "pong"}))).assert_outcomes(passed=1)


REQUIRES = [
    pytest.param({"tools": ["omk-no-such-tool-xyz"]}, ["tool 'omk-no-such-tool-xyz'"], id="tool"),
    pytest.param({"files": ["fixtures/absent.txt"]}, ["file 'fixtures/absent.txt'"], id="file"),
    pytest.param({"env": ["OMK_TEST_NEVER_SET"]}, ["OMK_TEST_NEVER_SET"], id="env"),
    pytest.param(
        {"preflight": ["echo broken-db >&2; exit 7"]}, ["exited with code 7", "broken-db"], id="preflight"
    ),
    pytest.param(
        {
            "tools": ["omk-no-such-tool-xyz", "sh"],
            "files": ["absent.txt", "present.txt"],
            "env": ["OMK_TEST_NEVER_SET", "OMK_TEST_IS_SET"],
            "preflight": ["true", "exit 5"],
        },
        [
            "tool 'omk-no-such-tool-xyz'",
            "file 'absent.txt'",
            "OMK_TEST_NEVER_SET",
            "'exit 5' exited with code 5",
        ],
        id="all",
    ),
]


@pytest.mark.parametrize(("requires", "named"), REQUIRES)
def test_unmet_requires_skip_every_item_naming_each(
    pytester: pytest.Pytester,
    omk_run: OmkRun,
    monkeypatch: pytest.MonkeyPatch,
    requires: dict[str, list[str]],
    named: list[str],
) -> None:
    monkeypatch.delenv("OMK_TEST_NEVER_SET", raising=False)
    monkeypatch.setenv("OMK_TEST_IS_SET", "1")
    pytester.path.joinpath("present.txt").write_text("x", encoding="utf-8")
    write_sample_set(pytester, sample("a"), sample("b"), requires=requires)
    result = omk_run("--omk-executor=echo", "-rs")
    result.assert_outcomes(skipped=2)
    skip_lines = [line for line in result.stdout.lines if line.startswith("SKIPPED")]
    assert len(skip_lines) == 1 and "requires not met" in skip_lines[0], skip_lines
    for fragment in named:
        assert fragment in skip_lines[0], (fragment, skip_lines[0])
    for fine in ("'sh'", "present.txt", "OMK_TEST_IS_SET", "'true'"):
        assert fine not in skip_lines[0]


def test_met_requires_run(
    pytester: pytest.Pytester, omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OMK_TEST_IS_SET", "yes")
    pytester.path.joinpath("data").mkdir()
    pytester.path.joinpath("data/in.txt").write_text("x", encoding="utf-8")
    requires = {
        "tools": ["sh"],
        "files": ["data/in.txt"],
        "env": ["OMK_TEST_IS_SET"],
        "preflight": ["test -f data/in.txt"],
    }
    write_sample_set(pytester, sample("a"), requires=requires)
    omk_run("--omk-executor=echo").assert_outcomes(passed=1)


MOCKED = sample_set(
    sample(
        "mocked",
        mocks=[{"tool": "Read", "return": "stub"}],
        assertions=[{"type": "mock_hit", "value": "Read:1"}],
    )
)


def test_mocks_on_an_executor_without_interception_is_a_collection_error(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand
) -> None:
    write_samples(pytester, "eval-samples.json", MOCKED)
    for spec in ("echo", fake_command.script({"*": "x"})):
        result = omk_run(executor_arg(spec))
        assert result.ret == pytest.ExitCode.INTERRUPTED
        result.stdout.fnmatch_lines(["*mocked*cannot intercept*omk_executor_capabilities*"])
    assert fake_command.called() == []


def test_mocks_accepted_when_the_command_declares_interception(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand
) -> None:
    write_samples(pytester, "eval-samples.json", MOCKED)
    pytester.makeini("[pytest]\nomk_executor_capabilities = mocks\n")
    spec = fake_command.script(
        {"mocked": {"output": "ok", "mockStats": {"hits": 1, "misses": 0, "perMock": {"Read:1": 1}}}}
    )
    omk_run(executor_arg(spec)).assert_outcomes(passed=1)
    assert fake_command.request("mocked")["request"]["mocks"] == [{"tool": "Read", "return": "stub"}]


@pytest.mark.floor("pytest")
def test_failed_assertion_is_a_one_line_subfailure(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    long_tail = " filler" * 100
    write_sample_set(
        pytester,
        sample(
            "s",
            "the quick brown fox" + long_tail,
            assertions=[{"type": "contains", "value": "quick"}, {"type": "contains", "value": "banana"}],
        ),
        name="eval-samples.yaml",
    )
    result = omk_run("--omk-executor=echo", "-vv")
    result.stdout.fnmatch_lines(
        [
            "eval-samples.yaml::s SUBPASSED[[]assertion 0: contains[]]*",
            "eval-samples.yaml::s SUBFAILED[[]assertion 1: contains[]]*",
            "eval-samples.yaml::s FAILED*",
        ]
    )
    lines = result.stdout.lines
    header = next(i for i, line in enumerate(lines) if "sample: s [assertion 1: contains]" in line)
    reason = lines[header + 1]
    assert "'banana'" in reason and "the quick brown fox" in reason, reason
    assert len(reason) < 300, "the excerpt of the output is short"
    # Then where the check is (the line of its ``- type:`` in the sample file), and no traceback.
    text = (pytester.path / "eval-samples.yaml").read_text(encoding="utf-8").splitlines()
    check = next(i for i, line in enumerate(text) if "value: banana" in line)  # 0-based: the line above
    assert lines[header + 2 : header + 4] == ["", f"eval-samples.yaml:{check}: assertion 1: contains"]
    assert lines[header + 4].startswith("___"), "the reason and its place, no traceback"
    result.stdout.fnmatch_lines(["SUBFAILED[[]assertion 1: contains[]] eval-samples.yaml::s - *banana*"])
    result.assert_outcomes(passed=0, failed=2)
    assert "Traceback" not in result.stdout.str()


NEEDS_EVIDENCE = sample(
    "s",
    assertions=[
        {"type": "contains", "value": "answer"},
        {"type": "cost_max", "value": 0.01},
        {"type": "tools_called", "values": ["Bash"]},
    ],
)
"""A sample whose cost_max and tools_called need evidence that :data:`BARE_ANSWER` lacks."""
BARE_ANSWER = {"s": {"output": "the answer"}}  # no cost, no trace


@pytest.mark.floor("pytest")
def test_missing_evidence_is_skipped_and_left_out_of_scores(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand
) -> None:
    write_sample_set(pytester, NEEDS_EVIDENCE)
    spec = fake_command.script(BARE_ANSWER)
    result = omk_run(executor_arg(spec), "-v", "-rs", "--omk-report", "r.json")
    result.stdout.fnmatch_lines(
        [
            "*SUBPASSED[[]assertion 0: contains[]]*",
            "*SUBSKIPPED[[]assertion 1: cost_max[]]*",
            "*SUBSKIPPED[[]assertion 2: tools_called[]]*",
            "eval-samples.json::s PASSED*",
        ]
    )
    result.stdout.fnmatch_lines_random(["SUBSKIPPED*no cost (costUSD)", "SUBSKIPPED*no tool trace*"])
    record = report_samples(load_report(pytester.path / "r.json"))["s"]
    assert [a["status"] for a in record["assertions"]] == ["pass", "missing", "missing"]
    # Missing readings are left out of every score, the flat one included (1 observed, passed).
    assert record["scores"] == {
        "assertions": 5.0,
        "fact": 5.0,
        "behavior": None,
        "judge": None,
        "composite": 5.0,
    }
    assert record["outcome"] == "passed"


def test_strict_makes_missing_evidence_fail(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand
) -> None:
    write_sample_set(pytester, NEEDS_EVIDENCE)
    spec = fake_command.script(BARE_ANSWER)
    result = omk_run(executor_arg(spec), "-v", "--omk-strict")
    result.stdout.fnmatch_lines(
        [
            "*SUBFAILED[[]assertion 1: cost_max[]]*",
            "*SUBFAILED[[]assertion 2: tools_called[]]*",
            "eval-samples.json::s FAILED*",
        ]
    )
    result.stdout.fnmatch_lines(["*missing evidence (--omk-strict)*"])
    result.assert_outcomes(failed=3)


def test_min_composite_fails_an_otherwise_passing_sample(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand, fake_judge: FakeCommand
) -> None:
    rubric = {"quality": {"criterion": "answers well", "weight": 1}}
    write_sample_set(
        pytester, sample("s", rubric=rubric, assertions=[{"type": "contains", "value": "answer"}])
    )
    executor = executor_arg(fake_command.script({"s": "the answer"}))
    judge = f"--omk-judge={fake_judge.script({'*': judge_reply(3)})}"
    # fact 5, judge 3: composite 4.00; every subtest passes (3 >= the default threshold 3).
    plain = omk_run(executor, judge, "-v")
    plain.stdout.fnmatch_lines(["*SUBPASSED[[]rubric: quality[]]*", "eval-samples.json::s PASSED*"])
    gated = omk_run(executor, judge, "-v", "--omk-min-composite", "4.5")
    gated.stdout.fnmatch_lines(
        [
            "*SUBPASSED[[]rubric: quality[]]*",
            "eval-samples.json::s FAILED*",
            "*composite 4.00 is below --omk-min-composite 4.5*",
        ]
    )
    gated.assert_outcomes(failed=1)
    omk_run(executor, judge, "--omk-min-composite", "4").assert_outcomes(passed=1)


def test_rubric_below_threshold_fails_its_subtest(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand, fake_judge: FakeCommand
) -> None:
    rubric = {
        "quality": {"criterion": "answers well", "weight": 0.5},
        "tone": {"criterion": "polite", "weight": 0.5},
    }
    write_sample_set(pytester, sample("s", rubric=rubric))
    executor = executor_arg(fake_command.script({"s": "the answer"}))
    judge = f"--omk-judge={fake_judge.script({'*': judge_reply(3)})}"
    result = omk_run(executor, judge, "-v", "--omk-rubric-threshold", "4", "--omk-report", "r.json")
    result.stdout.fnmatch_lines(
        ["*SUBFAILED[[]rubric: quality[]]*", "*SUBFAILED[[]rubric: tone[]]*", "eval-samples.json::s FAILED*"]
    )
    record = report_samples(load_report(pytester.path / "r.json"))["s"]
    assert record["rubric"]["quality"]["score"] == 3 and record["rubric"]["quality"]["status"] == "fail"
    assert record["scores"]["judge"] == 3.0 and record["scores"]["composite"] == 3.0


def test_no_judge_makes_rubric_missing(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    rubric = {"quality": {"criterion": "answers well", "weight": 1}}
    write_sample_set(pytester, sample("s", rubric=rubric, assertions=[{"type": "contains", "value": "say"}]))
    result = omk_run("--omk-executor=echo", "-v", "-rs", "--omk-report", "r.json")
    result.stdout.fnmatch_lines(
        ["*SUBSKIPPED[[]rubric: quality[]]*", "eval-samples.json::s PASSED*", "*no judge configured*"]
    )
    result.stdout.fnmatch_lines(["judge readings missing: 1*"])
    report = load_report(pytester.path / "r.json")
    assert report["summary"]["judgeReadingsMissing"] == 1
    assert report_samples(report)["s"]["scores"]["judge"] is None


@pytest.mark.floor("pytest")
def test_tripwire_samples_are_xfail(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    write_sample_set(
        pytester,
        sample("trip-fails", "hi", tripwire=True, assertions=[{"type": "contains", "value": "leak"}]),
        sample("trip-holds", "hi", tripwire=True, assertions=[{"type": "contains", "value": "hi"}]),
    )
    result = omk_run("--omk-executor=echo", "-rxX", "--omk-report", "r.json")
    result.assert_outcomes(xfailed=1, xpassed=1)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["XFAIL eval-samples.json::trip-fails*tripwire*"])
    outcomes = {sid: s["outcome"] for sid, s in report_samples(load_report(pytester.path / "r.json")).items()}
    assert outcomes == {"trip-fails": "xfailed", "trip-holds": "xpassed"}


def test_executor_failure_is_an_error_never_a_pass(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand
) -> None:
    write_sample_set(
        pytester,
        sample("fine", assertions=[{"type": "contains", "value": "ok"}]),
        sample("boom", assertions=[{"type": "contains", "value": "ok"}]),
    )
    spec = fake_command.script(
        {"fine": "ok", "boom": {"exit": 3, "stderr": "provider says: quota exhausted"}}
    )
    result = omk_run(executor_arg(spec), "--omk-retries=0", "--omk-report", "r.json", "-vv")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["ERROR eval-samples.json::boom - *quota exhausted*"])
    result.stdout.fnmatch_lines(["eval-samples.json::boom  error *", "samples: 2  passed 1  error 1"])
    report = load_report(pytester.path / "r.json")
    assert report["summary"]["outcomes"] == {"passed": 1, "error": 1}
    boom = report_samples(report)["boom"]
    assert boom["outcome"] == "error" and boom["scores"]["composite"] is None and boom["execution"] is None


def test_executor_failure_error_is_concise(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand
) -> None:
    write_sample_set(pytester, sample("boom"))
    spec = fake_command.script({"boom": {"exit": 3, "stderr": "provider says: quota exhausted"}})
    result = omk_run(executor_arg(spec), "--omk-retries=0")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*ERROR at setup of sample: boom*", "*quota exhausted*"])
    out = result.stdout.str()
    assert "pluggy/_" not in out and "_pytest/runner.py" not in out


@pytest.mark.floor("pytest")
def test_exitfirst_stops_after_the_first_failed_sample(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    failing = [{"type": "contains", "value": "absent"}, {"type": "contains", "value": "also absent"}]
    write_samples(
        pytester, "eval-samples.json", sample_set(*(sample(f"s{i}", assertions=failing) for i in range(4)))
    )
    result = omk_run("--omk-executor=echo", "-x", "-v")
    # The first failed assertion counts as a failure, so -x stops inside the first sample.
    result.stdout.fnmatch_lines(
        ["eval-samples.json::s0 SUBFAILED[[]assertion 0: contains[]]*", "eval-samples.json::s0 FAILED*"]
    )
    result.stdout.fnmatch_lines(["*stopping after 2 failures*"])
    result.stdout.no_fnmatch_line("eval-samples.json::s[123]*")
    result.assert_outcomes(failed=2)


def test_exitfirst_keeps_the_record_of_the_stopping_sample(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    failing = [{"type": "contains", "value": "absent"}, {"type": "contains", "value": "say"}]
    write_sample_set(pytester, sample("s0", assertions=failing), sample("s1"))
    result = omk_run("--omk-executor=echo", "-x", "--omk-report", "r.json")
    result.assert_outcomes(failed=2)
    record = report_samples(load_report(pytester.path / "r.json"))["s0"]
    assert record["execution"] is not None and record["execution"]["output"] == "say hello"
    assert record["modelCalls"]["live"] == 1


def test_python_failure_in_a_sibling_test_does_not_disturb_samples(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    write_sample_set(pytester, sample("a"))
    pytester.makepyfile(test_x="def test_x():\n    assert 1 == 2\n")
    omk_run("--omk-executor=echo").assert_outcomes(passed=1, failed=1)


# --- where scores show: terminal, JUnit, JSON report (CONTRACT §6-§7) ----------------------------


def _report_fixture(pytester: pytest.Pytester, fake_command: FakeCommand) -> str:
    """Four samples: all passing, partly failing, executor error, rubric only (no judge)."""
    write_sample_set(
        pytester,
        sample(
            "a",
            capability=["greeting"],
            difficulty="easy",
            assertions=[
                {"type": "contains", "value": "alpha"},
                {"type": "max_length", "value": 100},
                {"type": "cost_max", "value": 0.05},
            ],
        ),
        sample(
            "b",
            assertions=[
                {"type": "contains", "value": "beta", "weight": 1},
                {"type": "contains", "value": "answer", "weight": 3},
                {"type": "starts_with", "value": "beta"},
                {"type": "ends_with", "value": "answer"},
            ],
        ),
        sample("c", assertions=[{"type": "contains", "value": "x"}]),
        sample("d", rubric={"quality": {"criterion": "is good", "weight": 1}}),
    )
    return fake_command.script(
        {
            "a": {
                "output": "alpha answer",
                "costUSD": 0.01,
                "inputTokens": 10,
                "outputTokens": 5,
                "numTurns": 2,
            },
            "b": {"output": "gamma answer", "costUSD": 0.02},
            "c": {"exit": 1, "stderr": "backend down"},
            "d": "plain text answer",
        }
    )


# Hand-computed (omk-semantics §11): b: flat 1 + 4·4/6 = 3.67, fact 1 + 4·3/4 = 4.00,
# behavior 1 + 4·1/2 = 3.00, composite (4 + 3) / 2 = 3.50. Means over a and b: assertions
# (5 + 3.67) / 2 = 4.335, whose double is just below the tie, so 4.33 (half-up on the binary value).
SKIPPED = "skipped 1 (nothing could be graded: not scored: no judge configured (set --omk-judge))"
EXPECTED_MEANS = {"assertions": 4.33, "fact": 4.5, "behavior": 4.0, "judge": None, "composite": 4.25}


def test_scores_section_rows_and_totals(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand
) -> None:
    spec = _report_fixture(pytester, fake_command)
    result = omk_run(executor_arg(spec), "--omk-retries=0")
    # d: its one check (a rubric) could not be graded without a judge: skipped, never passed.
    result.assert_outcomes(passed=1, failed=3, errors=1, skipped=1)
    unwrapped(result).fnmatch_lines(
        [
            "=*= omk scores =*=",
            "sample *outcome *comp *fact *behav *judge *cost *time *replay",  # 80 columns: short names
            "eval-samples.json::a *passed *5.00 *5.00 *5.00 *- *$0.01 *[0-9]ms *no",
            "eval-samples.json::b *failed *3.50 *4.00 *3.00 *- *$0.02 *[0-9]ms *no",
            "eval-samples.json::c *error *- *- *- *- *- *- *-",
            "eval-samples.json::d *skipped *- *- *- *- *- *[0-9]ms *no",
            "",
            "mean: composite 4.25  fact 4.50  behavior 4.00  judge -",
            f"samples: 4  passed 1  failed 1  error 1  {SKIPPED}",
            # The fake command is an app under test: it runs, and makes no model call of its own.
            "model calls: 0 live, 0 replayed  cost: $0.03",
            "judge readings missing: 1 *",
        ]
    )


def test_quiet_scores_section_keeps_only_totals(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand
) -> None:
    spec = _report_fixture(pytester, fake_command)
    result = omk_run(executor_arg(spec), "--omk-retries=0", "-q")
    unwrapped(result).fnmatch_lines(
        [
            "=*= omk scores =*=",
            "mean: composite 4.25  fact 4.50  behavior 4.00  judge -",
            f"samples: 4  passed 1  failed 1  error 1  {SKIPPED}",
            # The fake command is an app under test: it runs, and makes no model call of its own.
            "model calls: 0 live, 0 replayed  cost: $0.03",
        ]
    )
    section = result.stdout.str().split("omk scores", 1)[1]
    assert "sample " not in section.splitlines()[1]
    assert not any(line.startswith("eval-samples.json::") for line in section.splitlines())


@pytest.mark.floor("pytest")
def test_junit_properties(pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand) -> None:
    spec = _report_fixture(pytester, fake_command)
    # Per testcase when asked (the xunit2 default puts them on the suite: tests/integration/test_junit_schema.py).
    omk_run(
        executor_arg(spec),
        "--omk-retries=0",
        "--junitxml=j.xml",
        "--omk-model=m-1",
        "-o",
        "omk_junit_properties=testcase",
    )
    junit = parse_junit(pytester.path / "j.xml")
    assert junit.suite_properties == {
        "omk.samples": "4",
        "omk.score.assertions.mean": "4.33",
        "omk.score.fact.mean": "4.50",
        "omk.score.behavior.mean": "4.00",
        "omk.score.composite.mean": "4.25",
        "omk.cost_usd.total": "0.030000",
        # The fake command is an app under test: no model call through pytest-omk, its own cost.
        "omk.model.calls.total": "0",
        "omk.model.cost_usd.total": "0.030000",
    }
    executor = junit.cases["eval-samples.json::a"].props["omk.executor"]
    assert executor.startswith("command:") and "omk_command.py" in executor
    common = {"omk.file": "eval-samples.json", "omk.executor": executor, "omk.model": "m-1"}

    a = junit.cases["eval-samples.json::a"].props
    assert a.pop("omk.latency_ms").isdigit()
    assert a == {
        **common,
        "omk.sample_id": "a",
        "omk.score.assertions": "5.00",
        "omk.score.fact": "5.00",
        "omk.score.behavior": "5.00",
        "omk.score.composite": "5.00",
        "omk.assertion.0.contains": "pass",
        "omk.assertion.1.max_length": "pass",
        "omk.assertion.2.cost_max": "pass",
        "omk.cost_usd": "0.010000",
        "omk.replayed": "false",
        "omk.model.calls": "0",
        "omk.model.input_tokens": "10",
        "omk.model.output_tokens": "5",
        "omk.model.cost_usd": "0.010000",
    }
    b = junit.cases["eval-samples.json::b"]
    assert b.props["omk.score.assertions"] == "3.67" and b.props["omk.score.composite"] == "3.50"
    assert "omk.score.judge" not in b.props
    assert [(k, v) for k, v in b.properties if k.startswith("omk.assertion.")] == [
        ("omk.assertion.0.contains", "fail"),
        ("omk.assertion.1.contains", "pass"),
        ("omk.assertion.2.starts_with", "fail"),
        ("omk.assertion.3.ends_with", "pass"),
    ]
    assert len(b.failures) == 3  # two failed subtests and the item
    c = junit.cases["eval-samples.json::c"]
    assert c.props == {**common, "omk.sample_id": "c"}  # the app failed: no model call, no cost
    assert c.errors and "backend down" in c.errors[0]
    d = junit.cases["eval-samples.json::d"].props
    assert d["omk.rubric.quality"] == "missing"
    assert not any(k.startswith("omk.score.") for k in d)
    assert "omk.cost_usd" not in d and d["omk.replayed"] == "false"


def test_junit_rubric_score_and_cost_from_judge(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand, fake_judge: FakeCommand
) -> None:
    rubric = {
        "accuracy": {"criterion": "is accurate", "weight": 0.75},
        "tone": {"criterion": "is polite", "weight": 0.25},
    }
    write_sample_set(pytester, sample("r", rubric=rubric, assertions=[{"type": "contains", "value": "ok"}]))
    executor = executor_arg(fake_command.script({"r": "ok"}))
    judge = fake_judge.script({"*": judge_reply(4)})
    omk_run(executor, f"--omk-judge={judge}", "--junitxml=j.xml", "--omk-report=r.json").assert_outcomes(
        passed=1
    )
    props = parse_junit(pytester.path / "j.xml").cases["eval-samples.json::r"].props
    # judge = 0.75·4 + 0.25·4 = 4.00; composite = (5 + 4) / 2 = 4.50
    assert props["omk.rubric.accuracy"] == "4" and props["omk.rubric.tone"] == "4"
    assert props["omk.score.judge"] == "4.00" and props["omk.score.composite"] == "4.50"
    record = report_samples(load_report(pytester.path / "r.json"))["r"]
    assert record["rubric"]["accuracy"] == {
        "score": 4,
        "weight": 0.75,
        "reason": record["rubric"]["accuracy"]["reason"],
        "status": "pass",
    }
    assert "scripted judge reply" in record["rubric"]["accuracy"]["reason"]


def test_junit_properties_hook(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    write_sample_set(pytester, sample("h", assertions=[{"type": "contains", "value": "say"}]))
    pytester.makeconftest(
        """
        def pytest_omk_junit_properties(item, result, properties):
            properties.append(("omk.team", "search"))
            properties.append(("omk.hook_saw", result["sample_id"] + ":" + item.name))
            properties[:] = [(k, "redacted" if k == "omk.executor" else v) for k, v in properties if k != "omk.replayed"]
        """
    )
    omk_run("--omk-executor=echo", "--junitxml=j.xml").assert_outcomes(passed=1)
    props = parse_junit(pytester.path / "j.xml").cases["eval-samples.json::h"].props
    assert props["omk.team"] == "search"
    assert props["omk.hook_saw"] == "h:h"
    assert props["omk.executor"] == "redacted"
    assert "omk.replayed" not in props
    assert props["omk.assertion.0.contains"] == "pass"


@pytest.mark.floor("pytest")
@pytest.mark.multiprocess
def test_junit_xunit2_with_warnings_as_errors(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    write_sample_set(pytester, sample("w", assertions=[{"type": "contains", "value": "say"}]))
    result = omk_run(
        "--omk-executor=echo", "-W", "error", "-o", "junit_family=xunit2", "--junitxml=j.xml", subprocess=True
    )
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.no_fnmatch_line("*warnings summary*")
    assert "warning" not in result.stdout.lines[-1]
    props = parse_junit(pytester.path / "j.xml").cases["eval-samples.json::w"].props
    assert props["omk.sample_id"] == "w" and props["omk.score.composite"] == "5.00"


def test_json_report(pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand) -> None:
    spec = _report_fixture(pytester, fake_command)
    omk_run(executor_arg(spec), "--omk-retries=0", "--omk-report=out/report.json")
    report = load_report(pytester.path / "out" / "report.json")
    assert report["schemaVersion"] == "pytest-omk.report/v1"
    assert report["plugin"]["name"] == "pytest-omk" and report["plugin"]["version"]
    assert report["config"]["executor"] == spec and report["config"]["recordMode"] == "off"
    assert report["summary"] == {
        "samples": 4,
        "outcomes": {"passed": 1, "failed": 1, "error": 1, "skipped": 1},
        "means": EXPECTED_MEANS,
        "modelCalls": {"live": 0, "replayed": 0},  # the command asked no model through pytest-omk
        "usage": {
            # The app's own report: its tokens and cost, and no model call through pytest-omk.
            "model": {
                "calls": 0,
                "live": 0,
                "replayed": 0,
                "failed": 0,
                "inputTokens": 10,
                "outputTokens": 5,
                "costUSD": 0.03,
                "costUnknown": 0,
            },
            "judge": {
                "calls": 0,
                "live": 0,
                "replayed": 0,
                "failed": 0,
                "inputTokens": None,
                "outputTokens": None,
                "costUSD": None,
                "costUnknown": 0,
            },
        },
        "costUSD": 0.03,
        "judgeReadingsMissing": 1,
        "judgeMissingReasons": {"no judge configured": 1},
        "cutOff": 0,
        "skipReasons": {SKIPPED.removeprefix("skipped 1 (").removesuffix(")"): 1},
    }
    samples = report_samples(report)
    assert [s["sample_id"] for s in report["samples"]] == ["a", "b", "c", "d"]
    a = samples["a"]
    assert a["nodeid"] == "eval-samples.json::a" and a["file"] == "eval-samples.json"
    assert a["outcome"] == "passed"
    assert a["metadata"] == {"capability": ["greeting"], "difficulty": "easy"}
    assert [(x["index"], x["type"], x["layer"], x["weight"], x["status"]) for x in a["assertions"]] == [
        (0, "contains", "fact", 1, "pass"),
        (1, "max_length", "behavior", 1, "pass"),
        (2, "cost_max", "behavior", 1, "pass"),
    ]
    execution = dict(a["execution"])
    assert execution.pop("latencyMs") >= 0
    assert {
        k: execution[k]
        for k in ("output", "costUSD", "inputTokens", "outputTokens", "numTurns", "toolCalls", "replayed")
    } == {
        "output": "alpha answer",
        "costUSD": 0.01,
        "inputTokens": 10,
        "outputTokens": 5,
        "numTurns": 2,
        "toolCalls": None,
        "replayed": False,
    }
    b = samples["b"]
    assert b["scores"] == {"assertions": 3.67, "fact": 4.0, "behavior": 3.0, "judge": None, "composite": 3.5}
    failed = b["assertions"][2]
    assert failed["status"] == "fail" and "beta" in failed["message"] and "gamma answer" in failed["message"]
    assert samples["c"]["outcome"] == "error" and samples["c"]["execution"] is None
    assert (
        samples["d"]["rubric"]["quality"]["status"] == "missing"
        and samples["d"]["rubric"]["quality"]["score"] is None
    )
    assert samples["d"]["scores"]["composite"] is None


def test_secrets_stay_out_of_reports(
    pytester: pytest.Pytester,
    omk_run: OmkRun,
    fake_command: FakeCommand,
    fake_judge: FakeCommand,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    secret = "sk-omk-integration-SECRET-4242"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)
    write_sample_set(pytester, sample("s", rubric={"q": {"criterion": "c", "weight": 1}}))
    executor = executor_arg(fake_command.script({"s": "fine"}))
    judge = fake_judge.script({"*": judge_reply(5)})
    result = omk_run(executor, f"--omk-judge={judge}", "--junitxml=j.xml", "--omk-report=r.json", "-v")
    result.assert_outcomes(passed=1)
    for text in (
        result.stdout.str(),
        (pytester.path / "j.xml").read_text(),
        (pytester.path / "r.json").read_text(),
    ):
        assert secret not in text
    load_report(pytester.path / "r.json")


def test_replayed_calls_are_reported(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand
) -> None:
    write_sample_set(pytester, sample("s", assertions=[{"type": "contains", "value": "live"}]))
    spec = fake_command.script({"s": {"output": "live answer", "costUSD": 0.5}})
    args = (
        executor_arg(spec),
        "--omk-record-mode=new_episodes",
        # A command is an app under test: its whole answers are recorded only on request.
        "--omk-app-record=answers",
        "--omk-app-digest=version:1",
        "--omk-recordings=recordings",
        "--junitxml=j.xml",
    )
    first = omk_run(*args)
    first.stdout.fnmatch_lines(["model calls: 1 live, 0 replayed*"])
    assert fake_command.called() == ["s"]
    for log in fake_command.log_dir.iterdir():
        log.unlink()
    second = omk_run(*args, "--omk-report=r.json")
    second.assert_outcomes(passed=1)
    second.stdout.fnmatch_lines(
        ["eval-samples.json::s *passed *yes", "model calls: 0 live, 1 replayed  cost: $0.50"]
    )
    assert fake_command.called() == []
    assert parse_junit(pytester.path / "j.xml").cases["eval-samples.json::s"].props["omk.replayed"] == "true"
    assert report_samples(load_report(pytester.path / "r.json"))["s"]["execution"]["replayed"] is True


def _strip_volatile(report: dict[str, Any]) -> dict[str, Any]:
    report = json.loads(json.dumps(report))
    for volatile in ("createdAt", "startedAt", "durationS"):
        report.pop(volatile, None)
    for entry in report["samples"]:
        if entry["execution"]:
            entry["execution"].pop("latencyMs", None)
    return report


@pytest.mark.floor("pytest-xdist")
@pytest.mark.multiprocess
def test_xdist_gives_the_same_results(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("xdist")
    # Wide enough that the scores table is never fitted: how much the sample column is shortened
    # depends on the widest latency cell (85ms vs 1234ms), which differs from run to run.
    monkeypatch.setenv("COLUMNS", "250")
    spec = _report_fixture(pytester, fake_command)
    write_samples(
        pytester,
        "more/eval-samples.yaml",
        sample_set(
            *(
                sample(f"m{i}", f"item {i}", assertions=[{"type": "contains", "value": str(i % 3)}])
                for i in range(6)
            ),
            sample("trip", tripwire=True, assertions=[{"type": "contains", "value": "never"}]),
        ),
    )
    write_sample_set(
        pytester, sample("g"), requires={"env": ["OMK_TEST_NEVER_SET"]}, name="gated/eval-samples.json"
    )
    fake_command.script({**fake_command.answers, "*": {"echo": "prompt", "costUSD": 0.001}})
    common = (executor_arg(spec), "--omk-retries=0", "-p", "no:cacheprovider")
    serial = omk_run(*common, "--omk-report=serial.json", "--junitxml=serial.xml")
    parallel = omk_run(*common, "-n", "2", "--omk-report=parallel.json", "--junitxml=parallel.xml")
    assert serial.parseoutcomes() == parallel.parseoutcomes()
    assert serial.ret == parallel.ret == pytest.ExitCode.TESTS_FAILED
    assert "gw0" in parallel.stdout.str() or "2 workers" in parallel.stdout.str()
    serial_report = _strip_volatile(load_report(pytester.path / "serial.json"))
    parallel_report = _strip_volatile(load_report(pytester.path / "parallel.json"))
    assert parallel_report == serial_report
    assert serial_report["summary"]["samples"] == 12

    def section(result: pytest.RunResult) -> list[str]:
        lines = result.stdout.str().split("omk scores", 1)[1].splitlines()[1:]
        lines = lines[: next(i for i, line in enumerate(lines) if line.startswith("model calls"))]
        return [" ".join(part for part in line.split() if not part.endswith("ms")) for line in lines]

    assert section(parallel) == section(serial)

    def props(path: str) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
        junit = parse_junit(pytester.path / path)
        cases = {
            k: {n: v for n, v in c.props.items() if n != "omk.latency_ms"} for k, c in junit.cases.items()
        }
        suite = {n: v for n, v in junit.suite_properties.items() if not n.endswith("::omk.latency_ms")}
        return suite, cases

    assert props("parallel.xml") == props("serial.xml")
