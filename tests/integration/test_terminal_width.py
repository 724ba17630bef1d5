"""At 80 columns every line pytest-omk prints itself fits, and nothing it says is lost (issue 51).

One run with long sample ids, a long baseline path, samples carried by ``--omk-changed``, many
samples changed against the baseline, the regression gate, known failures, mutation, a budget and
a shard cut by durations; another with live calls to a model of a long name that also judges:
every line of pytest-omk's own in the header and in its summary sections is at most 80 columns,
and each of its messages is still there whole once its wrapped lines are joined again
(tests/support/wrapped.py).
"""

from __future__ import annotations

import json

import pytest

from tests.fakes.fake_llm import FakeLLM
from tests.support import load_report, run_pytest, sample, write_sample_set
from tests.support.wrapped import unwrapped

CONFTEST = """
def answer(request):
    return "alpha beta" if "good" in request.prompt else "gamma"


def pytest_omk_make_executor(config):
    return answer
"""

BASELINE = "baselines/main-branch/nightly/report-of-the-previous-nightly-run.json"
STEM = "refund-policy-for-annual-plans-after-45-days"
CHECK = [{"type": "contains", "value": "alpha"}]
LOOSE = [{"type": "max_length", "value": 2000}]
PYTEST_HEADER = ("platform ", "cachedir:", "metadata:", "rootdir:", "configfile:", "testpaths:", "plugins:")
"""pytest's own header lines (and pytest-metadata's): not pytest-omk's to wrap."""


def sid(i: int) -> str:
    return f"{STEM}-{i:02d}"


def nodeid(i: int) -> str:
    return f"eval-samples.json::{sid(i)}"


def write_project(pytester: pytest.Pytester, prompts: dict[int, str]) -> None:
    """Samples 0-2 check for ``alpha``; 3-5 only a length (their checks catch no mutant); 6-9 as 0-2."""
    write_sample_set(
        pytester,
        *(
            sample(sid(i), prompt, assertions=LOOSE if 3 <= i <= 5 else CHECK)
            for i, prompt in prompts.items()
        ),
    )


def own_lines(lines: list[str]) -> list[str]:
    """Everything the run printed up to pytest's short summary or last line, but pytest's own
    header lines and its warnings summary (which pytest prints as they are)."""
    start = next(i for i, line in enumerate(lines) if "test session starts" in line)
    end = next((i for i, line in enumerate(lines) if "short test summary info" in line), len(lines) - 1)
    kept = [line for line in lines[start + 1 : end] if not line.startswith(PYTEST_HEADER)]
    if any("warnings summary" in line for line in kept):
        first = next(i for i, line in enumerate(kept) if "warnings summary" in line)
        last = next(i for i, line in enumerate(kept) if line.startswith("-- Docs:"))
        del kept[first : last + 1]
    return kept


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """In CI, the ini file's record mode set aside (the header says so)."""
    return run_pytest(pytester, "-p", "no:cacheprovider", *args, ci=True)


