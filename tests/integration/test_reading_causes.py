"""Missing readings carry a cause code end to end: into the JSON report's entries and the summary's
grouping of missing judge readings; and a report that could not be written is the red line."""

from __future__ import annotations

import pytest

from tests.support import (
    FakeCommand,
    OmkRun,
    executor_arg,
    load_report,
    report_samples,
    sample,
    write_sample_set,
)


def test_causes_reach_the_report_and_group_the_summary(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand, fake_judge: FakeCommand
) -> None:
    rubric = {
        "quality": {"criterion": "answers well", "weight": 0.5},
        "tone": {"criterion": "polite", "weight": 0.5},
    }
    assertions = [
        {"type": "contains", "value": "answer"},
        {"type": "tools_called", "values": ["Bash"]},  # the fake executor reports no trace
    ]
    write_sample_set(pytester, sample("s", rubric=rubric, assertions=assertions))
    executor = executor_arg(fake_command.script({"s": "the answer"}))
    # A reply that is no JSON: a missing reading whose message says so, grouped by its cause.
    judge = f"--omk-judge={fake_judge.script({'*': {'output': 'not json at all'}})}"
    result = omk_run(executor, judge, "-o", "omk_judge_failure=skip", "--omk-report", "r.json")
    result.stdout.fnmatch_lines(["judge readings missing: 2 (2 × unusable judge reply)"])
    report = load_report(pytester.path / "r.json")  # validated against the generated schema
    record = report_samples(report)["s"]
    assert [entry.get("cause") for entry in record["assertions"]] == [None, "no-trace"]
    assert "cause" not in record["assertions"][0]
    assert {name: entry["cause"] for name, entry in record["rubric"].items()} == {
        "quality": "judge-reply",
        "tone": "judge-reply",
    }
    assert record["rubric"]["quality"]["reason"] == "judge reply is not JSON (the reply: 'not json at all')"
    # The tool check's missing reading is not the judge's: it is not counted.
    assert report["summary"]["judgeReadingsMissing"] == 2
    assert report["summary"]["judgeMissingReasons"] == {"unusable judge reply": 2}


def test_an_unwritable_report_is_the_red_line(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    write_sample_set(pytester, sample("s", assertions=[{"type": "contains", "value": "say"}]))
    pytester.path.joinpath("blocker").write_text("a file, not a directory", encoding="utf-8")
    result = omk_run(
        "--omk-executor=echo", "--color=yes", "--omk-html=blocker/r.html", "--omk-markdown=out/summary.md"
    )
    red = "\x1b[31m"
    failed = [line for line in result.stdout.lines if "cannot write the HTML report" in line]
    written = [line for line in result.stdout.lines if "Markdown summary written to" in line]
    assert len(failed) == 1 and red in failed[0]
    assert len(written) == 1 and red not in written[0]
