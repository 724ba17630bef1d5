"""Loading a baseline report, deltas against it, and the regression gate's findings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_omk.compare.baseline import (
    check_overlap,
    compare_with_baseline,
    load_baseline,
    regression_message,
)
from pytest_omk.errors import ConfigError


def _row(
    sample_id: str,
    outcome: str,
    composite: float | None,
    fact: float | None = None,
    variant: str | None = None,
) -> dict[str, Any]:
    return {
        "nodeid": f"e.json::{sample_id}" + (f"[{variant}]" if variant else ""),
        "file": "e.json",
        "sample_id": sample_id,
        "variant": variant,
        "outcome": outcome,
        "scores": {
            "assertions": composite,
            "fact": fact,
            "behavior": None,
            "judge": None,
            "composite": composite,
        },
    }


def _report(*rows: dict[str, Any]) -> dict[str, Any]:
    return {"schemaVersion": "pytest-omk.report/v1", "samples": list(rows)}


def test_load_baseline(tmp_path: Path) -> None:
    good = tmp_path / "base.json"
    good.write_text(json.dumps(_report(_row("s1", "passed", 5.0))), encoding="utf-8")
    assert load_baseline(good)["samples"][0]["sample_id"] == "s1"
    for name, text, reason in [
        ("missing.json", None, "cannot read"),
        ("bad.json", "{", "is not JSON"),
        ("other.json", json.dumps({"schemaVersion": "x"}), "is not a pytest-omk report"),
        (
            "nosamples.json",
            json.dumps({"schemaVersion": "pytest-omk.report/v1", "samples": [1]}),
            r"nosamples\.json: samples\[0\] must be an object",
        ),
    ]:
        path = tmp_path / name
        if text is not None:
            path.write_text(text, encoding="utf-8")
        with pytest.raises(ConfigError, match=reason):
            load_baseline(path)


def test_deltas_on_matched_samples_only() -> None:
    baseline = _report(
        _row("s1", "passed", 5.0, 5.0), _row("s2", "passed", 4.0, 3.0), _row("gone", "passed", 1.0)
    )
    rows = [_row("s1", "passed", 5.0, 5.0), _row("s2", "passed", 3.5, 2.0), _row("new", "failed", 1.0)]
    section = compare_with_baseline(rows, baseline, path="base.json", threshold=None)
    assert (section["matched"], section["new"], section["notRun"]) == (2, 1, 1)
    [group] = section["layers"]
    assert group["variant"] is None
    assert group["layers"]["composite"] == {"baseline": 4.5, "current": 4.25, "delta": -0.25, "samples": 2}
    assert group["layers"]["fact"]["delta"] == -0.5
    assert group["layers"]["judge"] == {"baseline": None, "current": None, "delta": None, "samples": 0}
    assert [c["sample_id"] for c in section["changed"]] == ["s2"]
    assert section["changed"][0]["deltas"]["composite"] == -0.5
    assert section["regressions"] == []  # no threshold: deltas only


def test_small_composite_moves_are_not_changes() -> None:
    section = compare_with_baseline(
        [_row("s1", "passed", 4.01)], _report(_row("s1", "passed", 4.0)), path="b", threshold=None
    )
    assert section["changed"] == []


def test_layer_drop_beyond_the_threshold_regresses() -> None:
    baseline = _report(_row("s1", "failed", 4.0, 4.0), _row("s2", "failed", 4.0, 4.0))
    rows = [_row("s1", "failed", 3.8, 3.8), _row("s2", "failed", 4.0, 4.0)]
    within = compare_with_baseline(rows, baseline, path="b.json", threshold=0.1)
    assert within["regressions"] == []  # fact 4.00 -> 3.90 is a drop of exactly 0.1: allowed
    beyond = compare_with_baseline(rows, baseline, path="b.json", threshold=0.05)
    kinds = {(r["kind"], r["layer"]) for r in beyond["regressions"]}
    assert kinds == {("layer", "fact"), ("layer", "composite")}  # the flat score is not gated
    message = regression_message(beyond)
    assert message is not None
    assert "layer fact mean 4.00 -> 3.90 (-0.10, allowed -0.05)" in message


def test_a_previously_passing_sample_that_fails_regresses() -> None:
    baseline = _report(_row("s1", "passed", 5.0, 5.0), _row("s2", "failed", 2.0, 2.0))
    rows = [_row("s1", "failed", 3.0, 3.0), _row("s2", "failed", 2.0, 2.0)]
    section = compare_with_baseline(rows, baseline, path="b.json", threshold=5.0)
    [regression] = section["regressions"]
    assert regression["kind"] == "sample" and regression["sample_id"] == "s1"
    assert regression["layers"] == ["composite", "fact"]
    message = regression_message(section)
    assert message == (
        "omk: regression against baseline b.json: sample e.json::s1 passed -> failed "
        "(composite 5.00 -> 3.00, fact 5.00 -> 3.00)"
    )
    assert regression_message({"regressions": []}) is None


def test_variants_are_matched_and_gated_separately() -> None:
    baseline = _report(_row("s1", "passed", 5.0, variant="a"), _row("s1", "passed", 5.0, variant="b"))
    rows = [_row("s1", "passed", 5.0, variant="a"), _row("s1", "passed", 4.0, variant="b")]
    section = compare_with_baseline(rows, baseline, path="b.json", threshold=0.5)
    assert [g["variant"] for g in section["layers"]] == ["a", "b"]
    assert {(r["variant"], r["layer"]) for r in section["regressions"]} == {("b", "composite")}
    assert "[variant b]" in (regression_message(section) or "")
    # A report without variants matches no variant item.
    unmatched = compare_with_baseline(rows, _report(_row("s1", "passed", 5.0)), path="b.json", threshold=0.5)
    assert (unmatched["matched"], unmatched["new"], unmatched["notRun"]) == (0, 2, 1)


def test_a_gate_whose_baseline_holds_none_of_the_items_is_refused() -> None:
    baseline = {"samples": [{"nodeid": "other/eval-samples.json::t0", "scores": {}}]}
    check_overlap(baseline, ["other/eval-samples.json::t0", "test_x.py::test_y"], path="b.json")
    with pytest.raises(ConfigError, match=r"none of the 2 selected items is in the baseline b\.json"):
        check_overlap(baseline, ["eval-samples.json::s0", "test_x.py::test_y"], path="b.json")
    # At the end too: a gate that matched nothing trips instead of passing.
    section = {"path": "b.json", "matched": 0, "threshold": 0.1, "regressions": []}
    assert "the gate compared nothing" in str(regression_message(section))
    assert regression_message({**section, "threshold": None}) is None
