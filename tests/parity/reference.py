"""Both graders side by side: the reference's (one Node process, JSON lines) and pytest-omk's."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pytest_omk.grade.base import GradeContext
from pytest_omk.grade.registry import grade_sample
from pytest_omk.grade.scoring import score_sample
from pytest_omk.js.v8 import JsEngine
from pytest_omk.models import Sample
from pytest_omk.models.results import ExecutionResult

SCRIPT = Path(__file__).with_name("grade_reference.mjs")
MOCKS = [{"tool": "Read", "return": "r"}, {"tool": "Bash", "return": "b"}, {"tool": "Bash", "return": "c"}]


def grade_reference(node: str, package: Path, cases: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The reference's readings and scores for every case, from one Node process."""
    lines = "".join(json.dumps({k: c[k] for k in ("output", "assertions", "context")}) + "\n" for c in cases)
    done = subprocess.run(
        [node, str(SCRIPT), str(package)],
        input=lines,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
        encoding="utf-8",
        errors="surrogatepass",
    )
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(results) == len(cases), done.stderr[-2000:]
    return results


@dataclass
class Ours:
    """pytest-omk's side of one case."""

    statuses: list[str] = field(default_factory=list)
    scores: dict[str, float | None] = field(default_factory=dict)
    load_error: str | None = None


def load_ours(case: dict[str, Any], js: JsEngine) -> Sample | str:
    """The case as a sample (with the V8 engine, as the loader does), or why it does not load."""
    try:
        return Sample.model_validate(
            {
                "sample_id": f"case-{case['id']}",
                "prompt": "p",
                "assertions": case["assertions"],
                "mocks": MOCKS,
                "mocksStrict": False,
            },
            context={"js": js},
        )
    except ValidationError as exc:
        return str(exc).splitlines()[2] if len(str(exc).splitlines()) > 2 else str(exc)


def grade_ours(case: dict[str, Any], js: JsEngine) -> Ours:
    """Load the case as a sample and grade it."""
    sample = load_ours(case, js)
    if isinstance(sample, str):
        return Ours(load_error=sample)
    context = case["context"]
    execution = ExecutionResult.model_validate(
        {
            "output": case["output"],
            "toolCalls": context["toolCalls"],
            "costUSD": context["costUSD"],
            "latencyMs": context["durationMs"],
            "numTurns": context["numTurns"],
            "mockStats": context["mockStats"],
        }
    )
    ctx = GradeContext(execution=execution, sample=sample, base_dir=Path.cwd(), js=js)
    assertions = sample.assertions or []
    readings = grade_sample(assertions, ctx)
    scores = score_sample(assertions, readings, None)
    return Ours(
        [r.status for r in readings],
        {
            "score": scores.assertions,
            "fact": scores.fact,
            "behavior": scores.behavior,
            "composite": scores.composite,
        },
    )


def compare(case: dict[str, Any], ours: Ours, theirs: dict[str, Any], tally: Counter[str]) -> list[str]:
    """Disagreements of one case that no deliberate difference explains (counted in ``tally``)."""
    if ours.load_error is not None or "error" in theirs:
        if ours.load_error is not None and "error" in theirs:
            tally["both refuse to load"] += 1
            return []
        if ours.load_error is not None and "could never pass" in ours.load_error:
            # Deliberate: what a strict Ajv cannot compile is a load error here, a false reading there.
            tally["json_schema refused at load (reference: false)"] += 1
            return []
        return [f"loading: ours={ours.load_error!r} reference={theirs.get('error')!r}"]
    problems = []
    missing = False
    for index, (status, passed) in enumerate(zip(ours.statuses, theirs["passed"], strict=True)):
        if status == "missing":
            missing = True
            tally["missing evidence here (deliberate)"] += 1
        elif (status == "pass") != passed:
            problems.append(
                f"assertions[{index}] {case['assertions'][index]!r}: ours={status} reference={passed}"
            )
        else:
            tally["same verdict"] += 1
    if problems or missing:
        return problems
    for key in ("score", "fact", "behavior"):
        if ours.scores[key] != theirs[key]:
            problems.append(f"{key}: ours={ours.scores[key]} reference={theirs[key]}")
    composite = ours.scores["composite"]
    if composite is None and theirs["composite"] == 0:
        tally["no layer: no composite here, 0 there (deliberate)"] += 1
    elif composite != theirs["composite"]:
        problems.append(f"composite: ours={composite} reference={theirs['composite']}")
    else:
        tally["same scores"] += 1
    return problems
