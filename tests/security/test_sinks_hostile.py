"""Every sink, every mode: no secret and no raw control character reaches what a user reads (issue #43).

A model output, a judge's reason and a custom check's message carry terminal escapes (ESC, a C1
CSI, BEL, BS, CR), bidi overrides and every spelling of the configured secrets (the API key, the
base URL's password, ``user:password`` and its base64 ``Basic`` form). A tampered recording's file
name carries ESC/BEL into the warnings summary. Each run writes every sink at once: the terminal
(stdout and stderr, warnings summary included), JUnit, pytest-html, the JSON, HTML and Markdown
reports and GitHub's step summary; it runs under each ``--tb`` style, ``-v`` and ``-n 2``.
"""

from __future__ import annotations

import base64
import html
import json
import re
import secrets
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support import FakeCommand, OmkRun, executor_arg, judge_reply, printed, run_pytest, write_samples

probe = pytest.mark.probe
SCHEMA = "omk.eval-sample-set/v2"
APP_ANSWERS = ("--omk-app-record=answers", "--omk-app-digest=version:1")
"""The scripted command is an app under test: its whole answers are recorded only when asked."""

RAW_CONTROLS = {
    "ESC": "\x1b",
    "C1 CSI": "\x9b",
    "BEL": "\x07",
    "BS": "\x08",
    "CR": "\r",
    "RLO": "\u202e",
    "LRI": "\u2066",
}
"""Characters that must never reach a sink raw (tab and newline are fine)."""
CONTROL_TEXT = "\x1b[2J\x1b]0;pwned\x07\x1b]52;c;cHduZWQ=\x07\x9b31m\x08\rX\u202eabc\u2066"
"""Clears the screen, sets the window title, writes the clipboard (OSC 52), moves the cursor back."""


@dataclass(frozen=True)
class Secrets:
    """The configured secrets of one run and every spelling a sink must not hold."""

    key: str
    password: str

    @property
    def basic(self) -> str:
        return base64.b64encode(f"omkuser:{self.password}".encode()).decode()

    @property
    def spellings(self) -> dict[str, str]:
        return {
            "API key": self.key,
            "URL password": self.password,
            "user:password": f"omkuser:{self.password}",
            "Basic form": self.basic,
        }

    def echoed(self) -> str:
        """What a hostile model prints: escapes, a fake pytest line and every secret."""
        return (
            f"{CONTROL_TEXT} 42 passed key={self.key} pw={self.password} "
            f"userinfo=omkuser:{self.password} basic={self.basic}"
        )


@pytest.fixture
def run_secrets(monkeypatch: pytest.MonkeyPatch) -> Secrets:
    configured = Secrets(f"sk-probe-{secrets.token_hex(10)}", f"pw-probe-{secrets.token_hex(10)}")
    monkeypatch.setenv("OPENAI_API_KEY", configured.key)
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://omkuser:{configured.password}@127.0.0.1:9/v1")
    return configured


def hostile_samples(
    pytester: pytest.Pytester, fake_command: FakeCommand, fake_judge: FakeCommand, echoed: str
) -> tuple[str, str]:
    """Samples whose output, custom-check message, judge reason and xfail reason carry ``echoed``."""
    (pytester.path / "check.py").write_text(
        "def check(output, context):\n    return {'pass': False, 'message': 'the check saw ' + output}\n",
        encoding="utf-8",
    )
    write_samples(
        pytester,
        "eval-samples.json",
        {
            "schemaVersion": SCHEMA,
            "samples": [
                {
                    "sample_id": "hostile",
                    "prompt": "Say something.",
                    "assertions": [
                        {"type": "custom", "fn": "check.py"},
                        {"type": "contains", "value": "never said"},
                    ],
                    "rubric": {"clarity": {"criterion": "clear", "weight": 1}},
                },
                # An expected failure: its reason (the xfail line, JUnit's skipped message) quotes the output.
                {
                    "sample_id": "tripwire",
                    "prompt": "Say something.",
                    "tripwire": True,
                    "assertions": [{"type": "contains", "value": "never said"}],
                },
            ],
        },
    )
    executor = fake_command.script({"*": f"model said {echoed}"})
    judge = fake_judge.script({"*": judge_reply(1, f"judge says {echoed}")})
    return executor_arg(executor), f"--omk-judge={judge}"


def tamper_a_recording_name(recordings: Path) -> Path:
    """Rename the executor's recording so its name holds ESC and BEL, and break its JSON."""
    recorded = sorted((recordings / "execute").rglob("*.json"))[0]
    hostile = recorded.with_name(f"\x1b]0;pwned\x07-{recorded.name.rsplit('-', 1)[1]}")
    recorded.rename(hostile)
    hostile.write_text("{not json", encoding="utf-8")
    return hostile


