"""Evaluating your own app (issue 41): the app runs live, the model calls inside it replay.

The app under test is a small module that asks an OpenAI-compatible server (the loopback fake)
through plain httpx, reading ``OPENAI_BASE_URL`` as any SDK does. Each test records once with the
server up, then changes the app's code and replays under ``CI=true`` with the server stopped: the
*new* code's answer must be graded (its inner call replayed), never the old recorded answer.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
import textwrap
from pathlib import Path

import pytest

from tests.fakes.fake_llm import FakeLLM
from tests.support import OmkRun, load_report, report_samples, run_pytest, sample, write_sample_set
from tests.support.wrapped import unwrapped

KEY = "sk-app-executor-sentinel-4e9d1a7c"

APP = '''
"""A tiny support app: one chat completion per question, over plain httpx."""
import json
import os
import sys

import httpx

VERSION = {version!r}
SYSTEM = {system!r}


def ask(prompt):
    base = os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1").rstrip("/")
    body = {{"model": "gpt-4o-mini", "messages": [{{"role": "system", "content": SYSTEM}},
                                                  {{"role": "user", "content": prompt}}]}}
    headers = {{"authorization": "Bearer " + os.environ.get("OPENAI_API_KEY", "none")}}
    reply = httpx.post(base + "/chat/completions", json=body, headers=headers, timeout=30)
    reply.raise_for_status()
    return reply.json()["choices"][0]["message"]["content"]


def answer(request):
    return VERSION + ": " + ask(request.prompt)


def make_app(settings):
    prefix = settings["prefix"]
    return lambda request: prefix + VERSION + ": " + ask(request.prompt)


if __name__ == "__main__":
    question = json.load(sys.stdin)
    print(VERSION + ": " + ask(question["prompt"]))
'''

SUPPORT_BOT = "You are a support bot."


def write_app(pytester: pytest.Pytester, version: str, system: str = SUPPORT_BOT) -> None:
    """Write ``myapp.py``. Versions differ in length: a same-size rewrite within one second could
    be read from a stale bytecode cache."""
    (pytester.path / "myapp.py").write_text(APP.format(version=version, system=system), encoding="utf-8")


def ini(pytester: pytest.Pytester, *lines: str) -> None:
    pytester.makeini("\n".join(["[pytest]", "pythonpath = .", *lines]))


@pytest.fixture
def llm(fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> FakeLLM:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    fake_llm.add_rule("Where is my order", "It ships on Monday.")
    return fake_llm


def replay_in_ci(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, llm: FakeLLM, *args: str
) -> pytest.RunResult:
    """Stop the model server and run with ``CI=true`` and no record mode (so: replay only)."""
    llm.stop()
    monkeypatch.setenv("CI", "true")
    return run_pytest(pytester, *args)


RECORD = ("--omk-recordings", "rec", "--omk-record-mode", "new_episodes")
ORDER = sample("order", "Where is my order?", assertions=[{"type": "contains", "value": "Monday"}])


def output_of(pytester: pytest.Pytester, report: str, sample_id: str = "order") -> str:
    record = report_samples(load_report(pytester.path / report))[sample_id]
    assert record["execution"] is not None, record
    return str(record["execution"]["output"])


# --- the app runs live, its model call replays: python:, the hook, a fixture, a command -----------


def test_python_app_runs_live_and_its_model_call_replays(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    ini(pytester)
    write_sample_set(pytester, ORDER)
    write_app(pytester, "v1")
    omk_run("--omk-executor", "python:myapp:answer", *RECORD, "--omk-report", "r1.json").assert_outcomes(
        passed=1
    )
    assert output_of(pytester, "r1.json") == "v1: It ships on Monday."
    assert len(llm.requests) == 1
    write_app(pytester, "version 2")
    replayed = replay_in_ci(
        pytester,
        monkeypatch,
        llm,
        "--omk-executor",
        "python:myapp:answer",
        "--omk-recordings",
        "rec",
        "--omk-report",
        "r2.json",
    )
    replayed.assert_outcomes(passed=1)
    assert output_of(pytester, "r2.json") == "version 2: It ships on Monday."
    assert "model calls: 0 live, 1 replayed" in replayed.stdout.str()
    assert len(llm.requests) == 1


def test_hook_app_runs_live_and_its_model_call_replays(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    ini(pytester)
    pytester.makeconftest(
        "def pytest_omk_make_executor(config):\n    import myapp\n    return myapp.answer\n"
    )
    write_sample_set(pytester, ORDER)
    write_app(pytester, "v1")
    omk_run(*RECORD, "--omk-report", "r1.json").assert_outcomes(passed=1)
    write_app(pytester, "version 2")
    replayed = replay_in_ci(pytester, monkeypatch, llm, "--omk-recordings", "rec", "--omk-report", "r2.json")
    replayed.assert_outcomes(passed=1)
    assert output_of(pytester, "r2.json") == "version 2: It ships on Monday."
    assert len(llm.requests) == 1


FIXTURE_CONFTEST = """
import pytest


