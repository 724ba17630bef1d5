"""End to end: ``--omk-judge-repeat 3`` reports each rubric dimension's α across the judge's
replicates, and ``--omk-min-judge-consistency`` fails the run on the inconsistent one, replayed
from recordings under ``CI=true`` with no key."""

from __future__ import annotations

import json

import pytest

from tests.fakes.fake_llm import FakeLLM
from tests.support import OmkRun, load_report, sample, write_sample_set

STABLE = [[4, 4, 4], [2, 2, 2], [5, 5, 5], [3, 3, 3], [1, 1, 1]]
SHAKY = [[1, 5, 3], [5, 1, 2], [2, 4, 5], [4, 1, 3], [3, 5, 1]]


def _replicate_alpha(units: list[list[int]]) -> float:
    """Krippendorff's interval α from the coincidence counts, computed independently here."""
    pooled = [v for u in units for v in u]
    n = len(pooled)
    within = sum(sum((a - b) ** 2 for a in u for b in u) / (len(u) - 1) for u in units)
    between = sum((a - b) ** 2 for a in pooled for b in pooled)
    return 1 - (n - 1) * within / between


def test_a_dimension_the_judge_cannot_repeat_fails_the_run(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-consistency-test-9d2a")
    samples = []
    for i, (stable, shaky) in enumerate(zip(STABLE, SHAKY, strict=True)):
        for name, scores in (("stable", stable), ("shaky", shaky)):
            replies = [json.dumps({"score": s, "reason": f"{name}-{i}"}) for s in scores]
            fake_llm.add_rule(f"{name}-criterion-{i}", replies=replies, system="judge")
        fake_llm.add_rule(f"QUESTION{i}", f"ANSWER{i}")
        rubric = {n: {"criterion": f"{n}-criterion-{i}", "weight": 0.5} for n in ("stable", "shaky")}
        samples.append(sample(f"s{i}", f"QUESTION{i}", rubric=rubric))
    write_sample_set(pytester, *samples)
    args = ("--omk-executor=openai", "--omk-judge=openai", "--omk-recordings=rec", "--omk-judge-repeat=3")
    live = omk_run(*args, "--omk-record-mode=all")
    assert live.ret in (0, 1), live.stdout.str()
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("CI", "true")
    calls = len(fake_llm.requests)

    result = omk_run(
        *args, "--omk-record-mode=none", "--omk-min-judge-consistency=0.8", "--omk-report=r.json"
    )
    assert len(fake_llm.requests) == calls  # replayed: nothing sent
    text = result.stdout.str()
    assert result.ret == 1, text
    assert "stable: alpha 1.000 across replicates (5 samples)" in text
    assert f"shaky: alpha {_replicate_alpha(SHAKY):.3f} across replicates (5 samples)" in text
    assert "FAILED: judge consistency below --omk-min-judge-consistency 0.8: shaky" in text
    report = load_report(pytester.path / "r.json")
    assert report["judgeConsistency"]["stable"] == {"alpha": 1.0, "units": 5, "below": False}
    assert report["judgeConsistency"]["shaky"]["below"] is True
    # The replicates run concurrently: their order is not the script's.
    assert sorted(report["samples"][0]["rubric"]["shaky"]["judgeReadings"]) == [1, 3, 5]


def test_the_consistency_gate_needs_replicates(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    write_sample_set(pytester, sample("s", "q"))
    result = omk_run("--omk-executor=echo", "--omk-min-judge-consistency=0.5")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--omk-min-judge-consistency needs --omk-judge-repeat 2 or more" in result.stderr.str()
