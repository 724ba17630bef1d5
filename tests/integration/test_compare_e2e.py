"""End to end: variants (A/B) over recorded outputs, repeats with a flaky executor, baselines and the
regression gate, with and without xdist.

The model under test is a Python callable defined in the pytester directory's ``conftest.py``: it
answers from ``outputs.json`` (system prompt → sample id → output, or a list of outputs indexed by
the repeat index), read at every call so a test can change the answers between runs. Expected
numbers are computed here, independently of the plugin's code.
"""

from __future__ import annotations

import json
import random
import statistics
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.support.runner import run_pytest
from tests.support.wrapped import unwrapped

REPO = Path(__file__).resolve().parents[2]
REPORT_SCHEMA = REPO / "schemas" / "report" / "v1" / "report.schema.json"
SCHEMA_VERSION = "omk.eval-sample-set/v2"
# The documented bootstrap procedure (docs/comparisons.md): these numbers are part of the contract.
RESAMPLES = 10_000
SEED = 20_240_611

CONFTEST = """
import json
import pathlib

HERE = pathlib.Path(__file__).parent


def answer(request):
    script = json.loads((HERE / "outputs.json").read_text(encoding="utf-8"))
    output = script[request.system or ""][request.sample_id]
    return output[request.repeat % len(output)] if isinstance(output, list) else output


def pytest_omk_make_executor(config):
    return answer
"""

