"""End to end: ``--omk-changed`` runs only the samples whose inputs changed since the baseline and
carries the others from it. Calls are counted by the executor (one line per call). An app's
samples are run again when the app's code changed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.support import OmkRun, load_report, report_samples, sample, write_sample_set

CONFTEST = """
import pathlib

HERE = pathlib.Path(__file__).parent


def answer(request):
    with (HERE / "calls.log").open("a", encoding="utf-8") as log:
        log.write(request.sample_id + "\\n")
    return "alpha beta" if "good" in request.prompt else "gamma"


def pytest_omk_make_executor(config):
    return answer
"""

CHECK = [{"type": "contains", "value": "alpha"}]


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(CONFTEST)
    write_sample_set(
        pytester,
        sample("a", "good one", assertions=CHECK),
        sample("b", "good two", assertions=CHECK),
        sample("c", "bad three", assertions=CHECK),
    )
    return pytester


def calls(pytester: pytest.Pytester) -> list[str]:
    log = pytester.path / "calls.log"
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def test_changed_runs_only_the_edited_sample(project: pytest.Pytester, omk_run: OmkRun) -> None:
    base = omk_run("--omk-report", "base.json")
    assert base.ret == 1  # c fails
    assert sorted(calls(project)) == ["a", "b", "c"]
    digests = {s["sample_id"]: s["inputDigest"] for s in load_report(project.path / "base.json")["samples"]}
    assert len(set(digests.values())) == 3

    # Edit one sample: b's prompt changes (and now fails).
    write_sample_set(
        project,
        sample("a", "good one", assertions=CHECK),
        sample("b", "bad two", assertions=CHECK),
        sample("c", "bad three", assertions=CHECK),
    )
    (project.path / "calls.log").unlink()
    result = omk_run("--omk-baseline", "base.json", "--omk-changed", "--omk-report", "new.json")
    assert calls(project) == ["b"]
    samples = report_samples(load_report(Path(project.path / "new.json")))
    assert samples["a"]["carried"] is True and samples["c"]["carried"] is True
    assert samples["b"]["carried"] is False
    # Carried samples keep the baseline's outcome and scores: the summary covers the whole set.
    assert samples["a"]["outcome"] == "passed" and samples["a"]["scores"]["assertions"] == 5
    assert samples["c"]["outcome"] == "failed"
    assert samples["b"]["outcome"] == "failed"
    assert samples["b"]["inputDigest"] != digests["b"]
    assert samples["a"]["inputDigest"] == digests["a"]
    assert result.ret == 1
    out = result.stdout.str()
    assert "carried" in out
    assert "2 carried from base.json" in out


def test_changed_reruns_everything_when_the_system_prompt_changes(
    project: pytest.Pytester, omk_run: OmkRun
) -> None:
    (project.path / "system.md").write_text("Be brief.", encoding="utf-8")
    assert omk_run("--omk-system", "system.md", "--omk-report", "base.json").ret == 1
    (project.path / "calls.log").unlink()
    (project.path / "system.md").write_text("Be thorough.", encoding="utf-8")
    omk_run("--omk-system", "system.md", "--omk-baseline", "base.json", "--omk-changed")
    assert sorted(calls(project)) == ["a", "b", "c"]


def test_changed_needs_a_baseline(project: pytest.Pytester, omk_run: OmkRun) -> None:
    result = omk_run("--omk-changed")
    assert result.ret == 4
    assert "--omk-changed needs --omk-baseline" in result.stderr.str()


def test_changed_without_digests_in_the_baseline_runs_everything(
    project: pytest.Pytester, omk_run: OmkRun
) -> None:
    assert omk_run("--omk-report", "base.json").ret == 1
    document = json.loads((project.path / "base.json").read_text(encoding="utf-8"))
    for entry in document["samples"]:
        entry.pop("inputDigest", None)
    (project.path / "base.json").write_text(json.dumps(document), encoding="utf-8")
    (project.path / "calls.log").unlink()
    omk_run("--omk-baseline", "base.json", "--omk-changed")
    assert sorted(calls(project)) == ["a", "b", "c"]


def test_nothing_changed_runs_nothing_and_passes(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    pytester.makeconftest(CONFTEST)
    write_sample_set(
        pytester, sample("a", "good one", assertions=CHECK), sample("b", "good two", assertions=CHECK)
    )
    assert omk_run("--omk-report", "base.json").ret == 0
    (pytester.path / "calls.log").unlink()
    result = omk_run("--omk-baseline", "base.json", "--omk-changed", "--omk-report", "new.json")
    assert not (pytester.path / "calls.log").exists()
    # Every sample carried: pytest ran no test, and the run is green (not "no tests collected").
    assert result.ret == 0
    assert "2 carried from base.json" in result.stdout.str()
    assert load_report(pytester.path / "new.json")["summary"]["outcomes"] == {"passed": 2}


# --- an app under test: its module's code is in the digest ---------------------------------------

APP_CHECK = [{"type": "contains", "value": "alpha"}]


def write_module(pytester: pytest.Pytester, answer: str) -> None:
    """``myapp.py`` answering ``answer`` (answers differ in length: no stale bytecode)."""
    text = f"def answer(request):\n    return {answer!r}\n"
    (pytester.path / "myapp.py").write_text(text, encoding="utf-8")


def app_with_a_baseline(
    pytester: pytest.Pytester, omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch
) -> tuple[str, ...]:
    """An app (``myapp.py`` answering "alpha") whose one sample passed into ``base.json``; its
    executor arguments. No bytecode is written: the module's next version must be read afresh."""
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    pytester.makeini("[pytest]\npythonpath = .\n")
    write_sample_set(pytester, sample("a", "question", assertions=APP_CHECK))
    write_module(pytester, "alpha")
    app = ("--omk-executor", "python:myapp:answer")
    omk_run(*app, "--omk-report", "base.json").assert_outcomes(passed=1)
    return app


def test_changed_runs_an_app_sample_again_after_the_app_code_changed(
    pytester: pytest.Pytester, omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = app_with_a_baseline(pytester, omk_run, monkeypatch)
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
    app = app_with_a_baseline(pytester, omk_run, monkeypatch)
    result = omk_run(*app, "--omk-baseline", "base.json", "--omk-changed", "--omk-report", "new.json")
    assert report_samples(load_report(pytester.path / "new.json"))["a"]["carried"] is True
    assert "1 carried from base.json" in result.stdout.str()


def test_the_header_names_the_declared_app_digest(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    pytester.makeini("[pytest]\npythonpath = .\n")
    write_sample_set(pytester, sample("a", "question", assertions=APP_CHECK))
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
