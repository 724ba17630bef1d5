"""Infrastructure failure is never counted as a pass or a model failure, and recordings stay whole.

A run of 40 samples (some with a one- or two-dimension rubric for the LLM judge) against the fake
model server with seeded random faults (429 with ``Retry-After: 0``, 500, hangs past the timeout,
dropped connections, slow and garbage bodies) must grade every sample exactly as a fault-free run
does, or end it in ERROR with a message naming the fault. A few samples are faulted on every call
so that the ERROR path is always exercised. Afterwards the recordings directory holds only complete
recordings of good answers, and replaying it gives the same grades.

Then the SIGKILL case: a recording run killed mid-flight leaves only parseable recordings, the next
``new_episodes`` run completes cleanly and a ``none`` run replays everything.
"""

from __future__ import annotations

import json
import os
import re
import signal
from collections.abc import Mapping
from typing import Any

import pytest

from tests.fakes.fake_llm import FakeLLM, RecordedRequest
from tests.reliability.helpers import audit_recordings, pytest_process, wait_until
from tests.support import OmkRun, load_report, parse_junit, report_samples, write_samples

SAMPLES = 40
JUDGE_SYSTEM = "impartial judge"
SECRET_KEY = "sk-chaos-key-0123456789"

# Samples faulted on every call of theirs (matched on their prompt): these always end in ERROR.
ALWAYS_FAULTED: dict[int, dict[str, Any]] = {
    36: {"kind": "server_error"},
    37: {"kind": "rate_limit", "retry_after": "0"},
    38: {"kind": "garbage"},
    39: {"kind": "drop"},
}
# A sample whose judge call fails every time (matched on its criterion): ERROR from the judge.
JUDGE_DOOMED = 32

# Faults that hit a sample's first attempts only: these samples must recover and grade as usual.
RECOVERED: dict[int, dict[str, Any]] = {
    5: {"kind": "hang", "seconds": 3.0, "first": 1},
    6: {"kind": "slow_body", "seconds": 0.3, "first": 2},
    7: {"kind": "drop", "first": 1},
    10: {"kind": "garbage", "first": 2},
    11: {"kind": "rate_limit", "retry_after": "0", "first": 2},
    13: {"kind": "server_error", "first": 1},
}

# Random faults for every other call, in trigger order (each is tried only when the ones before it
# did not fire). About a third of all calls fail once; one in ~100 calls fails all four attempts.
RANDOM_FAULTS: list[dict[str, Any]] = [
    {"kind": "rate_limit", "retry_after": "0", "probability": 0.08, "seed": 11},
    {"kind": "server_error", "probability": 0.06, "seed": 12},
    {"kind": "unavailable", "probability": 0.03, "seed": 13},
    {"kind": "hang", "seconds": 3.0, "probability": 0.03, "seed": 14},
    {"kind": "drop", "probability": 0.06, "seed": 15},
    {"kind": "garbage", "probability": 0.05, "seed": 16},
    {"kind": "slow_body", "seconds": 0.02, "probability": 0.05, "seed": 17},
    {"kind": "slow_body", "seconds": 0.3, "probability": 0.03, "seed": 18},
]

# What an ERROR message says for each fault (the last attempt's fault is the one reported).
FAULT_MESSAGES = {
    "rate_limit": r"API error 429",
    "server_error": r"API error 500",
    "unavailable": r"API error 503",
    "hang": r"timed out after 2s",
    "drop": r"connection dropped",
    "garbage": r"malformed response",
    "slow_body": r"timed out after 2s",
}
ANY_FAULT = re.compile("|".join(f"(?:{p})" for p in FAULT_MESSAGES.values()))


def prompt(i: int) -> str:
    return f"Question {i:02d}: what colour is item {i}?"


def answer(i: int) -> str:
    return f"Answer {i:02d}: item {i} is {'blue' if i % 3 == 0 else 'red'}."


def rubric(i: int) -> dict[str, Any] | None:
    if i == JUDGE_DOOMED:
        return {"accuracy": {"criterion": f"Criterion doomed-{i}: names the colour", "weight": 1}}
    if i % 8 == 0:
        return {
            "accuracy": {"criterion": f"Criterion accurate-{i}: names the colour", "weight": 0.6},
            "tone": {"criterion": f"Criterion tone-{i}: sounds friendly", "weight": 0.4},
        }
    if i % 4 == 0:
        return {"accuracy": {"criterion": f"Criterion accurate-{i}: names the colour", "weight": 1}}
    return None