def test_every_line_of_its_own_fits_80_columns_and_says_everything(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    pytester.makeconftest(CONFTEST)
    pytester.makeini("[pytest]\nomk_record_mode = none\n")
    (pytester.path / BASELINE).parent.mkdir(parents=True)
    # The baseline: 0-8 pass, 9 fails.
    write_project(pytester, {i: f"good {i}" if i < 9 else "bad 9" for i in range(10)})
    assert run(pytester, f"--omk-report={BASELINE}").ret == pytest.ExitCode.TESTS_FAILED
    durations = {nodeid(i): 1.0 + i for i in range(10)}
    (pytester.path / ".test_durations").write_text(json.dumps(durations), encoding="utf-8")

    # 0-2 now fail (regressions), 3-5 are edited and still pass, 6-8 are unchanged (carried), and
    # 9 is edited and fails again (a known failure).
    prompts = {i: "bad edited" for i in range(3)}
    prompts |= {i: f"good edited {i}" for i in range(3, 6)}
    prompts |= {i: f"good {i}" for i in range(6, 9)} | {9: "bad 9 edited"}
    write_project(pytester, prompts)
    result = run(
        pytester, f"--omk-baseline={BASELINE}", "--omk-changed", "--omk-fail-on-regression=0.1",
        "--omk-known-failures=xfail", "--omk-mutate", "--omk-budget-usd=1.5",
        "--omk-shard=1/1", "--omk-shard-by=durations", "--omk-report=new.json", "--tb=no", "-rfE",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.TESTS_FAILED

    lines = own_lines(result.outlines)
    too_wide = [line for line in lines if len(line) > 80]
    assert not too_wide, "\n".join(lines)

    shown = unwrapped(lines)
    shown.fnmatch_lines(
        [
            "omk: CI is set, so ini key omk_record_mode = none is ignored and every call replays "
            "(--omk-record-mode or OMK_RECORD_MODE records in CI)",
            "omk: executor from the pytest_omk_make_executor hook in conftest.py",
            "omk: the app answers every sample live; its model calls replay from the recordings only "
            "(record mode none)",
            "omk: --omk-changed digests the app's module file (more: --omk-app-digest)",
            "omk: shard 1/1, cut by durations",
            "collected 10 items / 3 deselected / 7 selected",
            "omk: shard 1/1: 10 items by durations, 55.0s of 55.0s recorded (100.0%; 10 items weighed, "
            "the others at the mean)",
            "omk: budget of shard 1/1: $1.50 of $1.50 (100.0% of the weight)",
        ]
    )
    shown.fnmatch_lines(
        [
            "omk known failures (--omk-known-failures=xfail, baseline "
            f"{BASELINE}): 1 failed again (xfail), 0 pass now (xpass)",
            "*= omk scores =*",
            "(node ids below start with eval-samples.json::)",
            *(f"{sid(i)}" for i in range(3)),
            "model calls: 0 live, 0 replayed  cost: -",
            f"--omk-changed: 3 carried from {BASELINE} (inputs unchanged; not run)",
            "omk budget: $0 of $1.50 spent on 0 live calls (model 0, judge 0); every sample ran",
            "*= omk mutation =*",
            *(f"{nodeid(i)}: caught 0/2 mutants; escaped: truncate, empty  WEAK" for i in range(3, 6)),
            "mutation: 3 samples assessed, 0/6 mutants caught, 3 weak (checks that pass every mutant)",
            "weak samples: " + ", ".join(nodeid(i) for i in range(3, 6)),
            f"baseline {BASELINE}: 10 samples matched, 0 new, 0 not run",
            *(f"  changed: {nodeid(i)}  passed -> failed  composite 5.00 -> 1.00 (-4.00)" for i in range(3)),
            f"omk: regression against baseline {BASELINE}: "
            + "; ".join(
                f"sample {nodeid(i)} passed -> failed (composite 5.00 -> 1.00, fact 5.00 -> 1.00)"
                for i in range(3)
            )
            + "; layer composite mean *",
        ]
    )
    report = load_report(pytester.path / "new.json")
    assert sum(1 for s in report["samples"] if s.get("carried")) == 3


MODEL = "Meta-Llama-3.1-70B-Instruct-Q4_K_M-imatrix-calibrated-2026-11.gguf"


def test_a_live_run_with_a_long_model_name_fits_80_columns_too(
    pytester: pytest.Pytester, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The calls and cost by role, the budget's lines and the warning that names the model."""
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-terminal-width-test-3e9a14")
    fake_llm.script(default={"text": "alpha beta", "model": MODEL})
    fake_llm.add_rule(
        reply={"text": '{"reasoning": "r", "score": 4, "reason": "ok"}', "model": MODEL}, system="judge"
    )
    rubric = {"clarity": {"criterion": "clear", "weight": 1}}
    write_sample_set(
        pytester, *(sample(sid(i), f"question {i}", assertions=CHECK, rubric=rubric) for i in range(3))
    )
    result = run_pytest(
        pytester, "-p", "no:cacheprovider", "--omk-executor=openai", f"--omk-model={MODEL}",
        "--omk-judge=openai", f"--omk-judge-model={MODEL}", "--omk-budget-usd=2", "--omk-concurrency=1",
        "-rN", record_mode="off",
    )  # fmt: skip
    result.assert_outcomes(passed=3)

    lines = own_lines(result.outlines)
    assert not [line for line in lines if len(line) > 80], "\n".join(lines)
    shown = unwrapped(lines)
    shown.fnmatch_lines(
        [
            "model calls: 6 live, 0 replayed  cost: -",
            "  model under test: 3 calls (3 live, 0 replayed), tokens * in / * out, - (+ 3 of unknown cost)",
            "  judge: 3 calls (3 live, 0 replayed), tokens * in / * out, - (+ 3 of unknown cost)",
            f"warning: the judge is the model under test ('{MODEL}' at {fake_llm.base_url}*): a model grading its "
            "own answers tends to favour them; judge with another model (--omk-judge-model, --omk-judge)",
            "omk budget: $0 of $2.00 spent on 6 live calls (model 3, judge 3); every sample ran",
            "omk budget: 6 unpriced calls (* tokens) are not in the dollar figure: they count by tokens only "
            "(--omk-budget-tokens)",
        ]
    )
