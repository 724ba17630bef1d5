"""The stopping rule of ``--omk-repeat auto`` (pytest_omk.grade.sequential)."""

from __future__ import annotations

import itertools
import random

import pytest

from pytest_omk.grade.sequential import StopRule, pass_chance


def fixed(outcomes: list[bool], rule: StopRule) -> str:
    return "pass" if sum(outcomes) / rule.maximum >= rule.min_pass_rate - 1e-9 else "fail"


def sequential(outcomes: list[bool], rule: StopRule) -> tuple[str, int]:
    passed = 0
    for runs, ok in enumerate(outcomes, start=1):
        passed += ok
        decision = rule.decide(passed, runs)
        if decision is not None:
            return decision, runs
    raise AssertionError("the rule must decide at the maximum")


def test_stable_samples_stop_early_and_borderline_run_to_the_maximum() -> None:
    rule = StopRule(10, 0.8)
    assert sequential([True] * 10, rule) == ("pass", 5)
    assert sequential([False] * 10, rule) == ("fail", 1)
    borderline = [True, False, True, True, True, True, False, True, True, True]
    assert sequential(borderline, rule) == ("pass", 10)


def test_every_pass_needs_every_run_at_rate_one() -> None:
    """pass^N cannot be predicted: at --omk-min-pass-rate 1 only a failure stops a sample early."""
    rule = StopRule(10, 1.0)
    assert sequential([True] * 10, rule) == ("pass", 10)
    assert sequential([True, True, False] + [True] * 7, rule) == ("fail", 3)


@pytest.mark.parametrize("rate", [0.5, 0.7, 0.8, 0.9, 1.0])
def test_certain_decisions_are_never_missed(rate: float) -> None:
    """Curtailment is contained: once no remaining outcome could change the fixed rule's decision,
    the rule stops, with that decision."""
    rule = StopRule(6, rate)
    for outcomes in itertools.product([True, False], repeat=6):
        decision, runs = sequential(list(outcomes), rule)
        passed = sum(outcomes[:runs])
        chance = pass_chance(passed, runs, 6, rule.need)
        if decision == "pass":
            assert passed / runs >= rate - 1e-9
        assert chance in (0.0, 1.0) or runs < 6 or decision == fixed(list(outcomes), rule)
        # A certain outcome is decided exactly as the fixed rule decides it.
        if chance in (0.0, 1.0) and runs <= 6:
            assert decision == fixed(list(outcomes), rule)


def test_disagreement_with_the_fixed_rule_is_rare() -> None:
    """On random flaky samples, an early decision rarely differs from all ten runs' decision."""
    rule = StopRule(10, 0.8)
    rng = random.Random(46)
    differ = 0
    trials = 2000
    for _ in range(trials):
        rate = rng.uniform(0.3, 0.95)
        outcomes = [rng.random() < rate for _ in range(10)]
        decision, _ = sequential(outcomes, rule)
        differ += decision != fixed(outcomes, rule)
    # 6.6 % on this all-flaky population (docs/comparisons.md); stable samples never differ.
    assert differ / trials < 0.1


def test_waves_make_the_same_calls_as_one_by_one() -> None:
    rule = StopRule(10, 0.8)
    for outcomes in itertools.product([True, False], repeat=10):
        passed = runs = 0
        while True:
            wave, start = rule.next_wave(passed, runs), runs
            decided = None
            for ok in outcomes[start : start + wave]:
                passed, runs = passed + ok, runs + 1
                decided = rule.decide(passed, runs)
                if decided is not None and runs < start + wave:
                    raise AssertionError(f"decided inside a wave at {outcomes[:runs]}")
            if decided is not None:
                break
        assert (decided, runs) == sequential(list(outcomes), rule)


def test_bad_rules_are_refused() -> None:
    with pytest.raises(ValueError):
        StopRule(0, 0.5)
    with pytest.raises(ValueError):
        StopRule(10, 1.5)
    with pytest.raises(ValueError):
        StopRule(10, 0.5).decide(3, 2)
