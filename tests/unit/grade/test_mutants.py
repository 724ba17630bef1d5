"""Mutation operators of ``--omk-mutate`` (pytest_omk.grade.mutants)."""

from __future__ import annotations

import json

from pytest_omk.grade.mutants import OPERATORS, mutants

PROSE = "Refunds are not possible after 30 days. Contact Acme support in Berlin for help."
DOC = '{"city": "Paris", "population": 2100000}'


def by_operator(text: str, sample_id: str = "s", seed: int = 0) -> dict[str, str | None]:
    return {m.operator: m.text for m in mutants(text, sample_id=sample_id, seed=seed)}


def test_one_mutant_per_operator_and_deterministic() -> None:
    first = mutants(PROSE, sample_id="refund")
    assert [m.operator for m in first] == list(OPERATORS)
    assert first == mutants(PROSE, sample_id="refund")
    assert by_operator(PROSE, seed=1) == by_operator(PROSE, seed=1)


def test_every_applied_mutant_differs_from_the_output() -> None:
    for text in (PROSE, DOC, "ok"):
        for mutant in mutants(text, sample_id="x"):
            assert mutant.text != text


def test_prose_operators() -> None:
    made = by_operator(PROSE)
    assert made["drop_sentence"] in (
        "Refunds are not possible after 30 days.",
        "Contact Acme support in Berlin for help.",
    )
    assert made["swap_numbers"] is not None and "30 days" not in made["swap_numbers"]
    assert (
        made["swap_entities"]
        == "Refunds are not possible after 30 days. Contact Berlin support in Acme for help."
    )
    assert (
        made["flip_negation"]
        == "Refunds are possible after 30 days. Contact Acme support in Berlin for help."
    )
    assert made["empty"] == ""
    assert made["break_json"] is None
    truncated = made["truncate"]
    assert truncated and PROSE.startswith(truncated) and len(truncated) <= len(PROSE) // 2


def test_json_is_broken() -> None:
    broken = by_operator(DOC)["break_json"]
    assert broken is not None
    try:
        json.loads(broken)
    except ValueError:
        pass
    else:
        raise AssertionError(f"still JSON: {broken}")


def test_an_affirmation_is_negated() -> None:
    assert by_operator("The answer is 42.")["flip_negation"] == "The answer is not 42."
