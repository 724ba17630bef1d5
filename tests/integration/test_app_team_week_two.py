"""An app team's second week (issue 51): ``--omk-changed`` sees the app's code, a teammate
without a key replays, ``rewrite`` keeps other servers' and models' calls of an app."""

from __future__ import annotations

import sys

import pytest

from tests.support import OmkRun, load_report, report_samples, sample, write_sample_set

CHECK = [{"type": "contains", "value": "alpha"}]


def write_module(pytester: pytest.Pytester, answer: str) -> None:
    """``myapp.py`` answering ``answer`` (answers differ in length: no stale bytecode)."""
    text = f"def answer(request):\n    return {answer!r}\n"
    (pytester.path / "myapp.py").write_text(text, encoding="utf-8")


def test_changed_runs_an_app_sample_again_after_the_app_code_changed(
    pytester: pytest.Pytester, omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    pytester.makeini("[pytest]\npythonpath = .\n")
    write_sample_set(pytester, sample("a", "question", assertions=CHECK))
    write_module(pytester, "alpha")
    app = ("--omk-executor", "python:myapp:answer")
    omk_run(*app, "--omk-report", "base.json").assert_outcomes(passed=1)
    write_module(pytester, "gamma, not the first letter")
    sys.modules.pop("myapp", None)
    result = omk_run(*app, "--omk-baseline", "base.json", "--omk-changed", "--omk-report", "new.json")
    assert result.ret == 1
    record = report_samples(load_report(pytester.path / "new.json"))["a"]
    assert record["carried"] is False and record["outcome"] == "failed"
    result.stdout.fnmatch_lines(["omk: --omk-changed digests the app's module file*"])


def test_changed_still_carries_an_app_sample_whose_code_did_not_change(
    pytester: pytest.Pytester, omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    pytester.makeini("[pytest]\npythonpath = .\n")
    write_sample_set(pytester, sample("a", "question", assertions=CHECK))
    write_module(pytester, "alpha")
    app = ("--omk-executor", "python:myapp:answer")
    omk_run(*app, "--omk-report", "base.json").assert_outcomes(passed=1)
    result = omk_run(*app, "--omk-baseline", "base.json", "--omk-changed", "--omk-report", "new.json")
    assert report_samples(load_report(pytester.path / "new.json"))["a"]["carried"] is True
    assert "1 carried from base.json" in result.stdout.str()


def test_the_header_names_the_declared_app_digest(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    pytester.makeini("[pytest]\npythonpath = .\n")
    write_sample_set(pytester, sample("a", "question", assertions=CHECK))
    write_module(pytester, "alpha")
    omk_run("--omk-executor", "python:myapp:answer", "--omk-report", "base.json")
    result = omk_run(
        "--omk-executor",
        "python:myapp:answer",
        "--omk-app-digest",
        "myapp.py",
        "--omk-baseline",
        "base.json",
        "--omk-changed",
    )
    result.stdout.fnmatch_lines(["omk: --omk-changed digests the app as myapp.py"])