# --- reading each sink ------------------------------------------------------------------------------


def junit_texts(path: Path) -> Iterator[str]:
    for element in ET.parse(path).getroot().iter():
        yield from element.attrib.values()
        if element.text:
            yield element.text


def pytest_html_texts(path: Path) -> Iterator[str]:
    """Every string of pytest-html's data blob (what its page renders), decoded."""
    page = path.read_text(encoding="utf-8")
    match = re.search(r'data-jsonblob="([^"]*)"', page)
    assert match, "pytest-html wrote no data blob"
    yield from _strings(json.loads(html.unescape(match.group(1))))
    yield page


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def problems_in(sink: str, texts: Iterator[str] | list[str], configured: Secrets) -> list[str]:
    found = []
    for text in texts:
        found += [f"{sink}: raw {name}" for name, char in RAW_CONTROLS.items() if char in text]
        found += [f"{sink}: {name}" for name, value in configured.spellings.items() if value in text]
    return sorted(set(found))


def in_process(
    pytester: pytest.Pytester, capfd: pytest.CaptureFixture[str], *args: str
) -> tuple[pytest.RunResult, str]:
    """A run in this process and everything it printed (:func:`printed`). No claim here needs a
    fresh interpreter; under ``-n 2`` the controller is this process and only the workers are new."""
    result = run_pytest(pytester, *args)
    return result, printed(result, capfd)


MODES = {
    "tb-auto": ("--tb=auto",),
    "tb-long": ("--tb=long",),
    "tb-short": ("--tb=short",),
    "tb-line": ("--tb=line",),
    "tb-native": ("--tb=native",),
    "tb-no": ("--tb=no",),
    "verbose-line": ("-v", "--tb=line"),
}
XDIST = ("-n", "2", "--tb=line")
"""The one mode that starts processes (two workers): the only one marked ``multiprocess``."""


@probe("terminal")
@pytest.mark.parametrize(
    "mode",
    [
        *(pytest.param(args, id=name) for name, args in MODES.items()),
        pytest.param(XDIST, id="xdist-line", marks=pytest.mark.multiprocess),
    ],
)
def test_no_sink_shows_a_secret_or_a_raw_control_under_any_mode(
    pytester: pytest.Pytester,
    omk_run: OmkRun,
    fake_command: FakeCommand,
    fake_judge: FakeCommand,
    run_secrets: Secrets,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    mode: tuple[str, ...],
) -> None:
    executor, judge = hostile_samples(pytester, fake_command, fake_judge, run_secrets.echoed())
    record = ("--omk-record-mode=new_episodes", "--omk-recordings=recs", *APP_ANSWERS)
    first = omk_run(executor, judge, *record)
    assert first.ret == pytest.ExitCode.TESTS_FAILED, first.stdout.str()
    tamper_a_recording_name(pytester.path / "recs")
    summary = pytester.path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))

    args = (
        "--color=no",
        executor,
        judge,
        *record,
        "-rA",
        *mode,
        "--junitxml=junit.xml",
        "--html=page.html",
        "--self-contained-html",
        "--omk-report=report.json",
        "--omk-html=report.html",
        "--omk-markdown=summary.md",
    )
    result, terminal = in_process(pytester, capfd, *args)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, terminal
    assert "ignores recording" in terminal  # the tampered recording was reported (warnings summary)
    sinks = {
        "terminal": [terminal],
        "JUnit": list(junit_texts(pytester.path / "junit.xml")),
        "pytest-html": list(pytest_html_texts(pytester.path / "page.html")),
        "JSON report": [(pytester.path / "report.json").read_text(encoding="utf-8")],
        "HTML report": [(pytester.path / "report.html").read_text(encoding="utf-8")],
        "Markdown": [(pytester.path / "summary.md").read_text(encoding="utf-8")],
        "step summary": [summary.read_text(encoding="utf-8")],
    }
    # The hostile text did reach every report (escaped), so the checks below are not vacuous.
    for name in ("JUnit", "pytest-html", "JSON report", "HTML report"):
        assert any("42 passed" in text for text in sinks[name]), name
    problems = [p for sink, texts in sinks.items() for p in problems_in(sink, texts, run_secrets)]
    assert not problems, problems


# --- one finding each -------------------------------------------------------------------------------


