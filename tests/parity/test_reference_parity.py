"""Differential test: pytest-omk and the reference (npm oh-my-knowledge@0.54.0) grade the same cases.

Thousands of seeded cases over every deterministic assertion type go to both graders; no reading
may come out opposite outside the documented deliberate differences (docs/assertions.md), and
where every reading of a case agrees, the flat, fact, behavior and composite scores are equal.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pytest_omk.js.v8 import JsEngine
from tests.parity.cases import generate
from tests.parity.reference import grade_ours, grade_reference

CASES = 5_000


def _compare(case: dict[str, Any], ours: Any, theirs: dict[str, Any], tally: Counter[str]) -> list[str]:
    """Disagreements of one case that no deliberate difference explains."""
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
            problems.append(f"assertions[{index}] {case['assertions'][index]!r}: ours={status} reference={passed}")
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


@pytest.mark.slow
def test_verdicts_and_scores_equal_the_reference(node: str, reference_package: Path) -> None:
    cases = generate(CASES)
    theirs = grade_reference(node, reference_package, cases)
    engine = JsEngine()
    tally: Counter[str] = Counter()
    failures: list[str] = []
    try:
        for case, reference in zip(cases, theirs, strict=True):
            for problem in _compare(case, grade_ours(case, engine), reference, tally):
                failures.append(f"case {case['id']} output={case['output'][:60]!r}: {problem}")
    finally:
        engine.close()
    print(dict(tally))
    assert tally["same verdict"] > 5_000
    assert not failures, f"{len(failures)} disagreements, first ones:\n" + "\n".join(failures[:25])
