"""Differential test: pytest-omk and the reference (npm oh-my-knowledge@0.54.0) grade the same cases.

Thousands of seeded cases over every deterministic assertion type go to both graders; no reading
may come out opposite outside the documented deliberate differences (docs/assertions.md), and
where every reading of a case agrees, the flat, fact, behavior and composite scores are equal.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from pytest_omk.js.v8 import JsEngine
from tests.parity.cases import generate
from tests.parity.reference import compare, grade_ours, grade_reference

CASES = 5_000


@pytest.mark.slow
def test_verdicts_and_scores_equal_the_reference(node: str, reference_package: Path) -> None:
    cases = generate(CASES)
    theirs = grade_reference(node, reference_package, cases)
    engine = JsEngine()
    tally: Counter[str] = Counter()
    failures: list[str] = []
    try:
        for case, reference in zip(cases, theirs, strict=True):
            for problem in compare(case, grade_ours(case, engine), reference, tally):
                failures.append(f"case {case['id']} output={case['output'][:60]!r}: {problem}")
    finally:
        engine.close()
    print(dict(tally))
    assert tally["same verdict"] > 5_000
    assert not failures, f"{len(failures)} disagreements, first ones:\n" + "\n".join(failures[:25])
