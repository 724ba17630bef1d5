"""End to end: ``--omk-gold`` compares human labels with the judge's recorded scores, and gates CI.

Each test records a run once (the fake LLM on loopback answers the model under test and the judge),
then replays it with ``CI=true`` and no key, sending nothing: the calibration item is computed from the
recorded judge readings alone. The expected α is computed here from the formula, not by the plugin.
"""

from __future__ import annotations

import csv
import json
import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.fakes.fake_llm import FakeLLM
from tests.support import OmkRun, load_report, sample, write_sample_set

JUDGE = [5, 4, 4, 2, 1, 5, 3, 2, 4, 1]
"""The judge's score of sample s0..s9."""


def alpha(gold: Sequence[float], judge: Sequence[float]) -> float:
    """Krippendorff's interval α for two coders, straight from the textbook's double sum."""
    pooled = [*gold, *judge]
    n = len(pooled)
    observed = sum((a - b) ** 2 for a, b in zip(gold, judge, strict=True)) / len(gold)
    expected = sum((c - k) ** 2 for c in pooled for k in pooled) / (n * (n - 1))
    return 1 - observed / expected


def record(pytester: pytest.Pytester, omk_run: OmkRun, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch,
           judge: list[int]) -> None:  # fmt: skip
    """Write ten judged samples and record one live run of them (then no server is needed)."""
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-gold-test-5c1e")
    samples = []
    for i, score in enumerate(judge):
        # The judge's rule first: its prompt holds the question too.
        fake_llm.add_rule(
            f"ANSWER{i:02d}", json.dumps({"score": score, "reason": f"because-{i}"}), system="judge"
        )
        fake_llm.add_rule(f"QUESTION{i:02d}", f"ANSWER{i:02d}")
        samples.append(
            sample(f"s{i}", f"QUESTION{i:02d}", rubric={"quality": {"criterion": "good", "weight": 1}})
        )
    write_sample_set(pytester, *samples)
    live = omk_run(
        "--omk-executor=openai", "--omk-judge=openai", "--omk-record-mode=all", "--omk-recordings=rec"
    )
    assert live.ret in (0, 1), live.stdout.str()
    # The replay keeps the server's address (part of a recording's key) but has no key; the tests
    # check that it sends nothing.
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("CI", "true")


def gold_dir(
    pytester: pytest.Pytester, scores: Sequence[float], name: str = "gold", annotator: str = "ann"
) -> Path:
    directory = pytester.path / name
    directory.mkdir()
    (directory / "metadata.yaml").write_text(
        f'metadata:\n  annotator: {annotator}\n  annotatedAt: "2026-12-01"\n  version: "1"\n',
        encoding="utf-8",
    )
    rows = "".join(f"  - sample_id: s{i}\n    score: {s}\n" for i, s in enumerate(scores))
    (directory / "labels.yaml").write_text(f"annotations:\n{rows}", encoding="utf-8")
    return directory


def replay(omk_run: OmkRun, *args: str) -> pytest.RunResult:
    return omk_run("--omk-executor=openai", "--omk-judge=openai", "--omk-recordings=rec", "--omk-record-mode=none",
                   "-rA", *args)  # fmt: skip


