"""Re-recording is reviewed: a run that replaces a recorded answer says which samples' answers
changed, and the HTML and Markdown reports show the old and the new answer as a diff."""

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

OLD = "The capital of France is Paris.\nIt lies on the Seine."
NEW = "The capital of France is Lyon.\nIt lies on the Seine."


WHOLE = ("--omk-app-record=answers", "--omk-app-digest=version:1")
"""The fake command stands in for a model: its whole answers are recorded (a command is an app,
whose answers are recorded only on request)."""


@pytest.fixture
def recorded(pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand) -> None:
    write_sample_set(
        pytester, sample("capital", "capital?"), sample("steady", "steady?"), sample("third", "third?")
    )
    answers = {"capital": {"output": OLD}, "steady": {"output": "same"}, "third": {"output": "same too"}}
    omk_run(
        executor_arg(fake_command.script(answers)), "--omk-record-mode=all", "--omk-recordings=rec", *WHOLE
    )


@pytest.mark.usefixtures("recorded")
@pytest.mark.parametrize("mode", ["all", "rewrite"])
def test_a_changed_answer_is_listed_with_its_diff(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand, mode: str
) -> None:
    answers = {"capital": {"output": NEW}, "steady": {"output": "same"}, "third": {"output": "same too"}}
    result = omk_run(
        executor_arg(fake_command.script(answers)),
        f"--omk-record-mode={mode}",
        "--omk-recordings=rec",
        *WHOLE,
        "--omk-report=r.json",
        "--omk-html=r.html",
        "--omk-markdown=r.md",
    )
    out = result.stdout.str()
    result.stdout.fnmatch_lines(["answers changed by re-recording: 1", "  eval-samples.json::capital"])
    assert "eval-samples.json::steady" not in out.split("answers changed by re-recording")[1].split("\n\n")[0]

    samples = report_samples(load_report(pytester.path / "r.json"))
    assert samples["capital"]["execution"]["previousOutput"] == OLD
    assert "previousOutput" not in samples["steady"]["execution"]

    markdown = (pytester.path / "r.md").read_text(encoding="utf-8")
    assert "Answers changed by re-recording (1)" in markdown
    assert "-The capital of France is Paris." in markdown and "+The capital of France is Lyon." in markdown
    assert "steady" not in markdown.split("Answers changed by re-recording")[1]

    html = (pytester.path / "r.html").read_text(encoding="utf-8")
    assert '<del class="diff">The capital of France is Paris.</del>' in html
    assert '<ins class="diff">The capital of France is Lyon.</ins>' in html


@pytest.mark.usefixtures("recorded")
def test_the_same_answers_again_list_nothing(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand
) -> None:
    answers = {"capital": {"output": OLD}, "steady": {"output": "same"}, "third": {"output": "same too"}}
    result = omk_run(
        executor_arg(fake_command.script(answers)),
        "--omk-record-mode=all",
        "--omk-recordings=rec",
        *WHOLE,
        "--omk-report=r.json",
    )
    assert "answers changed by re-recording" not in result.stdout.str()
    assert all(
        "previousOutput" not in s["execution"] for s in load_report(pytester.path / "r.json")["samples"]
    )