def samples_document() -> dict[str, Any]:
    samples = []
    for i in range(SAMPLES):
        sample: dict[str, Any] = {
            "sample_id": f"s{i:02d}",
            "prompt": prompt(i),
            # Every third answer says "blue": a model failure, which faults must never hide or fake.
            "assertions": [{"type": "contains", "value": f"item {i}"}, {"type": "contains", "value": "red"}],
        }
        if rubric(i):
            sample["rubric"] = rubric(i)
        samples.append(sample)
    return {"schemaVersion": "omk.eval-sample-set/v2", "samples": samples}


def _executor_call(request: RecordedRequest) -> bool:
    return JUDGE_SYSTEM not in request.system


def script(llm: FakeLLM, *, faults: bool, latency: float = 0.0) -> None:
    llm.script(default="unscripted", latency=latency)
    for i in range(SAMPLES):
        llm.add_rule(f"Question {i:02d}:", answer(i), predicate=_executor_call)
    verdicts = {"accurate": (4, "names the colour"), "tone": (2, "curt"), "doomed": (5, "unreachable")}
    for word, (score, reason) in verdicts.items():
        llm.add_rule(
            f"Criterion {word}-", json.dumps({"score": score, "reason": reason}), system=JUDGE_SYSTEM
        )
    if faults:
        for i, fault in ALWAYS_FAULTED.items():
            llm.inject(dict(fault), every=True, match=f"Question {i:02d}:")
        llm.inject("unavailable", every=True, match=f"Criterion doomed-{JUDGE_DOOMED}")
        for i, spec in RECOVERED.items():
            spec = dict(spec)
            llm.inject(
                spec.pop("kind"), first=spec.pop("first"), match=f"Question {i:02d}:", api="openai", **spec
            )
        for spec in RANDOM_FAULTS:
            spec = dict(spec)
            # The doomed sample's own call is spared: four random faults in a row on it (about one
            # call in a hundred, depending on the order calls arrive in) would end it in an
            # ExecutionError before its judge is ever asked, and the judge's ERROR path untested.
            llm.inject(
                spec.pop("kind"),
                probability=spec.pop("probability"),
                seed=spec.pop("seed"),
                unless=f"Question {JUDGE_DOOMED:02d}:",
                **spec,
            )


