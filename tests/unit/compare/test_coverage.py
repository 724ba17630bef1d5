"""The capability / difficulty coverage tables."""

from __future__ import annotations

from typing import Any

from pytest_omk.compare.coverage import coverage, pass_value


def _row(
    outcome: str, composite: float | None, *, variant: str | None = None, repeats: Any = None, **metadata: Any
) -> dict[str, Any]:
    return {
        "outcome": outcome,
        "variant": variant,
        "repeats": repeats,
        "scores": {"composite": composite},
        "metadata": metadata,
    }


def test_pass_value() -> None:
    assert pass_value(_row("passed", 5.0)) == 1.0
    assert pass_value(_row("xpassed", 5.0)) == 1.0
    assert pass_value(_row("failed", 2.0)) == 0.0
    assert pass_value(_row("error", None)) == 0.0
    assert pass_value(_row("skipped", None)) is None
    assert pass_value(_row("failed", 4.0, repeats={"passRate": 0.6})) == 0.6


def test_tables_per_capability_and_difficulty() -> None:
    rows = [
        _row("passed", 5.0, capability=["extraction", "json"], difficulty="easy"),
        _row("failed", 3.0, capability=["extraction"], difficulty="hard"),
        _row("skipped", None, capability=["extraction"]),
        _row("passed", 4.0),
    ]
    tables = coverage(rows)
    assert tables["capability"] == [
        {
            "name": "extraction",
            "variant": None,
            "samples": 3,
            "counted": 2,
            "passRate": 0.5,
            "composite": 4.0,
        },
        {"name": "json", "variant": None, "samples": 1, "counted": 1, "passRate": 1.0, "composite": 5.0},
    ]
    assert [(r["name"], r["passRate"]) for r in tables["difficulty"]] == [("easy", 1.0), ("hard", 0.0)]


def test_variants_get_their_own_rows_in_the_order_given() -> None:
    rows = [
        _row("passed", 5.0, variant="new", capability=["qa"]),
        _row("failed", 2.0, variant="old", capability=["qa"]),
    ]
    assert [(r["variant"], r["passRate"]) for r in coverage(rows)["capability"]] == [
        ("new", 1.0),
        ("old", 0.0),
    ]
    assert coverage([]) == {"capability": [], "difficulty": []}
