"""CI outputs from sample records: GitHub workflow commands, GitLab code quality, the PR section,
and the re-record diff (pure functions; the end-to-end runs are in tests/integration)."""

from __future__ import annotations

import json
from typing import Any

from pytest_omk.report.annotations import code_quality, findings, github_commands
from pytest_omk.report.answer_diff import answer_diff, markdown_section, terminal_lines
from pytest_omk.report.markdown_text import fenced
from pytest_omk.report.pr_comment import MARKER, pr_comment_section


def record(nodeid: str, **fields: Any) -> dict[str, Any]:
    return {"nodeid": nodeid, "file": nodeid.split("::")[0], "sample_id": nodeid.split("::")[1], "line": 3,
            "outcome": "failed", "assertions": [], "rubric": {}, **fields}


FAILED = record(
    "e.yaml::s1",
    assertions=[
        {"index": 0, "type": "contains", "status": "pass", "message": "", "line": 5},
        {"index": 1, "type": "regex", "status": "fail", "message": "expected a: b,\nsecond line 100%", "line": 7},
        {"index": 2, "type": "cost_max", "status": "missing", "message": "no cost reported", "line": 9},
    ],
    rubric={"clarity": {"status": "missing", "reason": "no judge configured", "line": 12}},
)
ERRORED = record("e.yaml::s2", outcome="error", error="executor failed: HTTP 500")


def test_findings_levels_and_lines() -> None:
    plain = findings([FAILED, ERRORED], strict=False)
    assert [(f.level, f.line, f.check) for f in plain] == [("error", 7, "assertion 1: regex"), ("error", 3, "sample")]
    strict = findings([FAILED], strict=True)
    assert [(f.level, f.line) for f in strict] == [("error", 7), ("warning", 9), ("warning", 12)]


def test_github_commands_escape_cap_and_scrub() -> None:
    found = findings([FAILED] * 3, strict=True)
    lines = github_commands(found, scrub=lambda t: t.replace("second", "[secret]"), limit=2)
    assert len(lines) == 5 and lines[-1].startswith("::notice title=pytest-omk::5 more")
    first = lines[0]
    assert first.startswith("::error file=e.yaml,line=7,title=e.yaml%3A%3As1 · assertion 1%3A regex::")
    assert first.endswith("expected a: b,%0A[secret] line 100%25")
    assert all("\n" not in line for line in lines)


def test_code_quality_issues() -> None:
    issues = json.loads(code_quality(findings([FAILED], strict=True), scrub=str))
    assert [(i["severity"], i["location"]["lines"]["begin"], i["check_name"]) for i in issues] == [
        ("major", 7, "omk/regex"), ("minor", 9, "omk/cost_max"), ("minor", 12, "omk/rubric")]
    assert len({i["fingerprint"] for i in issues}) == 3


def change(nodeid: str, before: str, after: str, composite: tuple[float, float]) -> dict[str, Any]:
    scores = {"composite": composite[1], "fact": None, "behavior": None, "judge": None}
    return {"nodeid": nodeid, "baselineOutcome": before, "outcome": after, "scores": scores,
            "baselineScores": {**scores, "composite": composite[0]},
            "deltas": {"composite": round(composite[1] - composite[0], 2)}}


def test_pr_section_orders_and_counts() -> None:
    baseline = {"path": "base.json", "matched": 5, "new": 1, "notRun": 0, "changed": [
        change("b.yaml::z", "passed", "failed", (5.0, 3.0)),
        change("a.yaml::y", "passed", "passed", (4.0, 4.5)),
        change("a.yaml::x", "failed", "passed", (2.0, 5.0)),
        change("a.yaml::w", "passed", "error", (5.0, 1.0)),
    ]}
    text = "\n".join(pr_comment_section({"baseline": baseline}))
    assert text.index(MARKER) < text.index("Newly failing (2)") < text.index("a.yaml::w") < text.index("b.yaml::z")
    assert text.index("b.yaml::z") < text.index("Newly passing (1)") < text.index("a.yaml::x") < text.index("Score changes (1)")
    assert "4.00 → 4.50 (+0.50)" in text and text.endswith("1 unchanged.")
    assert pr_comment_section({}) == []


def test_answer_diff_and_sections() -> None:
    assert answer_diff("a\nb\nc", "a\nB\nc") == [(" ", "a"), ("-", "b"), ("+", "B"), (" ", "c")]
    samples = [{"nodeid": "e::s", "execution": {"output": "new ```", "previousOutput": "old"}}, {"nodeid": "e::t", "execution": {"output": "x"}}]
    assert terminal_lines(samples) == ["answers changed by re-recording: 1", "  e::s"]
    section = markdown_section(samples)
    assert "````diff" in section and "-old" in section and "+new ```" in section
    assert fenced("a\x1bb") == ["```", "ab", "```"]