@pytest.fixture
def provider_env(fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> FakeLLM:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    return fake_llm


COMMON = (
    "--omk-executor=openai",
    "--omk-model=model-under-test",
    "--omk-judge=openai",
    "--omk-judge-model=judge-model",
    "--omk-retries=3",
    "--omk-timeout=2",
    "--omk-concurrency=8",
    "-p",
    "no:cacheprovider",
)


def graded(entry: Mapping[str, Any]) -> dict[str, Any]:
    """What must not change when faults are injected: outcome, scores, every reading, the output."""
    return {
        "outcome": entry["outcome"],
        "scores": entry["scores"],
        "assertions": [(a["status"], a["message"]) for a in entry["assertions"]],
        "rubric": {k: (v["score"], v["status"], v["reason"]) for k, v in (entry["rubric"] or {}).items()},
        "output": (entry["execution"] or {}).get("output"),
    }


def last_fault(requests: list[RecordedRequest], needle: str, *, judge: bool) -> str:
    """The outcome of the last request whose last user message contains ``needle``."""
    mine = [r for r in requests if needle in r.user and (JUDGE_SYSTEM in r.system) == judge]
    assert mine, f"the fake never saw a request for {needle!r}"
    return mine[-1].outcome


@pytest.mark.slow
def test_faults_never_change_a_grade_and_errors_name_the_fault(
    pytester: pytest.Pytester, omk_run: OmkRun, provider_env: FakeLLM
) -> None:
    llm = provider_env
    write_samples(pytester, "eval-samples.json", samples_document())

    # 1. The reference: no faults.
    script(llm, faults=False)
    clean = omk_run(*COMMON, "--omk-record-mode=off", "--omk-report=clean.json")
    baseline = report_samples(load_report(pytester.path / "clean.json"))
    assert len(baseline) == SAMPLES
    assert {e["outcome"] for e in baseline.values()} == {"passed", "failed"}, clean.stdout.str()
    assert all(e["error"] is None for e in baseline.values())
    assert baseline["s08"]["rubric"]["tone"]["status"] == "fail"  # a judged model failure too

    clean_calls = len(llm.requests)

    # 2. The same run with faults, recording.
    llm.reset()
    script(llm, faults=True)
    chaos = omk_run(
        *COMMON,
        "--omk-record-mode=new_episodes",
        "--omk-recordings=recs",
        "--omk-report=chaos.json",
        "--junitxml=chaos.xml",
        "-rA",
    )
    output = chaos.stdout.str() + chaos.stderr.str()
    assert "Traceback" not in output
    faulted = [r for r in llm.requests if r.outcome != "reply"]
    chaos_calls = len(llm.requests)
    assert len(faulted) >= 20, f"only {len(faulted)} faults were injected: the test proves little"
    assert {r.outcome for r in faulted} >= {
        "rate_limit",
        "server_error",
        "garbage",
        "drop",
        "hang",
        "slow_body",
    }

    report = report_samples(load_report(pytester.path / "chaos.json"))
    junit = parse_junit(pytester.path / "chaos.xml")
    assert set(report) == set(baseline)
    errors: dict[str, str] = {}
    for sid, entry in report.items():
        if entry["outcome"] == "error":
            errors[sid] = entry["error"]
            continue
        # Graded: exactly as without faults (retries are the only trace of them).
        assert graded(entry) == graded(baseline[sid]), sid
        assert entry["error"] is None
    recovered = [sid for sid, e in report.items() if e["outcome"] != "error" and e["execution"]["retries"]]
    for i, spec in RECOVERED.items():
        # Its first attempts failed as scripted (retries may be more, if random faults followed).
        entry = report[f"s{i:02d}"]
        if entry["outcome"] != "error":
            assert entry["execution"]["retries"] >= spec["first"], (i, entry["execution"])
    assert len(recovered) >= 5, "too few samples recovered from a fault for the comparison to mean much"

    # Every ERROR names the fault its last attempt met, and says retries were spent.
    expected_errors = {f"s{i:02d}" for i in ALWAYS_FAULTED} | {f"s{JUDGE_DOOMED:02d}"}
    assert expected_errors <= set(errors), sorted(errors)
    for i, fault in ALWAYS_FAULTED.items():
        message = errors[f"s{i:02d}"]
        assert re.search(FAULT_MESSAGES[fault["kind"]], message), message
        assert message.startswith("ExecutionError:") and message.endswith("(after 3 retries)"), message
    doomed = errors[f"s{JUDGE_DOOMED:02d}"]
    assert doomed.startswith("JudgeError: the judge call for rubric dimension 'accuracy' failed"), doomed
    assert "API error 503" in doomed and "(after 3 retries)" in doomed
    for sid in set(errors) - expected_errors:
        # A random sample that met a fault on all four attempts: its message names the last one.
        message = errors[sid]
        assert ANY_FAULT.search(message) and "(after 3 retries)" in message, message
        if message.startswith("ExecutionError"):
            kind = last_fault(llm.requests, f"Question {sid[1:]}:", judge=False)
            assert re.search(FAULT_MESSAGES[kind], message), (kind, message)

    # The counts agree everywhere: an ERROR is neither a pass nor a failure.
    outcomes = {
        k: sum(1 for e in report.values() if e["outcome"] == k) for k in ("passed", "failed", "error")
    }
    assert sum(outcomes.values()) == SAMPLES
    counted = chaos.parseoutcomes()  # pytest's "failed" also counts failed subtests: not compared
    assert (counted.get("passed", 0), counted.get("errors", 0)) == (outcomes["passed"], outcomes["error"])
    for sid in errors:
        case = junit.cases[f"eval-samples.json::{sid}"]
        assert case.errors and not case.failures, sid
        assert "Traceback" not in case.errors[0]
        # The terminal shows the same one-line message, whole, in the ERRORS section.
        assert f"omk: {errors[sid]}" in output, sid

    # 3. The recordings: complete files only, each a good answer; failed calls are not recorded.
    audit = audit_recordings(pytester.path / "recs")
    assert not audit.problems, audit.problems
    assert not audit.temps, audit.temps
    graded_ids = {sid for sid in report if sid not in errors}
    executor_failed = {sid for sid, message in errors.items() if message.startswith("ExecutionError")}
    # A sample whose judge failed still had a good answer, recorded so a rerun does not pay for it.
    assert set(audit.labels("execute")) == set(report) - executor_failed
    for document in audit.documents:
        if document.kind == "execute":
            i = int(document.label[1:])
            assert document.result["output"] == answer(i), document.path
        else:
            assert json.loads(document.result["output"])["score"] in (2, 4), document.path
    judged = {f"s{i:02d}" for i in range(SAMPLES) if rubric(i) and i != JUDGE_DOOMED} & graded_ids
    assert judged <= set(audit.labels("judge"))
    assert f"s{JUDGE_DOOMED:02d}" not in audit.labels("judge")

    # 4. Replaying them grades every graded sample as before, with no call made.
    llm.reset()
    replay = omk_run(*COMMON, "--omk-record-mode=none", "--omk-recordings=recs", "--omk-report=replay.json")
    assert llm.requests == []
    replayed = report_samples(load_report(pytester.path / "replay.json"))
    for sid in graded_ids:
        assert graded(replayed[sid]) == graded(baseline[sid]), sid
    for sid in expected_errors:
        assert replayed[sid]["outcome"] == "error"
        assert "--omk-record-mode=none" in replayed[sid]["error"]
    assert "Traceback" not in replay.stdout.str()
    # Retries are bounded: no call was tried more than once plus --omk-retries=3 times.
    assert chaos_calls <= 4 * clean_calls


# --- SIGKILL in the middle of recording -----------------------------------------------------------

KILL_SAMPLES = 40


@pytest.mark.multiprocess
def test_sigkill_mid_run_leaves_only_whole_recordings(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_samples(pytester, "eval-samples.json", samples_document())
    script(fake_llm, faults=False, latency=0.5)
    env = {"OPENAI_BASE_URL": fake_llm.openai_base_url, "OPENAI_API_KEY": SECRET_KEY}
    base = [
        "--omk-executor=openai",
        "--omk-model=model-under-test",
        "--omk-judge=none",
        "--omk-concurrency=4",
        "--omk-timeout=10",
        "--omk-recordings=recs",
        "-p",
        "no:cacheprovider",
    ]
    recordings = pytester.path / "recs"

    def recorded() -> int:
        return len(list(recordings.rglob("*.json"))) if recordings.exists() else 0

    with pytest_process(
        [*base, "--omk-record-mode=new_episodes"], cwd=pytester.path, env=env, logs=pytester.path / "logs"
    ) as run:
        assert wait_until(lambda: recorded() >= 8, timeout=30), run.output()
        os.killpg(run.pid, signal.SIGKILL)
        assert run.wait(10) == -signal.SIGKILL

    audit = audit_recordings(recordings)
    assert not audit.problems, audit.problems
    survived = len(audit.documents)
    assert 8 <= survived < KILL_SAMPLES, f"{survived} recordings: the kill did not land mid-run"
    for document in audit.documents:
        assert document.result["output"] == answer(int(document.label[1:]))
    # A temp file of a writer killed mid-write may remain: it is never read (and swept later).
    assert all(p.name.startswith(".") for p in audit.temps)

    # The next run records what is missing, replays the rest and completes cleanly.
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    fake_llm.script(latency=0.0)
    script(fake_llm, faults=False)
    resumed = omk_run(*base, "--omk-record-mode=new_episodes", "--omk-report=resumed.json")
    assert resumed.ret == pytest.ExitCode.TESTS_FAILED  # every third answer fails "contains red"
    resumed.stdout.fnmatch_lines([f"model calls: {KILL_SAMPLES - survived} live, {survived} replayed*"])
    assert "ignores recording" not in resumed.stdout.str() + resumed.stderr.str()
    assert {e["outcome"] for e in report_samples(load_report(pytester.path / "resumed.json")).values()} == {
        "passed",
        "failed",
    }
    after = audit_recordings(recordings)
    assert not after.problems and len(after.documents) == KILL_SAMPLES

    # And a replay-only run needs nothing live.
    fake_llm.reset()
    final = omk_run(*base, "--omk-record-mode=none", "--omk-report=final.json")
    final.stdout.fnmatch_lines([f"model calls: 0 live, {KILL_SAMPLES} replayed*"])
    assert fake_llm.requests == []
    final_report = report_samples(load_report(pytester.path / "final.json"))
    assert all(e["execution"]["replayed"] for e in final_report.values())
    assert {sid: e["outcome"] for sid, e in final_report.items()} == {
        f"s{i:02d}": "failed" if i % 3 == 0 else "passed" for i in range(KILL_SAMPLES)
    }