@pytest.fixture(scope="session")
def app_settings():
    return {"prefix": "[settings] "}


@pytest.fixture(scope="session")
def omk_app(app_settings):
    import myapp

    return myapp.make_app(app_settings)
"""


def test_fixture_app_runs_live_and_its_model_call_replays(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    ini(pytester)
    pytester.makeconftest(FIXTURE_CONFTEST)
    write_sample_set(pytester, ORDER)
    write_app(pytester, "v1")
    omk_run(*RECORD, "--omk-report", "r1.json").assert_outcomes(passed=1)
    assert output_of(pytester, "r1.json") == "[settings] v1: It ships on Monday."
    write_app(pytester, "version 2")
    replayed = replay_in_ci(pytester, monkeypatch, llm, "--omk-recordings", "rec", "--omk-report", "r2.json")
    replayed.assert_outcomes(passed=1)
    assert output_of(pytester, "r2.json") == "[settings] version 2: It ships on Monday."
    assert len(llm.requests) == 1


def test_command_app_runs_live_and_its_model_call_replays(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    ini(pytester)
    write_sample_set(pytester, ORDER)
    write_app(pytester, "v1")
    spec = "command:" + shlex.join([sys.executable, str(pytester.path / "myapp.py")])
    omk_run("--omk-executor", spec, *RECORD, "--omk-report", "r1.json").assert_outcomes(passed=1)
    assert output_of(pytester, "r1.json") == "v1: It ships on Monday."
    write_app(pytester, "version 2")
    replayed = replay_in_ci(
        pytester,
        monkeypatch,
        llm,
        "--omk-executor",
        spec,
        "--omk-recordings",
        "rec",
        "--omk-report",
        "r2.json",
    )
    replayed.assert_outcomes(passed=1)
    assert output_of(pytester, "r2.json") == "version 2: It ships on Monday."
    assert len(llm.requests) == 1


# --- what the app sends is the key --------------------------------------------------------------


def test_a_changed_prompt_inside_the_app_is_a_replay_miss_naming_the_field(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    ini(pytester)
    write_sample_set(pytester, ORDER)
    write_app(pytester, "v1")
    omk_run("--omk-executor", "python:myapp:answer", *RECORD).assert_outcomes(passed=1)
    write_app(pytester, "v1", system="You are a terse support bot.")
    missed = replay_in_ci(
        pytester, monkeypatch, llm, "--omk-executor", "python:myapp:answer", "--omk-recordings", "rec"
    )
    missed.assert_outcomes(errors=1)
    out = missed.stdout.str()
    assert "--omk-record-mode=none only replays" in out
    assert re.search(
        r"messages\[0\]\.content: 'You are a terse support bot\.' \(this run\) vs 'You are a support bot\.' \(recorded\)",
        out,
    ), out
    assert KEY not in out
    assert len(llm.requests) == 1


def test_switching_what_the_hook_returns_is_never_a_stale_pass(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hook first returns canned logic; then an app that asks a model nobody recorded."""
    ini(pytester)
    write_sample_set(pytester, ORDER)
    write_app(pytester, "v1")
    pytester.makeconftest(
        "def pytest_omk_make_executor(config):\n    return lambda request: 'canned: ships Monday'\n"
    )
    omk_run(*RECORD).assert_outcomes(passed=1)
    pytester.makeconftest(
        "def pytest_omk_make_executor(config):\n    import myapp\n\n    return myapp.answer\n"
    )
    switched = replay_in_ci(pytester, monkeypatch, llm, "--omk-recordings", "rec")
    switched.assert_outcomes(errors=1)
    switched.stdout.fnmatch_lines(["*No recording for sample 'order'*"])
    assert len(llm.requests) == 0


# --- whole answers, as an explicit opt-in keyed by the app's digest -------------------------------


