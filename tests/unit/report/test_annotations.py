"""CI annotations from sample records: GitHub workflow commands and GitLab code quality."""

from __future__ import annotations

import json
from typing import Any

from pytest_omk.report.annotations import code_quality, findings, github_commands


def record(nodeid: str, **fields: Any) -> dict[str, Any]:
    return {
        "nodeid": nodeid,
        "file": nodeid.split("::")[0],
        "sample_id": nodeid.split("::")[1],
        "line": 3,
        "outcome": "failed",
        "assertions": [],
        "rubric": {},
        **fields,
    }


FAILED = record(
    "e.yaml::s1",
    assertions=[
        {"index": 0, "type": "contains", "status": "pass", "message": "", "line": 5},
        {
            "index": 1,
            "type": "regex",
            "status": "fail",
            "message": "expected a: b,\nsecond line 100%",
            "line": 7,
        },
        {"index": 2, "type": "cost_max", "status": "missing", "message": "no cost reported", "line": 9},
    ],
    rubric={"clarity": {"status": "missing", "reason": "no judge configured", "line": 12}},
)
ERRORED = record("e.yaml::s2", outcome="error", error="executor failed: HTTP 500")


def test_findings_levels_and_lines() -> None:
    plain = findings([FAILED, ERRORED], strict=False)
    assert [(f.level, f.line, f.check) for f in plain] == [
        ("error", 7, "assertion 1: regex"),
        ("error", 3, "sample"),
    ]
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
        ("major", 7, "omk/regex"),
        ("minor", 9, "omk/cost_max"),
        ("minor", 12, "omk/rubric"),
    ]
    assert len({i["fingerprint"] for i in issues}) == 3