WORDS = ("alpha", "beta", "gamma", "delta")


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """No judge is auto-selected and nothing reaches a provider."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def half_up(x: float, places: str = "0.01") -> float:
    return float(Decimal(x).quantize(Decimal(places), rounding=ROUND_HALF_UP))


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return run_pytest(pytester, "-p", "no:cacheprovider", *args)


def write(pytester: pytest.Pytester, name: str, content: Any) -> Path:
    path = pytester.path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content if isinstance(content, str) else json.dumps(content, indent=2), encoding="utf-8")
    return path


def load_report(path: Path) -> dict[str, Any]:
    """Load a report and validate it against the shipped schema."""
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    schema = json.loads(REPORT_SCHEMA.read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(document)]
    assert not errors, "report does not match its schema:\n" + "\n".join(errors)
    return document


def samples_doc(samples: list[dict[str, Any]]) -> dict[str, Any]:
    return {"schemaVersion": SCHEMA_VERSION, "samples": samples}


# --- variants -----------------------------------------------------------------------------------

# How many of the four words each variant's answer contains, per sample: composite = mean(fact, behavior).
A_WORDS = [2, 3, 1, 4, 2, 3]
B_WORDS = [3, 4, 3, 4, 4, 3]
LONG = "x" * 80  # breaks the max_length assertion (behavior layer) of variant A's sample s5
LONG_AT = 5


def _ab_setup(pytester: pytest.Pytester) -> None:
    write(pytester, "conftest.py", CONFTEST)
    write(pytester, "prompts/a.md", "Answer tersely.")
    write(pytester, "prompts/b.md", "Answer fully.")
    samples: list[dict[str, Any]] = [
        {
            "sample_id": f"s{i}",
            "prompt": f"question {i}",
            "capability": ["recall"] if i % 2 else ["reasoning"],
            "difficulty": "easy" if i < 3 else "hard",
            "assertions": [
                *({"type": "contains", "value": w} for w in WORDS),
                {"type": "max_length", "value": 60},
            ],
        }
        for i in range(6)
    ]
    write(pytester, "eval-samples.json", samples_doc(samples))
    outputs = {
        "Answer tersely.": {
            f"s{i}": " ".join(WORDS[:k]) + (LONG if i == LONG_AT else "") for i, k in enumerate(A_WORDS)
        },
        "Answer fully.": {f"s{i}": " ".join(WORDS[:k]) for i, k in enumerate(B_WORDS)},
    }
    write(pytester, "outputs.json", outputs)
    write(
        pytester,
        "pytest.ini",
        "[pytest]\nomk_variants =\n    A=prompts/a.md\n    B=prompts/b.md\nomk_recordings = recordings\n",
    )


def _expected_composites(words: list[int], long_at: int | None) -> list[float]:
    composites = []
    for i, k in enumerate(words):
        fact = half_up(1 + 4 * k / 4)
        behavior = 1.0 if i == long_at else 5.0
        composites.append(half_up((fact + behavior) / 2))
    return composites


def _expected_interval(differences: list[float]) -> tuple[float, float]:
    rng = random.Random(SEED)
    means = [statistics.fmean(rng.choices(differences, k=len(differences))) for _ in range(RESAMPLES)]
    cuts = statistics.quantiles(means, n=40, method="inclusive")
    return half_up(cuts[0]), half_up(cuts[-1])


def _strip_volatile(document: dict[str, Any]) -> dict[str, Any]:
    document = {k: v for k, v in document.items() if k not in ("createdAt", "startedAt", "durationS")}
    for sample in document["samples"]:
        if sample["execution"]:
            sample["execution"]["latencyMs"] = None
    return document


@pytest.mark.parametrize(
    "workers", [None, pytest.param("2", marks=pytest.mark.multiprocess)], ids=["serial", "xdist"]
)
def test_two_variants_over_recorded_outputs(pytester: pytest.Pytester, workers: str | None) -> None:
    pytest.importorskip("xdist")
    _ab_setup(pytester)
    xdist = ["-n", workers] if workers else []
    # The hook's canned executor stands in for a model: its whole answers are recorded (an app's
    # are only on request, keyed by its source: the conftest here).
    recorded = run(pytester, "--omk-record-mode=new_episodes", "--omk-app-record=answers", *xdist)
    assert len(list((pytester.path / "recordings").rglob("*.json"))) == 12  # 6 samples x 2 variants
    # Replay only: the executor has no answers left, so a live call would fail the run.
    (pytester.path / "outputs.json").write_text("{}", encoding="utf-8")
    result = run(
        pytester,
        "--omk-record-mode=none",
        "--omk-app-record=answers",
        "--omk-report=ab.json",
        "-v",
        "--junitxml=ab.xml",
        *xdist,
    )
    assert result.parseoutcomes()["failed"] == recorded.parseoutcomes()["failed"]

    a = _expected_composites(A_WORDS, LONG_AT)
    b = _expected_composites(B_WORDS, None)
    a_fails = sum(k < 4 or i == LONG_AT for i, k in enumerate(A_WORDS))
    b_fails = sum(k < 4 for k in B_WORDS)
    # Each missing word fails one contains subtest; A's long answer also fails max_length.
    failed_subtests = sum(4 - k for k in A_WORDS) + 1 + sum(4 - k for k in B_WORDS)
    result.assert_outcomes(passed=12 - a_fails - b_fails, failed=a_fails + b_fails + failed_subtests)
    result.stdout.fnmatch_lines(["FAILED eval-samples.json::s0[[]A[]] - *"])
    result.stdout.no_fnmatch_line("FAILED eval-samples.json::s3[[]B[]]*")

    differences = [y - x for x, y in zip(a, b, strict=True)]
    mean_a, mean_b = half_up(statistics.fmean(a)), half_up(statistics.fmean(b))
    mean_diff = half_up(statistics.fmean(differences))
    low, high = _expected_interval(differences)
    expected_verdict = "better" if low > 0 else "worse" if high < 0 else "no clear difference"
    assert expected_verdict == "better"  # the fixture is built so that B is clearly better

    report = load_report(pytester.path / "ab.json")
    [va, vb] = report["variants"]
    assert (va["name"], va["path"], va["samples"]) == ("A", "prompts/a.md", 6)
    assert (va["means"]["composite"], vb["means"]["composite"]) == (mean_a, mean_b)
    [comparison] = report["comparisons"]
    assert comparison["variant"] == "B" and comparison["reference"] == "A" and comparison["pairs"] == 6
    assert comparison["meanDifference"] == mean_diff
    assert comparison["interval"] == {"low": low, "high": high, "confidence": 0.95}
    assert comparison["verdict"] == expected_verdict
    assert {s["variant"] for s in report["samples"]} == {"A", "B"}
    assert all(s["execution"]["replayed"] for s in report["samples"])
    result.stdout.fnmatch_lines(
        [
            "*variants (mean over samples):*",
            f"*A * 6 * {6 - a_fails} * {a_fails} * {mean_a:.2f}",
            f"*B * 6 * {6 - b_fails} * {b_fails} * {mean_b:.2f}",
            f"*B - A: {mean_diff:+.2f} [[]{low:+.2f}, {high:+.2f}[]] over 6 samples: better",
            "coverage by capability:",
        ]
    )
    capability = {(r["name"], r["variant"]): r for r in report["coverage"]["capability"]}
    recall_b = [b[i] for i in range(6) if i % 2]
    assert capability[("recall", "B")]["composite"] == half_up(statistics.fmean(recall_b))
    assert capability[("recall", "B")]["passRate"] == half_up(sum(B_WORDS[i] == 4 for i in (1, 3, 5)) / 3)
    assert '::omk.variant" value="B" />' in (pytester.path / "ab.xml").read_text(encoding="utf-8")
    if workers:
        serial = run(
            pytester, "--omk-record-mode=none", "--omk-app-record=answers", "--omk-report=serial.json"
        )
        assert serial.ret == result.ret
        assert _strip_volatile(load_report(pytester.path / "serial.json")) == _strip_volatile(report)


def test_variants_replace_a_skill_prompt_and_bad_specs_are_usage_errors(pytester: pytest.Pytester) -> None:
    write(pytester, "conftest.py", CONFTEST)
    write(pytester, "skill/SKILL.md", "Skill text.")
    write(pytester, "skill/.omk/eval-samples.json", samples_doc([{"sample_id": "k", "prompt": "p"}]))
    write(pytester, "v.md", "Variant text.")
    write(
        pytester, "outputs.json", {"Skill text.": {"k": "from skill"}, "Variant text.": {"k": "from variant"}}
    )
    plain = run(pytester, "--omk-record-mode=off", "--omk-report=plain.json")
    plain.assert_outcomes(passed=1)
    assert load_report(pytester.path / "plain.json")["samples"][0]["execution"]["output"] == "from skill"
    varied = run(pytester, "--omk-record-mode=off", "--omk-variant", "only=v.md", "--omk-report=v.json")
    varied.assert_outcomes(passed=1)
    [sample] = load_report(pytester.path / "v.json")["samples"]
    assert (sample["nodeid"], sample["variant"], sample["execution"]["output"]) == (
        "skill/.omk/eval-samples.json::k[only]",
        "only",
        "from variant",
    )
    for args, message in [
        (["--omk-variant", "x=missing.md"], "does not exist"),
        (["--omk-variant", "x=v.md", "--omk-variant", "x=v.md"], "given twice"),
        (["--omk-variant", "nonsense"], "NAME=PATH"),
        (["--omk-repeat", "0"], "--omk-repeat must be an integer >= 1 or 'auto', not '0'"),
        (["--omk-min-pass-rate", "1.5"], "between 0 and 1"),
        (["--omk-fail-on-regression", "0.1"], "needs --omk-baseline"),
        (["--omk-baseline", "nope.json"], "cannot read"),
    ]:
        result = run(pytester, "--omk-record-mode=off", *args)
        assert result.ret == pytest.ExitCode.USAGE_ERROR, args
        assert message in result.stderr.str() + result.stdout.str(), args


# --- repeats ------------------------------------------------------------------------------------


def _repeat_setup(pytester: pytest.Pytester) -> None:
    write(pytester, "conftest.py", CONFTEST)
    samples: list[dict[str, Any]] = [
        {
            "sample_id": "flaky",
            "prompt": "p",
            "assertions": [{"type": "contains", "value": "ok"}, {"type": "max_length", "value": 50}],
        },
        {"sample_id": "steady", "prompt": "p", "assertions": [{"type": "contains", "value": "ok"}]},
    ]
    write(pytester, "eval-samples.json", samples_doc(samples))
    # flaky passes in runs 0, 2 and 3 of 5; its behavior check always passes.
    write(pytester, "outputs.json", {"": {"flaky": ["ok", "no", "ok", "ok", "no"], "steady": ["ok"]}})


@pytest.mark.parametrize(
    "workers", [None, pytest.param("2", marks=pytest.mark.multiprocess)], ids=["serial", "xdist"]
)
def test_repeats_with_a_flaky_executor(pytester: pytest.Pytester, workers: str | None) -> None:
    pytest.importorskip("xdist")
    _repeat_setup(pytester)
    xdist = ["-n", workers] if workers else []
    result = run(
        pytester,
        "--omk-record-mode=off",
        "--omk-repeat=5",
        "--omk-report=r.json",
        "-v",
        "--junitxml=r.xml",
        *xdist,
    )
    # Default --omk-min-pass-rate 1: flaky fails (its contains subtest too), steady passes.
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*passed 3/5 runs, below --omk-min-pass-rate 1; run 1: expected the output to contain 'ok'*",
            "*pass rate 0.60 (3/5 runs) is below --omk-min-pass-rate 1; pass^5: no; composite 4.20 ± 1.095*",
        ]
    )
    report = load_report(pytester.path / "r.json")
    flaky, steady = report["samples"]
    repeats = flaky["repeats"]
    assert (repeats["n"], repeats["passed"], repeats["passRate"], repeats["passAll"]) == (5, 3, 0.6, False)
    # Per-run composites: mean(fact, behavior) = 5 in passing runs, (1 + 5) / 2 = 3 in failing runs.
    composites = [5.0, 3.0, 5.0, 5.0, 3.0]
    assert repeats["composite"] == {
        "mean": half_up(statistics.fmean(composites)),
        "sd": half_up(statistics.stdev(composites), "0.001"),
    }
    assert repeats["fact"]["mean"] == half_up(statistics.fmean([5.0, 1.0, 5.0, 5.0, 1.0]))
    assert repeats["behavior"] == {"mean": 5.0, "sd": 0.0}
    assert flaky["scores"]["composite"] == 4.2
    assert flaky["assertions"][0]["runs"] == {"pass": 3, "fail": 2, "missing": 0}
    assert flaky["assertions"][1]["status"] == "pass"
    assert [run["passed"] for run in repeats["runs"]] == [True, False, True, True, False]
    assert steady["repeats"]["passAll"] is True and steady["repeats"]["passRate"] == 1.0
    # The hook's app is scripted: it runs for each of the 5 rounds and asks no model.
    assert flaky["modelCalls"] == {"live": 0, "replayed": 0}
    junit = (pytester.path / "r.xml").read_text(encoding="utf-8")
    assert 'omk.repeat.pass_rate" value="0.60" />' in junit
    assert 'omk.repeat.pass_all" value="false" />' in junit

    if not workers:
        lenient = run(pytester, "--omk-record-mode=off", "--omk-repeat=5", "--omk-min-pass-rate=0.6")
        lenient.assert_outcomes(passed=2)


def test_each_repeat_is_its_own_recording(pytester: pytest.Pytester) -> None:
    _repeat_setup(pytester)
    first = run(
        pytester,
        "--omk-record-mode=new_episodes",
        "--omk-app-record=answers",  # the hook's canned executor stands in for a model
        "--omk-recordings=rec",
        "--omk-repeat=5",
        "--omk-min-pass-rate=0.6",
    )
    first.assert_outcomes(passed=2)
    assert len(list((pytester.path / "rec").rglob("*.json"))) == 10
    (pytester.path / "outputs.json").write_text("{}", encoding="utf-8")
    replay = run(
        pytester,
        "--omk-record-mode=none",
        "--omk-app-record=answers",
        "--omk-recordings=rec",
        "--omk-repeat=5",
        "--omk-report=r.json",
    )
    replay.assert_outcomes(passed=1, failed=2)
    assert load_report(pytester.path / "r.json")["samples"][0]["repeats"]["passed"] == 3


def test_repeat_one_adds_nothing(pytester: pytest.Pytester) -> None:
    _repeat_setup(pytester)
    result = run(pytester, "--omk-record-mode=off", "--omk-report=r.json", "-v")
    result.assert_outcomes(passed=2)
    result.stdout.no_fnmatch_line("*runs*")
    assert all(s["repeats"] is None for s in load_report(pytester.path / "r.json")["samples"])


# --- baseline and the regression gate -----------------------------------------------------------


def _baseline_setup(pytester: pytest.Pytester) -> None:
    write(pytester, "conftest.py", CONFTEST)
    samples: list[dict[str, Any]] = [
        {
            "sample_id": f"s{i}",
            "prompt": "p",
            "assertions": [{"type": "contains", "value": "good"}, {"type": "max_length", "value": 40}],
        }
        for i in range(3)
    ]
    samples.append(
        {
            "sample_id": "trip",
            "prompt": "p",
            "tripwire": True,
            "assertions": [{"type": "contains", "value": "good"}, {"type": "contains", "value": "never"}],
        }
    )
    write(pytester, "eval-samples.json", samples_doc(samples))
    write(pytester, "outputs.json", {"": {"s0": "good", "s1": "good", "s2": "good", "trip": "good"}})
    baseline = run(pytester, "--omk-record-mode=off", "--omk-report=baseline.json")
    baseline.assert_outcomes(passed=3, xfailed=1)


@pytest.mark.parametrize(
    "workers", [None, pytest.param("2", marks=pytest.mark.multiprocess)], ids=["serial", "xdist"]
)
def test_baseline_gate_fails_on_an_injected_regression(
    pytester: pytest.Pytester, workers: str | None
) -> None:
    pytest.importorskip("xdist")
    _baseline_setup(pytester)
    xdist = ["-n", workers] if workers else []
    gate = ["--omk-record-mode=off", "--omk-baseline=baseline.json", "--omk-fail-on-regression=0.1", *xdist]

    same = run(pytester, *gate, "--omk-report=same.json")
    assert same.ret == pytest.ExitCode.OK
    unwrapped(same).fnmatch_lines(
        ["baseline baseline.json: 4 samples matched, 0 new, 0 not run", "*mean delta: composite +0.00*"]
    )
    assert load_report(pytester.path / "same.json")["baseline"]["regressions"] == []

    write(pytester, "outputs.json", {"": {"s0": "good", "s1": "good", "s2": "bad", "trip": "good"}})
    regressed = run(pytester, *gate, "--omk-report=regressed.json")
    assert regressed.ret != pytest.ExitCode.OK
    # Layer means cover the four matched samples: the tripwire's composite (its fact score) is 3.
    unwrapped(regressed).fnmatch_lines(
        [
            "*changed: eval-samples.json::s2  passed -> failed  composite 5.00 -> 3.00 (-2.00)",
            "omk: regression against baseline baseline.json: sample eval-samples.json::s2 passed -> failed "
            "(composite 5.00 -> 3.00, fact 5.00 -> 1.00); "
            "layer composite mean 4.50 -> 4.00 (-0.50, allowed -0.1); layer fact mean 4.50 -> 3.50 (-1.00, allowed -0.1)*",
        ]
    )
    section = load_report(pytester.path / "regressed.json")["baseline"]
    sample_regressions = [r for r in section["regressions"] if r["kind"] == "sample"]
    assert [(r["sample_id"], "fact" in r["layers"]) for r in sample_regressions] == [("s2", True)]


def test_the_gate_alone_sets_the_exit_code(pytester: pytest.Pytester) -> None:
    """A tripwire's checks failing is no test failure, but its layer drop is a regression."""
    _baseline_setup(pytester)
    write(pytester, "outputs.json", {"": {"s0": "good", "s1": "good", "s2": "good", "trip": "bad"}})
    without_gate = run(pytester, "--omk-record-mode=off", "--omk-baseline=baseline.json")
    assert without_gate.ret == pytest.ExitCode.OK
    unwrapped(without_gate).fnmatch_lines(
        ["*mean delta: composite -0.50  fact -0.50  behavior +0.00  judge -"]
    )
    gated = run(
        pytester,
        "--omk-record-mode=off",
        "--omk-baseline=baseline.json",
        "--omk-fail-on-regression=0.2",
        "-q",
    )
    assert gated.parseoutcomes()["passed"] == 3
    assert gated.ret == pytest.ExitCode.TESTS_FAILED
    unwrapped(gated).fnmatch_lines(["*layer fact mean 4.50 -> 4.00 (-0.50, allowed -0.2)*"])


