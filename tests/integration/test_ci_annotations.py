"""Where a team looks: GitHub annotations at the failing check's line, GitLab's code-quality file,
and the Markdown section a bot posts on a pull request (what changed against the baseline)."""

from __future__ import annotations

import json
import re

import pytest

from tests.support import FakeCommand, OmkRun, executor_arg

YAML = """\
schemaVersion: omk.eval-sample-set/v2
samples:
  - sample_id: alpha
    prompt: say alpha
    assertions:
      - type: contains
        value: alpha
      - type: contains
        value: MUST-APPEAR
  - sample_id: beta
    prompt: say beta
    assertions:
      - type: contains
        value: beta
  - sample_id: gamma
    prompt: say gamma
    assertions:
      - type: contains
        value: gamma
    rubric:
      clarity:
        criterion: the reply is clear
        weight: 1
"""
ANNOTATION = re.compile(r"^::(error|warning|notice)( [^:]*)?::(.*)$", re.MULTILINE)


def line_of(needle: str) -> int:
    return next(i for i, line in enumerate(YAML.splitlines(), start=1) if needle in line)


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    (pytester.path / "eval-samples.yaml").write_text(YAML, encoding="utf-8")
    return pytester


def unescape(value: str) -> str:
    """A workflow command's property value as GitHub reads it."""
    for escaped, plain in (("%3A", ":"), ("%2C", ","), ("%0D", "\r"), ("%0A", "\n"), ("%25", "%")):
        value = value.replace(escaped, plain)
    return value


def workflow_commands(text: str) -> list[tuple[str, dict[str, str], str]]:
    """``(level, properties, message)`` of each workflow command printed (the message left escaped)."""
    found = []
    for level, props, message in ANNOTATION.findall(text):
        fields = {
            k: unescape(v) for k, v in (part.split("=", 1) for part in props.strip().split(",") if part)
        }
        found.append((level, fields, message))
    return found


@pytest.mark.usefixtures("project")
def test_github_annotation_at_the_failing_assertion(omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    result = omk_run("--omk-executor=echo")
    found = workflow_commands(result.stdout.str())
    errors = [(fields, message) for level, fields, message in found if level == "error"]
    assert len(errors) == 1, found
    fields, message = errors[0]
    assert fields["file"] == "eval-samples.yaml"
    assert fields["line"] == str(line_of("MUST-APPEAR") - 1)
    assert "alpha" in fields["title"] and "assertion 1: contains" in fields["title"]
    assert "MUST-APPEAR" in message


@pytest.mark.usefixtures("project")
def test_missing_evidence_is_a_warning_under_strict(omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    found = workflow_commands(omk_run("--omk-executor=echo", "--omk-strict").stdout.str())
    warnings = [fields for level, fields, _ in found if level == "warning"]
    assert [w["line"] for w in warnings] == [str(line_of("clarity:"))]


@pytest.mark.usefixtures("project")
def test_annotations_off_and_outside_github(omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch) -> None:
    assert workflow_commands(omk_run("--omk-executor=echo").stdout.str()) == []
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    assert workflow_commands(omk_run("--omk-executor=echo", "--omk-annotations=off").stdout.str()) == []


def test_annotations_are_capped_and_scrubbed(
    pytester: pytest.Pytester, omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch, fake_command: FakeCommand
) -> None:
    secret = "sk-test-abcdefghijklmnopqrstuvwxyz123456"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    samples = [
        {"sample_id": f"s{i:02d}", "prompt": "p", "assertions": [{"type": "contains", "value": "absent"}]}
        for i in range(30)
    ]
    (pytester.path / "eval-samples.json").write_text(
        json.dumps({"schemaVersion": "omk.eval-sample-set/v2", "samples": samples}, indent=2),
        encoding="utf-8",
    )
    leaked = f"key {secret}\nline two %"
    spec = fake_command.script({f"s{i:02d}": {"output": leaked} for i in range(30)})
    out = omk_run(executor_arg(spec)).stdout.str()
    found = workflow_commands(out)
    assert len([f for f in found if f[0] == "error"]) == 10
    assert any(level == "notice" and "20 more" in message for level, _, message in found)
    assert secret not in out
    # Workflow-command escaping (a newline would be %0A: tests/unit/report/test_annotations.py).
    assert all(message.endswith("line two %25'") for level, _, message in found if level == "error")


@pytest.mark.usefixtures("project")
def test_gitlab_code_quality_file(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    omk_run("--omk-executor=echo", "--omk-code-quality=gl-code-quality.json")
    issues = json.loads((pytester.path / "gl-code-quality.json").read_text(encoding="utf-8"))
    assert [i["location"] for i in issues] == [
        {"path": "eval-samples.yaml", "lines": {"begin": line_of("MUST-APPEAR") - 1}}
    ]
    [issue] = issues
    assert issue["severity"] == "major" and issue["check_name"] == "omk/contains"
    assert "MUST-APPEAR" in issue["description"] and len(issue["fingerprint"]) >= 32


PR_MARKER = "<!-- pytest-omk:pr-comment -->"


def test_markdown_pr_comment_section_against_the_baseline(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand
) -> None:
    (pytester.path / "eval-samples.yaml").write_text(YAML, encoding="utf-8")
    before = {
        "alpha": {"output": "alpha MUST-APPEAR"},
        "beta": {"output": "beta"},
        "gamma": {"output": "nothing"},
    }
    omk_run(executor_arg(fake_command.script(before)), "--omk-report=base.json")
    after = {"alpha": {"output": "alpha"}, "beta": {"output": "beta"}, "gamma": {"output": "gamma"}}
    spec = fake_command.script(after)
    omk_run(executor_arg(spec), "--omk-baseline=base.json", "--omk-markdown=summary.md")
    text = (pytester.path / "summary.md").read_text(encoding="utf-8")
    assert PR_MARKER in text
    section = text[text.index(PR_MARKER) :]
    failing, passing = section.index("Newly failing"), section.index("Newly passing")
    assert (
        failing
        < section.index("eval-samples.yaml::alpha")
        < passing
        < section.index("eval-samples.yaml::gamma")
    )
    assert "5.00 → 3.00" in section or "5.00 -> 3.00" in section  # alpha's composite delta
    assert "1 unchanged" in section  # beta
    # Stable: the same inputs give the same section, byte for byte (a bot updates one comment).
    omk_run(executor_arg(spec), "--omk-baseline=base.json", "--omk-markdown=again.md")
    again = (pytester.path / "again.md").read_text(encoding="utf-8")
    assert again[again.index(PR_MARKER) :] == section