def test_whole_answer_recording_is_an_opt_in_keyed_by_the_app_source(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    ini(pytester)
    write_sample_set(pytester, ORDER)
    write_app(pytester, "v1")
    args = ("--omk-executor", "python:myapp:answer", "--omk-app-record", "answers", "--omk-recordings", "rec")
    omk_run(*args, "--omk-record-mode", "new_episodes").assert_outcomes(passed=1)
    assert len(llm.requests) == 1
    stored = [json.loads(p.read_text(encoding="utf-8")) for p in (pytester.path / "rec").rglob("*.json")]
    # The whole answer, and the app's model call it made (so that --omk-app-record calls replays too).
    assert sorted(d["kind"] for d in stored) == ["execute", "http"]
    monkeypatch.setenv("CI", "true")
    same = replay_in_ci(pytester, monkeypatch, llm, *args, "--omk-report", "same.json")
    same.assert_outcomes(passed=1)  # the app's source did not change: its answer replays whole
    assert report_samples(load_report(pytester.path / "same.json"))["order"]["execution"]["replayed"] is True
    write_app(pytester, "version 2")
    changed = replay_in_ci(pytester, monkeypatch, llm, *args)
    changed.assert_outcomes(errors=1)
    changed.stdout.fnmatch_lines(["*No recording for sample 'order'*", "*app*(this run)*(recorded)*"])


# --- many samples at once: each sample's inner calls replay to it only ---------------------------

MANY = 8
"""Enough samples for every process to hold a rendezvous (below); volume proves nothing more."""

PAIRED_APP = """
import threading

import myapp

# The first {together} samples to reach the app in this process wait for each other before their
# model call and again after it: their calls then reach the gateway while all {together} runs are
# open, so each must be told apart from the others by its content. The wait never times out in
# a passing run; a run that never has {together} samples open at once fails with a broken barrier.
BEFORE = threading.Barrier({together}, timeout=60)
AFTER = threading.Barrier({together}, timeout=60)
LOCK = threading.Lock()
ARRIVED = [0]


def answer(request):
    with LOCK:
        ARRIVED[0] += 1
        waits = ARRIVED[0] <= {together}
    if waits:
        BEFORE.wait()
    text = myapp.answer(request)
    if waits:
        AFTER.wait()
    return text
"""


def many_samples(pytester: pytest.Pytester, llm: FakeLLM) -> None:
    samples = []
    for i in range(MANY):
        sid = f"s{i:03d}"
        llm.add_rule(f"question from {sid}", f"answer for {sid}")
        samples.append(
            sample(
                sid,
                f"This is a question from {sid}.",
                assertions=[{"type": "contains", "value": f"answer for {sid}"}],
            )
        )
    write_sample_set(pytester, *samples)


def write_paired_app(pytester: pytest.Pytester, together: int) -> None:
    (pytester.path / "paired.py").write_text(PAIRED_APP.format(together=together), encoding="utf-8")


@pytest.mark.multiprocess
@pytest.mark.parametrize(
    ("replay_args", "together"),
    [(("--omk-concurrency", "16"), 4), (("-n", "2"), 2)],
    ids=["concurrency-16", "xdist-2"],
)
def test_concurrent_samples_get_their_own_inner_answers(
    pytester: pytest.Pytester,
    omk_run: OmkRun,
    llm: FakeLLM,
    monkeypatch: pytest.MonkeyPatch,
    replay_args: tuple[str, ...],
    together: int,
) -> None:
    """Samples whose app runs overlap (a rendezvous in the app makes sure of it, both when recording
    and when replaying: 4 runs open at once in one process, 2 in each of 2 xdist workers, whose
    queues are each at least 2 deep) each get the answers to their own model calls."""
    if replay_args[0] == "-n":
        pytest.importorskip("xdist")
    ini(pytester)
    many_samples(pytester, llm)
    write_app(pytester, "v1")
    write_paired_app(pytester, 4)
    args = ("--omk-executor", "python:paired:answer", "--omk-recordings", "rec")
    omk_run(*args, "--omk-record-mode", "new_episodes", "--omk-concurrency", "16").assert_outcomes(
        passed=MANY
    )
    assert len(llm.requests) == MANY
    # Each recorded call is filed under the sample that made it (the gateway told the open runs apart).
    recorded = [
        json.loads(f.read_text(encoding="utf-8")) for f in sorted((pytester.path / "rec").rglob("*.json"))
    ]
    assert sorted((r["label"], r["body"]["messages"][-1]["content"]) for r in recorded) == [
        (f"s{i:03d}", f"This is a question from s{i:03d}.") for i in range(MANY)
    ]
    write_app(pytester, "version 2")
    write_paired_app(pytester, together)
    llm.stop()
    monkeypatch.setenv("CI", "true")
    result = run_pytest(pytester, *args, *replay_args, "--omk-report", "r.json")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-4000:]
    result.assert_outcomes(passed=MANY)
    records = report_samples(load_report(pytester.path / "r.json"))
    assert {sid: r["execution"]["output"] for sid, r in records.items()} == {
        f"s{i:03d}": f"version 2: answer for s{i:03d}" for i in range(MANY)
    }
    # ... and each replayed call is counted for the sample that made it, not for another open run.
    assert {sid: r["modelCalls"] for sid, r in records.items()} == {
        f"s{i:03d}": {"live": 0, "replayed": 1} for i in range(MANY)
    }
    assert load_report(pytester.path / "r.json")["summary"]["modelCalls"] == {"live": 0, "replayed": MANY}