@probe("terminal")
def test_tb_line_shows_judge_reasons_and_check_messages_escaped_and_scrubbed(
    pytester: pytest.Pytester,
    fake_command: FakeCommand,
    fake_judge: FakeCommand,
    run_secrets: Secrets,
    capfd: pytest.CaptureFixture[str],
) -> None:
    executor, judge = hostile_samples(pytester, fake_command, fake_judge, run_secrets.echoed())
    result, out = in_process(
        pytester,
        capfd,
        "--color=no",
        executor,
        judge,
        "--omk-record-mode=off",
        "--tb=line",
        "-rA",
        "--junitxml=junit.xml",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    problems = problems_in("terminal", [out], run_secrets)
    problems += problems_in("JUnit", list(junit_texts(pytester.path / "junit.xml")), run_secrets)
    assert not problems, problems
    # Both reasons are printed under --tb=line, visibly escaped.
    assert "the check saw model said \\x1b[2J\\x1b]0;pwned\\x07" in out
    assert "judge says \\x1b[2J" in out


@probe("secrets")
def test_pytest_html_extras_carry_no_secret(
    pytester: pytest.Pytester,
    fake_command: FakeCommand,
    fake_judge: FakeCommand,
    run_secrets: Secrets,
) -> None:
    echoed = f"key={run_secrets.key} pw={run_secrets.password} basic={run_secrets.basic}"
    executor, judge = hostile_samples(pytester, fake_command, fake_judge, echoed)
    result = run_pytest(
        pytester,
        "--color=no",
        executor,
        judge,
        "--omk-record-mode=off",
        "--html=page.html",
        "--self-contained-html",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    texts = list(pytest_html_texts(pytester.path / "page.html"))
    assert any('class="omk"' in text for text in texts), "the extras are on the page"
    leaks = [name for name, value in run_secrets.spellings.items() if any(value in text for text in texts)]
    assert not leaks, leaks


@probe("terminal")
@pytest.mark.parametrize("mode", ["new_episodes", "once"])
def test_recording_warnings_escape_control_characters_in_local_modes(
    pytester: pytest.Pytester,
    omk_run: OmkRun,
    fake_command: FakeCommand,
    capfd: pytest.CaptureFixture[str],
    mode: str,
) -> None:
    write_samples(
        pytester,
        "eval-samples.json",
        {
            "schemaVersion": SCHEMA,
            "samples": [
                {"sample_id": "s", "prompt": "p", "assertions": [{"type": "contains", "value": "fine"}]},
            ],
        },
    )
    executor = executor_arg(fake_command.script({"*": "fine"}))
    record = ("--omk-judge=none", "--omk-recordings=recs", *APP_ANSWERS)
    assert omk_run(executor, *record, "--omk-record-mode=new_episodes").ret == 0
    hostile = tamper_a_recording_name(pytester.path / "recs")
    _, out = in_process(pytester, capfd, "--color=no", executor, *record, f"--omk-record-mode={mode}", "-rA")
    assert "ignores recording" in out, out
    assert "\x1b" not in out and "\x07" not in out and hostile.name not in out
    assert "\\x1b]0;pwned\\x07" in out  # named, visibly


@probe("terminal")
def test_a_bidi_override_never_reaches_html_or_markdown(
    pytester: pytest.Pytester, fake_command: FakeCommand, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Shown raw, the override makes "~ fr- mr" read "rm -rf ~".
    shown = "\u202e~ fr- mr"
    write_samples(
        pytester,
        "eval-samples.json",
        {
            "schemaVersion": SCHEMA,
            "samples": [
                {"sample_id": "bidi", "prompt": "p", "assertions": [{"type": "equals", "value": "ls"}]},
            ],
        },
    )
    summary = pytester.path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = run_pytest(
        pytester,
        "--color=no",
        executor_arg(fake_command.script({"*": shown})),
        "--omk-judge=none",
        "--omk-record-mode=off",
        "--omk-html=report.html",
        "--omk-markdown=summary.md",
        "--html=page.html",
        "--self-contained-html",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    pages = {
        "HTML report": (pytester.path / "report.html").read_text(encoding="utf-8"),
        "Markdown": (pytester.path / "summary.md").read_text(encoding="utf-8"),
        "step summary": summary.read_text(encoding="utf-8"),
        "pytest-html": "\n".join(pytest_html_texts(pytester.path / "page.html")),
    }
    assert {name: "\u202e" in text for name, text in pages.items()} == dict.fromkeys(pages, False)
    # Made visible, not dropped: a reader sees that the model emitted an override.
    assert all("u202e" in text for text in pages.values()), pages