# --- the worked example -------------------------------------------------------------------------


def test_ab_example_runs_offline_from_its_recordings(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``pytest examples/ab-compare -v`` (README, docs/comparisons.md): replay only, no key, no network."""
    example = REPO / "examples" / "ab-compare"
    # No OPENAI_BASE_URL or key (the autouse fixture clears them): the recordings are keyed to the
    # default endpoint, and the example's record mode "none" holds no transport, so nothing is called.
    result = run(pytester, str(example), "-v", f"--omk-report={pytester.path / 'ab.json'}")
    result.assert_outcomes(passed=11, failed=10)
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # on purpose, as README says
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "**fails on purpose**, exit code 1" in readme
    assert "`10 failed, 11 passed, 45 subtests passed`" in readme
    result.stdout.fnmatch_lines(
        [
            "*model calls: 0 live, 16 replayed*",
            "  detailed - concise: +0.33 [[]-0.13, +0.75[]] over 8 samples: no clear difference",
            "coverage by capability:",
            "*= 10 failed, 11 passed, 45 subtests passed in *",
        ]
    )
    report = load_report(pytester.path / "ab.json")
    assert [v["name"] for v in report["variants"]] == ["concise", "detailed"]
    assert report["comparisons"][0]["verdict"] == "no clear difference"
