"""The format owner's real sample files (omk-semantics.md §15), collected and run end to end.

Every valid v2 file collects with one item per sample; each runs against the fake command executor
scripted with answers that satisfy its assertions (no judge: rubric dimensions read as missing);
``test/fixtures/code-review`` and ``test/fixtures/mcp-observation`` also run with failing answers,
graded against scores computed by hand with the formulas of omk-semantics.md §11.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support import FakeCommand, OmkRun, executor_arg, load_report, parse_junit, report_samples
from tests.support.wrapped import unwrapped

V2_FILES = (
    "examples/agent-runtime/eval-samples.json",
    "examples/custom-executor/eval-samples.json",
    "examples/skill-map-showcase/skills/release-readiness/.omk/eval-samples.json",
    "test/fixtures/agent-eval/control-experiments/artifact-injection.eval-samples.json",
    "test/fixtures/agent-eval/control-experiments/assertion-discrimination.eval-samples.json",
    "test/fixtures/agent-eval/control-experiments/env-isolation.eval-samples.json",
    "test/fixtures/code-review/eval-samples.json",
    "test/fixtures/custom-executor/eval-samples.json",
    "test/fixtures/mcp-observation/eval-samples.json",
    "test/fixtures/multi-skills/skills/classifier/.omk/eval-samples.json",
    "test/fixtures/multi-skills/skills/summarizer/.omk/eval-samples.json",
    "test/fixtures/multi-skills/skills/translator/.omk/eval-samples.json",
)
NOT_SAMPLE_FILES = ("gold/", "scoring-equivalence-v1.json")

_RUNTIME_TRACE: dict[str, Any] = {
    "output": "ARTIFACT_OK ANALYSIS_DONE RUNTIME:OMK_RUNTIME_CODE_REVIEW_7F3D|LINES:3",
    "numTurns": 4,
    "toolCalls": [
        {
            "tool": "Bash",
            "input": {"command": "pwd && wc -l skills/runtime-context-check.md"},
            "output": "3",
            "success": True,
        },
        {
            "tool": "Read",
            "input": {"file_path": "./skills/runtime-context-check.md"},
            "output": "OMK_RUNTIME_CODE_REVIEW_7F3D\nsecond\nthird",
            "success": True,
        },
    ],
}
_SAVE_CONFIRMED: dict[str, Any] = {
    "output": "记录好了。",
    "numTurns": 2,
    "toolCalls": [
        {
            "tool": "save_observation",
            "input": {"summary": "退款期限是 30 天", "confirmedByUser": True},
            "output": "ok",
            "success": True,
        }
    ],
}
_NO_TOOLS: dict[str, Any] = {"output": "要记录什么呢？", "numTurns": 1, "toolCalls": []}

# Answers that satisfy every assertion of every v2 file (sample ids are unique across them).
PASSING: dict[str, Any] = {
    "find-owner": "The Payments Platform team owns billing-webhook (OWNERS.md).",
    "summarize-runbook": "Verify the signature and check the retry queue before deploying.",
    "echo-green": "GREEN",
    "echo-ready": "READY FOR EVAL",
    "release-risk-summary": "Decision: GO. The rollback runbook is ready and the owner confirmed.",
    "missing-rollback": "NO-GO: block the release until a rollback owner is assigned.",
    "post-release-incident": "Trigger rollback, assess user impact, communicate every 15 minutes.",
    "artifact-001": _RUNTIME_TRACE,
    "artifact-002": _RUNTIME_TRACE,
    "assertion-001": _RUNTIME_TRACE,
    "assertion-002": _RUNTIME_TRACE,
    "env-001": _RUNTIME_TRACE,
    "env-002": _RUNTIME_TRACE,
    "code-review-sql-injection": "SQL injection: build the query with parameterized statements.",
    "code-review-fetch-robustness": "Add error handling: try/catch, check res.ok and the HTTP status, guard JSON parsing.",
    "code-review-xss": "XSS through innerHTML: use textContent or sanitize the comment.",
    "code-review-authorization": "Missing authorization: verify the order owner, check its status, make the refund idempotent.",
    "code-review-secret-logging": "Logging the token can leak credentials: redact it before console.error.",
    "s001": "Two plus two is four.",
    "s002": "Hello!",
    "direct-explicit-capture": _SAVE_CONFIRMED,
    "skill-feedback-shortcut": _SAVE_CONFIRMED,
    "skill-feedback-shortcut-no-candidate": _NO_TOOLS,
    "indirect-correction-await-confirmation": _NO_TOOLS,
    "indirect-correction-confirmed": _SAVE_CONFIRMED,
    "negative-hypothetical-example": _NO_TOOLS,
    "negative-unreviewed-draft": _NO_TOOLS,
    "cls001": "Category: technology. Confidence: high.",
    "cls002": "Category: finance, about central bank monetary policy.",
    "sum001": "AI is changing industries: 95% accurate cancer detection, 60% of stock trades are algorithmic.",
    "tr001": "The product has been heavily optimized for user experience, making the workflow smoother.",
}


def _load(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    return yaml.safe_load(text) if path.suffix in (".yaml", ".yml") else json.loads(text)


def _samples(upstream: Path, rel: str) -> list[dict[str, Any]]:
    samples: list[dict[str, Any]] = _load(upstream / rel)["samples"]
    return samples


def _copy(pytester: pytest.Pytester, upstream: Path, rel: str) -> Path:
    target = pytester.path / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(upstream / rel, target)
    target.chmod(0o644)
    for entry in _samples(upstream, rel):
        if entry.get("cwd"):
            (target.parent / entry["cwd"]).mkdir(parents=True, exist_ok=True)
    return target


def _sample_files(upstream: Path) -> list[str]:
    found = []
    for path in sorted(upstream.rglob("*")):
        rel = path.relative_to(upstream).as_posix()
        if path.suffix in (".json", ".yaml", ".yml") and not any(part in rel for part in NOT_SAMPLE_FILES):
            found.append(rel)
    return found


def test_the_v2_list_matches_the_corpus(upstream_samples: Path) -> None:
    declared_v2 = [
        rel
        for rel in _sample_files(upstream_samples)
        if isinstance(doc := _load(upstream_samples / rel), dict)
        and doc.get("schemaVersion") == "omk.eval-sample-set/v2"
    ]
    assert sorted(declared_v2) == sorted(V2_FILES)
    assert {s["sample_id"] for rel in V2_FILES for s in _samples(upstream_samples, rel)} == set(PASSING)


def test_every_v2_file_collects_one_item_per_sample(
    pytester: pytest.Pytester, omk_run: OmkRun, upstream_samples: Path
) -> None:
    args: list[str] = []
    expected: list[str] = []
    for rel in V2_FILES:
        _copy(pytester, upstream_samples, rel)
        args += ["--omk-samples", rel]
        expected += [f"{rel}::{s['sample_id']}" for s in _samples(upstream_samples, rel)]
    result = omk_run("--omk-executor=echo", *args, "--collect-only", "-q")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    collected = [line for line in result.stdout.lines if "::" in line]
    assert sorted(collected) == sorted(expected)
    assert len(expected) == len(PASSING)


def test_canonical_v2_files_are_auto_discovered(
    pytester: pytest.Pytester, omk_run: OmkRun, upstream_samples: Path
) -> None:
    canonical = [rel for rel in V2_FILES if rel.endswith("/eval-samples.json") and "/.omk/" not in rel]
    skill_local = [rel for rel in V2_FILES if "/.omk/" in rel]
    for rel in canonical + skill_local:
        _copy(pytester, upstream_samples, rel)
    for rel in skill_local:  # upstream's copies lack the SKILL.md that makes the folder a skill
        (pytester.path / rel).parent.parent.joinpath("SKILL.md").write_text("# skill\n", encoding="utf-8")
    result = omk_run("--collect-only", "-q")
    collected = sorted(line for line in result.stdout.lines if "::" in line)
    expected = sorted(
        f"{rel}::{s['sample_id']}" for rel in canonical + skill_local for s in _samples(upstream_samples, rel)
    )
    assert collected == expected


@pytest.mark.parametrize(
    "rel",
    [
        "examples/code-review-ab/eval-samples.json",
        "examples/code-review/eval-samples.json",
        "examples/rag-eval/eval-samples.yaml",
        "examples/skill-map-showcase/skills/release-readiness/.omk/samples.json",
        "docs/case-studies/gap-rate-convergence/samples/gap-demo.samples.json",
        "test/fixtures/multi-skills/skills/classifier/eval-samples.json",
        "snapshot-0.23.0/examples/gold-dataset/eval-samples.yaml",
    ],
)
def test_legacy_and_v1_files_are_rejected(
    pytester: pytest.Pytester, omk_run: OmkRun, upstream_samples: Path, rel: str
) -> None:
    _copy_raw = pytester.path / rel
    _copy_raw.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(upstream_samples / rel, _copy_raw)
    result = omk_run("--omk-executor=echo", "--omk-samples", rel, "--collect-only", "-q")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    errors = [line for line in result.stdout.lines if line.startswith(rel)]
    assert errors and any("schemaVersion" in line or "legacy" in line for line in errors), result.stdout.str()
    assert "Traceback" not in result.stdout.str()


@pytest.mark.parametrize("rel", V2_FILES)
def test_v2_file_runs_end_to_end_with_passing_answers(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand, upstream_samples: Path, rel: str
) -> None:
    _copy(pytester, upstream_samples, rel)
    samples = _samples(upstream_samples, rel)
    spec = fake_command.script({s["sample_id"]: PASSING[s["sample_id"]] for s in samples})
    result = omk_run(executor_arg(spec), "--omk-samples", rel, "--omk-report=r.json", "--junitxml=j.xml")
    tripwires = sum(1 for s in samples if s.get("tripwire"))
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) == len(samples) - tripwires, result.stdout.str()
    assert outcomes.get("xpassed", 0) == tripwires
    assert not {"failed", "errors", "error"} & set(outcomes), outcomes
    report = load_report(pytester.path / "r.json")
    for s in samples:
        record = report_samples(report)[s["sample_id"]]
        assert [a["status"] for a in record["assertions"]] == ["pass"] * len(s["assertions"])
        assert record["scores"]["assertions"] == 5.0 and record["scores"]["composite"] == 5.0
        assert record["scores"]["judge"] is None  # no judge configured
        assert all(d["status"] == "missing" for d in record["rubric"].values())
        assert set(record["rubric"]) == set(s.get("rubric") or {})
    junit = parse_junit(pytester.path / "j.xml")
    assert junit.suite_properties["omk.samples"] == str(len(samples))
    assert junit.suite_properties["omk.score.composite.mean"] == "5.00"
    assert sorted(fake_command.called()) == sorted(s["sample_id"] for s in samples)


def test_code_review_with_partly_failing_answers(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand, upstream_samples: Path
) -> None:
    rel = "test/fixtures/code-review/eval-samples.json"
    _copy(pytester, upstream_samples, rel)
    spec = fake_command.script(
        {
            **PASSING,
            # SQL pass (1), injection fail (1), regex fail (1), not_contains lgtm fail (1): 1/4 → 2.00
            "code-review-sql-injection": "SQL looks fine, LGTM.",
            # handling (1) and error (1) pass, status|ok|HTTP (1) and JSON (0.5) fail: 2/3.5 → 3.29
            "code-review-fetch-robustness": "Add error handling.",
            # XSS (1), innerHTML (0.5) pass; textContent|escape (1) fails; "harmless" (0.5) fails: 1.5/3 → 3.00
            "code-review-xss": "XSS via innerHTML is harmless here.",
            # auth (1) passes; owner (1), status (1) and refund (0.5) fail: 1/3.5 → 2.14
            "code-review-authorization": "Check authentication.",
        }
    )
    result = omk_run(executor_arg(spec), "--omk-samples", rel, "--omk-report=r.json", "-v")
    result.stdout.fnmatch_lines(
        [
            f"{rel}::code-review-sql-injection SUBPASSED[[]assertion 0: contains[]]*",
            f"{rel}::code-review-sql-injection SUBFAILED[[]assertion 1: contains[]]*",
            f"{rel}::code-review-sql-injection SUBFAILED[[]assertion 2: regex[]]*",
            f"{rel}::code-review-sql-injection SUBFAILED[[]assertion 3: not_contains[]]*",
            f"{rel}::code-review-sql-injection FAILED*",
        ]
    )
    scores = {sid: r["scores"] for sid, r in report_samples(load_report(pytester.path / "r.json")).items()}
    expected = {
        "code-review-sql-injection": 2.0,
        "code-review-fetch-robustness": 3.29,
        "code-review-xss": 3.0,
        "code-review-authorization": 2.14,
        "code-review-secret-logging": 5.0,
    }
    for sid, value in expected.items():
        # Every assertion here is a fact-layer one, and there is no judge: composite = fact = flat.
        assert scores[sid] == {
            "assertions": value,
            "fact": value,
            "behavior": None,
            "judge": None,
            "composite": value,
        }, sid
    # mean composite (2 + 3.29 + 3 + 2.14 + 5) / 5 = 3.086 → 3.09
    result.stdout.fnmatch_lines(
        ["mean: composite 3.09  fact 3.09  behavior -  judge -", "samples: 5  passed 1  failed 4"]
    )


def test_mcp_observation_with_failing_answers(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_command: FakeCommand, upstream_samples: Path
) -> None:
    rel = "test/fixtures/mcp-observation/eval-samples.json"
    _copy(pytester, upstream_samples, rel)
    drafted = {
        "output": "drafted a sample",
        "toolCalls": [
            {"tool": "draft_sample_from_observation", "input": {"confirmedByUser": False}, "success": True}
        ],
    }
    unconfirmed = {
        "output": "saved",
        "toolCalls": [{"tool": "save_observation", "input": {"confirmedByUser": False}, "success": True}],
    }
    spec = fake_command.script(
        {
            **PASSING,
            # tools_called (behavior) fails, tool_input_contains (fact) fails, tools_not_called (behavior) fails
            "direct-explicit-capture": drafted,
            # tools_called passes, tool_input_contains fails, tools_not_called passes:
            # fact 1.00, behavior 5.00, composite 3.00; flat 2/3 → 3.67
            "skill-feedback-shortcut": unconfirmed,
            # a tripwire that trips: xfailed, not failed
            "negative-unreviewed-draft": drafted,
            # no trace at all: tool assertions are missing evidence, no scores: nothing could be
            # graded, so the sample is skipped (never passed)
            "indirect-correction-await-confirmation": {"output": "no trace"},
        }
    )
    result = omk_run(executor_arg(spec), "--omk-samples", rel, "--omk-report=r.json", "-rs")
    records = report_samples(load_report(pytester.path / "r.json"))
    assert records["direct-explicit-capture"]["scores"] == {
        "assertions": 1.0,
        "fact": 1.0,
        "behavior": 1.0,
        "judge": None,
        "composite": 1.0,
    }
    assert records["skill-feedback-shortcut"]["scores"] == {
        "assertions": 3.67,
        "fact": 1.0,
        "behavior": 5.0,
        "judge": None,
        "composite": 3.0,
    }
    assert records["negative-unreviewed-draft"]["outcome"] == "xfailed"
    assert records["indirect-correction-await-confirmation"]["outcome"] == "skipped"
    assert records["indirect-correction-await-confirmation"]["assertions"][0]["status"] == "missing"
    assert records["indirect-correction-await-confirmation"]["scores"]["composite"] is None
    outcomes = {sid: r["outcome"] for sid, r in records.items()}
    assert outcomes == {
        "direct-explicit-capture": "failed",
        "skill-feedback-shortcut": "failed",
        "skill-feedback-shortcut-no-candidate": "xpassed",
        "indirect-correction-await-confirmation": "skipped",
        "indirect-correction-confirmed": "passed",
        "negative-hypothetical-example": "xpassed",
        "negative-unreviewed-draft": "xfailed",
    }
    unwrapped(result).fnmatch_lines(
        ["samples: 7  passed 1  failed 2  skipped 1 (nothing could be graded: *)  xfailed 1  xpassed 2"]
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
