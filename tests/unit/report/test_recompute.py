"""A report sample's outcome recomputed from its readings (what ``merge`` trusts)."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_omk.report.recompute import recomputed_outcome, worse

RAN = {"output": "x", "replayed": False}


def row(*statuses: str, **fields: Any) -> dict[str, Any]:
    return {
        "execution": RAN,
        "assertions": [{"status": s} for s in statuses],
        "rubric": {},
        "scores": {"composite": 3.0},
        "metadata": {},
        **fields,
    }


@pytest.mark.parametrize(
    ("sample", "config", "expected"),
    [
        (row("pass", "pass"), {}, "passed"),
        (row("pass", "fail"), {}, "failed"),
        (row("pass", "missing"), {}, "passed"),
        (row("pass", "missing"), {"strict": True}, "failed"),
        (row("missing", "missing"), {}, "skipped"),
        (row("pass"), {"minComposite": 4}, "failed"),
        (row("pass", scores={"composite": None}), {"minComposite": 1}, "failed"),
        (row("pass", error="executor failed"), {}, "error"),
        (row(execution=None), {}, "skipped"),
        (row("fail", metadata={"tripwire": True}), {}, "xfailed"),
        (row("pass", metadata={"tripwire": True}), {}, "xpassed"),
        (row("pass", repeats={"passRate": 0.5}), {"minPassRate": 0.6}, "failed"),
        (row("pass", repeats={"passRate": 0.6}), {"minPassRate": 0.6}, "passed"),
        (row(rubric={"tone": {"status": "fail"}}), {}, "failed"),
    ],
)
def test_the_outcome_follows_the_readings(
    sample: dict[str, Any], config: dict[str, Any], expected: str
) -> None:
    assert recomputed_outcome(sample, config) == expected


def test_the_worse_of_stated_and_recomputed_wins() -> None:
    assert worse("passed", "failed") == "failed"
    assert worse("error", "passed") == "error"  # e.g. a teardown error the readings cannot show
    assert worse("xfailed", "skipped") == "skipped"
    assert worse(None, "passed") == "passed"
    assert worse("bogus", "passed") == "bogus"