# --- fixtures -----------------------------------------------------------------------------------

LOGGING_FIXTURE = """
import pytest

LOG = {log!r}


def note(line):
    with open(LOG, "a", encoding="utf-8") as handle:
        handle.write(line + "\\n")


@pytest.fixture(scope="session")
def greeting():
    note("greeting setup")
    yield "hello"
    note("greeting teardown")


@pytest.fixture(scope="session")
def omk_app(greeting):
    note("app setup")
    yield lambda request: greeting + " " + request.sample.sample_id
    note("app teardown")
"""


def test_a_fixture_provides_the_app_once_with_other_fixtures_and_tears_down_at_the_end(
    pytester: pytest.Pytester, omk_run: OmkRun, tmp_path: Path
) -> None:
    log = tmp_path / "events.log"
    pytester.makeconftest(LOGGING_FIXTURE.format(log=str(log)))
    pytester.makepyfile(
        test_plain=f"def test_ordinary():\n    open({str(log)!r}, 'a').write('ordinary test\\n')\n"
    )
    write_sample_set(
        pytester,
        *(sample(f"s{i}", "hi", assertions=[{"type": "equals", "value": f"hello s{i}"}]) for i in range(3)),
    )
    result = omk_run("--omk-report", "r.json")
    result.assert_outcomes(passed=4)
    events = log.read_text(encoding="utf-8").splitlines()
    assert events.count("app setup") == 1 and events.count("greeting setup") == 1
    assert events.index("greeting setup") < events.index("app setup")
    assert events[-2:] == ["app teardown", "greeting teardown"]
    report = load_report(pytester.path / "r.json")
    assert report["config"]["executorSource"] == "fixture"


def test_prefetch_starts_once_the_fixture_app_exists(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM
) -> None:
    """All samples' inner calls are in flight at once: the server holds each until 6 have arrived."""
    ini(pytester)
    pytester.makeconftest(FIXTURE_CONFTEST)
    write_app(pytester, "v1")
    write_sample_set(pytester, *(sample(f"s{i}", f"Where is my order {i}?") for i in range(6)))
    llm.gate(6, timeout=10)
    omk_run("--omk-concurrency", "6").assert_outcomes(passed=6)
    assert llm.peak_in_flight == 6


# --- who answered ----------------------------------------------------------------------------------

HOOK = "def pytest_omk_make_executor(config):\n    return lambda request: 'from the hook'\n"