def test_a_gold_set_agreeing_on_nine_of_ten_passes_the_gate(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    record(pytester, omk_run, fake_llm, monkeypatch, JUDGE)
    gold = [*JUDGE]
    gold[2] = 3  # one disagreement, by one point
    gold_dir(pytester, gold)
    result = replay(omk_run, "--omk-gold=gold", "--omk-min-agreement=0.6", "--junitxml=j.xml",
                    "--omk-gold-export=pairs.csv")  # fmt: skip
    text = result.stdout.str()
    assert result.parseoutcomes().get("passed") == 7, text  # six samples (judge >= 3) and the calibration
    assert f"alpha {alpha(gold, JUDGE):.3f}" in text
    assert "PASSED gold::judge-agreement" in text
    assert 'testcase classname="gold" name="judge-agreement"' in (pytester.path / "j.xml").read_text()
    rows = list(csv.DictReader((pytester.path / "pairs.csv").open(encoding="utf-8")))
    assert [(r["sample_id"], float(r["gold"]), float(r["judge"])) for r in rows] == [
        (f"s{i}", float(g), float(j)) for i, (g, j) in enumerate(zip(gold, JUDGE, strict=True))
    ]
    assert len(fake_llm.requests) == 20  # the live run's ten answers and ten judge readings only


def test_a_gold_set_agreeing_on_three_of_ten_fails_with_figures_and_worst_disagreements(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    record(pytester, omk_run, fake_llm, monkeypatch, JUDGE)
    gold = [1, 2, 4, 5, 1, 1, 3, 5, 1, 5]  # agrees on s2, s4 and s6 only
    gold_dir(pytester, gold)
    result = replay(omk_run, "--omk-gold=gold", "--omk-min-agreement=0.6", "--omk-report=r.json",
                    "--omk-markdown=r.md", "--omk-html=r.html")  # fmt: skip
    text = result.stdout.str()
    assert "FAILED gold::judge-agreement - FAILED gate: alpha's 95% interval lower bound" in text
    (entry,) = load_report(pytester.path / "r.json")["calibration"]  # schema-checked
    assert entry["pairs"] == 10 and entry["alpha"] == pytest.approx(alpha(gold, JUDGE))
    assert entry["failures"] and entry["worst"][0]["sample_id"] == "s0"
    assert entry["tnr"]["total"] == 5 and entry["tpr"]["total"] == 5
    markdown = (pytester.path / "r.md").read_text(encoding="utf-8")
    assert "## Judge agreement" in markdown and "FAILED gate: alpha's 95% interval" in markdown
    page = (pytester.path / "r.html").read_text(encoding="utf-8")
    assert "<h2>Judge agreement</h2>" in page and "s9: 5 vs 1, quality: because-9" in page
    assert "FAILED gate: alpha's 95% interval lower bound" in text and "< --omk-min-agreement 0.6" in text
    assert f"alpha {alpha(gold, JUDGE):.3f}" in text
    # The largest disagreements first, with the judge's reason (|gold - judge| = 4: s0, s5, s9).
    assert "s0: 1 vs 5, quality: because-0" in text
    assert "s9: 5 vs 1, quality: because-9" in text


def test_a_lenient_judge_fails_the_true_negative_gate(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    lenient = [5, 4, 5, 4, 4, 5, 4, 4, 5, 5]
    record(pytester, omk_run, fake_llm, monkeypatch, lenient)
    gold = [5, 2, 5, 2, 1, 5, 1, 2, 5, 5]  # every gold fail is a judge pass; the order is right
    gold_dir(pytester, gold)
    result = replay(omk_run, "--omk-gold=gold", "--omk-min-tnr=0.5")
    assert result.ret == 1  # every sample passes (judge >= 3): the calibration item alone fails
    text = result.stdout.str()
    assert "FAILED gold::judge-agreement" in text
    assert (
        "TNR 0.00 (0/5" in text
        and "FAILED gate: TNR 95% interval lower bound 0.000 < --omk-min-tnr 0.5" in text
    )
    assert "TPR 1.00 (5/5" in text


def test_gold_ids_not_collected_or_not_judged_are_listed(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    record(pytester, omk_run, fake_llm, monkeypatch, JUDGE)
    directory = gold_dir(pytester, JUDGE)
    (directory / "more.yaml").write_text("annotations:\n  - {sample_id: ghost, score: 3}\n", encoding="utf-8")
    result = replay(omk_run, "--omk-gold=gold")
    assert "PASSED gold::judge-agreement" in result.stdout.str()
    assert "not collected (1): ghost" in result.stdout.str()


def test_an_invalid_gold_set_is_a_usage_error_naming_file_and_index(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    write_sample_set(pytester, sample("s0", "q"))
    directory = gold_dir(pytester, [4, 3])
    (directory / "labels.yaml").write_text(
        "annotations:\n  - {sample_id: a, score: 4}\n  - {sample_id: b, score: .nan}\n"
    )
    result = omk_run("--omk-executor=echo", f"--omk-gold={directory}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "labels.yaml: annotations[1]: score is required and must be a finite number" in err
    assert "Traceback" not in err


@pytest.mark.multiprocess
def test_under_xdist_the_controller_computes_and_gates(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    lenient = [5, 4, 5, 4, 4, 5, 4, 4, 5, 5]
    record(pytester, omk_run, fake_llm, monkeypatch, lenient)
    gold_dir(pytester, [5, 2, 5, 2, 1, 5, 1, 2, 5, 5])
    result = replay(omk_run, "--omk-gold=gold", "--omk-min-tnr=0.5", "-n", "2", "--omk-report=r.json")
    assert result.ret == 1, result.stdout.str()  # every sample passed: the gate failed the run
    assert result.parseoutcomes().get("passed") == 10
    text = result.stdout.str()
    assert "omk judge agreement" in text and "FAILED gate: TNR 95% interval lower bound 0.000" in text
    assert load_report(pytester.path / "r.json")["calibration"][0]["tnr"]["hits"] == 0


def test_the_worked_example_runs_offline_and_shows_the_lenient_judge(
    pytester: pytest.Pytester, omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``pytest examples/judge-calibration`` (docs/judge.md): replay only, no key, no network."""
    shutil.copytree(Path(__file__).resolve().parents[2] / "examples" / "judge-calibration", pytester.path,
                    dirs_exist_ok=True)  # fmt: skip
    monkeypatch.setenv("CI", "true")
    result = omk_run("--omk-record-mode=none", "--omk-report=r.json")
    assert result.ret == 1
    assert result.parseoutcomes().get("passed") == 8, result.stdout.str()
    text = result.stdout.str()
    assert "FAILED gold::judge-agreement - FAILED gate: TNR 95% interval lower bound 0.000" in text
    assert "TNR 0.00 (0/3" in text and "model calls: 0 live, 16 replayed" in text
    assert load_report(pytester.path / "r.json")["calibration"][0]["annotator"] == "support-team-lead"


def test_one_item_per_variant_selectable_with_k_and_the_contamination_warning(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    (pytester.path / "terse.md").write_text("Be terse.", encoding="utf-8")
    (pytester.path / "chatty.md").write_text("Be chatty.", encoding="utf-8")
    variants = ("--omk-variant=terse=terse.md", "--omk-variant=chatty=chatty.md")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-gold-variants-77aa")
    samples = []
    for i, score in enumerate(JUDGE[:4]):
        fake_llm.add_rule(f"ANSWER{i:02d}", json.dumps({"score": score, "reason": f"r{i}"}), system="judge")
        fake_llm.add_rule(f"QUESTION{i:02d}", f"ANSWER{i:02d}")
        samples.append(
            sample(f"s{i}", f"QUESTION{i:02d}", rubric={"quality": {"criterion": "good", "weight": 1}})
        )
    write_sample_set(pytester, *samples)
    args = (
        "--omk-executor=openai",
        "--omk-judge=openai",
        "--omk-judge-model=gpt-4o",
        "--omk-recordings=rec",
        *variants,
    )
    assert omk_run(*args, "--omk-record-mode=all").ret in (0, 1)
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("CI", "true")
    gold_dir(pytester, JUDGE[:4], annotator="GPT-4o")  # the judge model labelled its own answers

    result = omk_run(*args, "--omk-record-mode=none", "--omk-gold=gold", "-rA")
    text = result.stdout.str()
    assert "PASSED gold::judge-agreement[terse]" in text and "PASSED gold::judge-agreement[chatty]" in text
    assert text.count("judge agreement (variant terse): 4 pairs") >= 1
    assert 'warning: gold annotator "GPT-4o" overlaps with judge model "gpt-4o"' in text

    skipped = omk_run(*args, "--omk-record-mode=none", "--omk-gold=gold", "-k", "not judge-agreement")
    assert skipped.parseoutcomes().get("deselected") == 2, skipped.stdout.str()
    only = omk_run(
        *args, "--omk-record-mode=none", "--omk-gold=gold", "-k", "judge-agreement and chatty", "-rA"
    )
    outcomes = only.parseoutcomes()
    assert outcomes.get("passed") == 1 and outcomes.get("deselected") == 9, only.stdout.str()
    # Its samples did not run, so every label is listed as not collected, never silently dropped.
    assert "not collected (4): s0, s1, s2, s3" in only.stdout.str()
