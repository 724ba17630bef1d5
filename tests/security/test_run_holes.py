"""Whole runs against hostile samples, judges, commands and checks (issue #15).

Each test is one hole the hostile review found; each failed before the fix. They drive pytest with
``pytester`` against the project's fakes (a scripted command, the loopback fake model).
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.helpers import processes_running
from tests.support import (
    FakeCommand,
    OmkRun,
    executor_arg,
    load_report,
    parse_junit,
    printed,
    report_samples,
    run_pytest,
    write_samples,
)

probe = pytest.mark.probe
SCHEMA = "omk.eval-sample-set/v2"


def doc(*samples: dict[str, Any]) -> dict[str, Any]:
    return {"schemaVersion": SCHEMA, "samples": list(samples)}


# --- the judge ------------------------------------------------------------------------------------


@probe("judge failure")
@pytest.mark.parametrize(
    "reply", ["", "I would say four.", '{"score": 9, "reason": "r"}', '{"score": 0, "reason": "r"}']
)
def test_a_broken_judge_never_turns_a_rubric_only_sample_green(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand, fake_judge: FakeCommand, reply: str
) -> None:
    write_samples(
        pytester,
        "eval-samples.json",
        doc(
            {
                "sample_id": "rubric-only",
                "prompt": "Explain.",
                "rubric": {"clarity": {"criterion": "clear", "weight": 1}},
            },
        ),
    )
    executor = fake_command.script({"*": "An explanation."})
    judge = fake_judge.script({"*": {"output": reply}})
    result = omk_run(executor_arg(executor), f"--omk-judge={judge}", "--omk-report=r.json")
    result.assert_outcomes(errors=1)
    # A blank reply already fails the judge's call (the command protocol: no model output); the
    # others are replies the judge cannot use. Both name the dimension.
    result.stdout.re_match_lines([r".*(could not score|the judge call for) rubric dimension 'clarity'.*"])
    assert report_samples(load_report(pytester.path / "r.json"))["rubric-only"]["outcome"] == "error"


# --- custom checks --------------------------------------------------------------------------------


@pytest.mark.multiprocess
@probe("custom check")
@pytest.mark.parametrize(
    "body",
    [
        "import os\nos._exit(0)\n",
        "import sys\nsys.exit(0)\n",
        "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n",
        "def check(output, context):\n    import os\n    os._exit(0)\n",
    ],
    ids=["os-exit-at-import", "sys-exit", "crash", "os-exit-in-check"],
)
def test_a_custom_check_cannot_end_pytest(
    pytester: pytest.Pytester, fake_command: FakeCommand, body: str
) -> None:
    (pytester.path / "evil_check.py").write_text(body, encoding="utf-8")
    write_samples(
        pytester,
        "eval-samples.json",
        doc(
            {"sample_id": "evil", "prompt": "p", "assertions": [{"type": "custom", "fn": "evil_check.py"}]},
            {"sample_id": "after", "prompt": "p", "assertions": [{"type": "contains", "value": "fine"}]},
        ),
    )
    executor = fake_command.script({"*": "fine"})
    result = run_pytest(
        pytester,
        executor_arg(executor),
        "--omk-judge=none",
        "--omk-record-mode=off",
        "--omk-report=r.json",
        "--junitxml=j.xml",
        subprocess=True,
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    samples = report_samples(load_report(pytester.path / "r.json"))
    assert {k: v["outcome"] for k, v in samples.items()} == {"evil": "failed", "after": "passed"}
    assert parse_junit(pytester.path / "j.xml").cases


@probe("path escape")
def test_a_custom_check_outside_the_sample_directory_is_refused(
    pytester: pytest.Pytester,
    omk_run: OmkRun,
    fake_command: FakeCommand,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    outside = tmp_path_factory.mktemp("elsewhere") / "check.py"
    outside.write_text("def check(output, context):\n    return True\n", encoding="utf-8")
    (pytester.path / "samples").mkdir()
    write_samples(
        pytester,
        "samples/eval-samples.json",
        doc(
            {
                "sample_id": "s",
                "prompt": "p",
                "assertions": [{"type": "custom", "fn": os.path.relpath(outside, pytester.path / "samples")}],
            },
        ),
    )
    result = omk_run(executor_arg(fake_command.script({"*": "x"})), "--omk-judge=none", "-rA")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*leads outside the sample file's directory*"])


# --- command executor -----------------------------------------------------------------------------


@probe("process cleanup")
def test_a_command_timeout_with_an_escaped_child_is_not_retried(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    runs = pytester.path / "runs.log"
    # The child leaves the process group (setsid) and keeps stdout open.
    script = f"echo run >> {shlex.quote(str(runs))}; setsid sleep 41.5 & sleep 41.5"
    write_samples(pytester, "eval-samples.json", doc({"sample_id": "slow", "prompt": "p"}))
    result = omk_run(
        f"--omk-executor=command:sh -c {shlex.quote(script)}",
        "--omk-judge=none",
        "--omk-timeout=2",
        "--omk-retries=3",
    )
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*timed out after 2s*"])
    assert runs.read_text().split() == ["run"]  # one attempt, never retried
    assert not processes_running("sleep 41.5")


# --- terminal and caps ----------------------------------------------------------------------------


@probe("terminal")
@pytest.mark.parametrize("evil", ["\x1b[2K\rPASSED", "\x1b]0;title\x07", "a\rb", "\u202eabc"])
def test_control_characters_in_ids_and_messages_never_reach_the_terminal(
    pytester: pytest.Pytester, fake_command: FakeCommand, capfd: pytest.CaptureFixture[str], evil: str
) -> None:
    write_samples(
        pytester,
        "eval-samples.json",
        doc(
            {
                "sample_id": f"id{evil}",
                "prompt": "p",
                "assertions": [{"type": "contains", "value": f"want{evil}"}],
            },
        ),
    )
    executor = fake_command.script({"*": f"got{evil}"})
    result = run_pytest(
        pytester,
        executor_arg(executor),
        "--omk-judge=none",
        "--omk-record-mode=off",
        "-v",
        "-rA",
    )
    out = printed(result, capfd)  # in process: no claim here needs a fresh interpreter
    controls = [c for c in evil if not c.isprintable()]
    assert evil not in out and not [c for c in controls if c in out]
    assert "want" in out


@probe("check cap")
def test_a_sample_with_too_many_rubric_dimensions_is_a_collection_error(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand
) -> None:
    rubric = {f"d{i}": {"criterion": f"c{i}", "weight": 0.0001} for i in range(10_000)}
    write_samples(pytester, "eval-samples.json", doc({"sample_id": "huge", "prompt": "p", "rubric": rubric}))
    result = omk_run(executor_arg(fake_command.script({"*": "x"})), "--omk-judge=none")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*sample 'huge' has 10000 assertions and rubric dimensions; at most 200*"])
    assert (
        omk_run(
            executor_arg(fake_command.script({"*": "x"})),
            "--omk-judge=none",
            "--omk-max-checks=10000",
            "--co",
        ).ret
        == 0
    )


# --- the trust model is written down ----------------------------------------------------------------


@probe("documentation")
def test_the_trust_model_is_documented_and_linked() -> None:
    root = Path(__file__).resolve().parents[2]
    page = (root / "docs" / "security.md").read_text(encoding="utf-8")
    assert "docs/security.md" in (root / "README.md").read_text(encoding="utf-8")
    for must in ("conftest.py", "preflight", "custom", "reviewer", "hostile"):
        assert must in page, must
    sources = _security_tests(root)  # read once: every test file of the suite
    for test in _tests_named(page):
        assert test in sources, f"docs/security.md names {test}, which does not exist"


def _tests_named(page: str) -> list[str]:
    import re

    return sorted(set(re.findall(r"`(test_[a-z0-9_]+)`", page)))


def _security_tests(root: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in (root / "tests").rglob("test_*.py"))