def test_the_command_line_beats_the_hook_and_the_header_says_so(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    pytester.makeconftest(HOOK)
    write_sample_set(pytester, sample("s", "ping", assertions=[{"type": "equals", "value": "ping"}]))
    result = omk_run("--omk-executor", "echo", "--omk-report", "r.json", "--omk-html", "r.html")
    result.assert_outcomes(passed=1)
    unwrapped(result).fnmatch_lines(
        [
            "omk: executor echo (from the command line; the pytest_omk_make_executor hook in conftest.py is not used)"
        ]
    )
    report = load_report(pytester.path / "r.json")
    assert (report["config"]["executor"], report["config"]["executorSource"]) == ("echo", "command line")
    assert "the pytest_omk_make_executor hook in conftest.py is not used" in (
        pytester.path / "r.html"
    ).read_text(encoding="utf-8")


def test_the_hook_beats_the_ini_executor_with_a_one_line_notice(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    pytester.makeconftest(HOOK)
    pytester.makeini("[pytest]\nomk_executor = echo\n")
    write_sample_set(pytester, sample("s", "ping", assertions=[{"type": "equals", "value": "from the hook"}]))
    result = omk_run("--omk-report", "r.json")
    result.assert_outcomes(passed=1)
    notices = [line for line in unwrapped(result).lines if "omk_executor = echo" in line]
    assert notices == [
        "omk: executor from the pytest_omk_make_executor hook in conftest.py "
        "(omk_executor = echo in the ini file is not used)"
    ]
    report = load_report(pytester.path / "r.json")
    assert (report["config"]["executor"], report["config"]["executorSource"]) == (
        "python:conftest:pytest_omk_make_executor.<locals>.<lambda>",
        "hook",
    )


def test_the_app_fixture_in_the_header(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    pytester.makeconftest(
        textwrap.dedent(
            """
        import pytest

        @pytest.fixture(scope="session")
        def omk_app():
            return lambda request: "from the fixture"
        """
        )
    )
    write_sample_set(
        pytester, sample("s", "ping", assertions=[{"type": "equals", "value": "from the fixture"}])
    )
    result = omk_run()
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["omk: executor from the omk_app fixture in conftest.py*"])


# --- the worked example ------------------------------------------------------------------------------

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support-app"


@pytest.mark.multiprocess
def test_the_support_app_example_runs_offline_from_its_recorded_model_calls(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``pytest examples/support-app -v`` (docs/executors.md): the app runs, its calls replay."""
    monkeypatch.setenv("CI", "true")  # no provider variable or key is set (the autouse fixture)
    report = pytester.path / "r.json"
    result = run_pytest(
        pytester,
        str(EXAMPLE),
        "-v",
        "-p",
        "no:cacheprovider",
        f"--omk-report={report}",
        subprocess=True,
    )
    result.assert_outcomes(passed=5)
    unwrapped(result).fnmatch_lines(
        [
            "omk: executor from the omk_app fixture in conftest.py",
            "omk: the app answers every sample live; its model calls replay from the recordings only (record mode none)",
            "*model calls: 0 live, 5 replayed*",
        ]
    )
    document = load_report(report)
    assert document["config"]["executorSource"] == "fixture"
    assert document["config"]["executor"] == "python:conftest:omk_app.<locals>.<lambda>"
    assert all(s["execution"]["replayed"] for s in document["samples"])


def test_the_judge_keeps_the_real_provider_while_the_app_goes_through_the_gateway(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM
) -> None:
    """The gateway points this process's OPENAI_BASE_URL at itself; the judge must not follow it."""
    ini(pytester)
    write_app(pytester, "v1")
    llm.add_rule(None, json.dumps({"score": 5, "reason": "fine"}), system="judge")
    rubric = {"helpful": {"criterion": "Answers the question", "weight": 1.0}}
    write_sample_set(pytester, sample("parcel", "When will my parcel arrive?", rubric=rubric))
    result = omk_run("--omk-executor", "python:myapp:answer", "--omk-judge", "openai", *RECORD)
    result.assert_outcomes(passed=1)
    stored = [json.loads(p.read_text(encoding="utf-8")) for p in (pytester.path / "rec").rglob("*.json")]
    endpoints = {d["kind"]: d["endpoint"] for d in stored}
    direct = llm.openai_base_url.split("//")[1].split("/")[0]
    assert set(endpoints) == {"http", "judge"}
    assert endpoints["judge"] == endpoints["http"] == f"http://{direct}/v1/chat/completions"
    assert len(llm.requests) == 2


def test_rewrite_prunes_the_model_calls_an_app_no_longer_makes(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM
) -> None:
    ini(pytester)
    write_sample_set(pytester, ORDER)
    write_app(pytester, "v1")
    omk_run("--omk-executor", "python:myapp:answer", *RECORD).assert_outcomes(passed=1)
    write_app(pytester, "v1", system="You are a terse support bot.")
    args = (
        "--omk-executor",
        "python:myapp:answer",
        "--omk-recordings",
        "rec",
        "--omk-record-mode",
        "rewrite",
    )
    omk_run(*args).assert_outcomes(passed=1)
    stored = [json.loads(p.read_text(encoding="utf-8")) for p in (pytester.path / "rec").rglob("*.json")]
    assert [(d["label"], d["body"]["messages"][0]["content"]) for d in stored] == [
        ("order", "You are a terse support bot.")
    ]
