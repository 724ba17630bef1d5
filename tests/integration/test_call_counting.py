"""The counting rule, checked against a server that counts what it answers (issue 51, item 2).

docs/reporting.md, "Every call is counted": the summary counts every call the run sent, graded or
not, and each sample's record every call made for it (every attempt, every repeat). Each case runs
pytest against the loopback fake model, which records every request it answers; the request's
prompt names its sample (``q03: ...``). Then, for the JSON report and the terminal:

- the summary's ``usage.model`` (``calls``, ``live``), its ``modelCalls`` and the terminal's
  ``model calls:`` line equal the requests the server answered, and the cost is that many calls' price;
- each sample's ``modelCalls``/``usage`` equal the requests the server answered for that sample;
- the calls of samples that never ran equal ``usage.model.notGraded`` and the terminal's line.

Every case fails if any of these counts differs from the server's.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.fakes.fake_llm import FakeLLM
from tests.support import OmkRun, load_report, report_samples, sample, write_sample_set
from tests.support.executors import priced_executor

PRICE = 0.01
SAMPLES = 8
FAILS = [{"type": "contains", "value": "goodbye"}]
"""A check every answer of the fake model fails ("hello there"): the first graded sample fails."""

APP_CONFTEST = """
import os
import ssl

import openai
import pytest

# One TLS context for every call's client: building one (loading the CA bundle) is what a new
# SDK client costs most, far more than the call; the calls here are plain HTTP to the gateway.
TLS = ssl.create_default_context()


@pytest.fixture(scope="session")
def omk_app():
    async def answer(request):
        # The async SDK, as a product's support bot has it; its base URL is the gateway's.
        client = openai.AsyncOpenAI(
            base_url=os.environ["OPENAI_BASE_URL"],
            max_retries=0,
            http_client=openai.DefaultAsyncHttpxClient(verify=TLS),
        )
        async with client:
            reply = await client.chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": request.prompt}]
            )
        return reply.choices[0].message.content

    return answer
"""
"""An app under test, from the ``omk_app`` fixture: one model call per run, through the gateway."""


@dataclass(frozen=True)
class Case:
    """One row of the matrix: how the project is set up, the command line, the exit codes allowed."""

    args: tuple[str, ...]
    app: bool = False
    checks: list[dict[str, Any]] = field(default_factory=lambda: FAILS)
    exits: tuple[int, ...] = (pytest.ExitCode.TESTS_FAILED,)
    cut_short: bool = False
    """The run stops before every sample ran: some samples' calls are not graded."""


CASES = {
    "x": Case(("-x",), cut_short=True),
    "maxfail-2": Case(("--maxfail=2",), cut_short=True),
    "reruns-2": Case(("--reruns", "2")),
    "app-x": Case(("-x",), app=True, cut_short=True),
    "app-repeat-3": Case(("--omk-repeat=3",), app=True),
    "app-repeat-auto": Case(("--omk-repeat=auto", "--omk-repeat-max=5", "--omk-min-pass-rate=0.5"), app=True),
    # Samples that pass: the budget's stop alone makes the run fail (an incomplete eval).
    "budget-stop": Case(("--omk-budget-usd=0.035",), checks=[{"type": "contains", "value": "hello"}]),
    "xdist-2": Case(("-n", "2")),
    "xdist-2-x": Case(
        ("-n", "2", "-x"), exits=(pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.INTERRUPTED), cut_short=True
    ),
}


def _params() -> list[Any]:
    marks = {"xdist-2": [pytest.mark.multiprocess], "xdist-2-x": [pytest.mark.multiprocess]}
    return [pytest.param(name, case, id=name, marks=marks.get(name, [])) for name, case in CASES.items()]


def _project(
    pytester: pytest.Pytester, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch, case: Case
) -> None:
    """Write the samples and the model under test (the priced executor, or the fixture's app)."""
    if case.app:
        monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-call-counting-sentinel")
        pytester.makeconftest(APP_CONFTEST)
        for i in range(SAMPLES):  # a flaky verdict, so that auto repeats decide late
            fake_llm.add_rule(f"q{i:02d}:", replies=["hello there", "goodbye"] * 3)
    else:
        priced_executor(pytester, monkeypatch, fake_llm.openai_base_url, PRICE)
    fake_llm.add_rule(None, "hello there")  # after the samples' own rules: tried in order
    checks = case.checks
    samples = [sample(f"q{i:02d}", f"q{i:02d}: say something", assertions=checks) for i in range(SAMPLES)]
    write_sample_set(pytester, *samples)


def _per_sample(fake_llm: FakeLLM) -> Counter[str]:
    """The requests the server answered, by the sample their prompt names."""
    return Counter(request.prompt.split(":", 1)[0] for request in fake_llm.requests)


def _assert_counted(
    result: pytest.RunResult, document: dict[str, Any], server: Counter[str], *, priced: bool
) -> None:
    answered = sum(server.values())
    summary = document["summary"]
    usage = summary["usage"]["model"]
    assert (usage["calls"], usage["live"], usage["replayed"]) == (answered, answered, 0), (usage, server)
    assert summary["modelCalls"] == {"live": answered, "replayed": 0}
    rows = report_samples(document)
    for sample_id, row in rows.items():
        calls = server.get(sample_id, 0)
        assert row["modelCalls"] == {"live": calls, "replayed": 0}, (sample_id, row["modelCalls"], server)
        assert row["usage"]["model"]["calls"] == calls, sample_id
    not_run = sum(count for sample_id, count in server.items() if sample_id not in rows)
    assert usage.get("notGraded", 0) == not_run, (usage, server, sorted(rows))
    if priced:
        assert summary["costUSD"] == pytest.approx(PRICE * answered)
    result.stdout.fnmatch_lines([f"model calls: {answered} live, 0 replayed *"], consecutive=False)
    if not_run:
        line = f"omk: {not_run} call{'' if not_run == 1 else 's'} for samples not run (not graded)*"
        result.stdout.fnmatch_lines([line], consecutive=False)
    else:
        assert "samples not run (not graded)" not in result.stdout.str()


@pytest.mark.parametrize(("name", "case"), _params())
def test_every_call_the_server_answered_is_counted(
    pytester: pytest.Pytester,
    omk_run: OmkRun,
    fake_llm: FakeLLM,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    case: Case,
) -> None:
    if "--reruns" in case.args:
        pytest.importorskip("pytest_rerunfailures")
    _project(pytester, fake_llm, monkeypatch, case)
    if case.cut_short:
        # Four calls are in flight before any is answered: the stop comes with calls of samples
        # that never run already sent (proven by counting arrivals, not by timing).
        fake_llm.gate(4, timeout=60)
    result = omk_run(*case.args, "--omk-concurrency=4", "--omk-report=r.json", "-p", "no:randomly")
    assert result.ret in case.exits, result.stdout.str()[-3000:]
    document = load_report(pytester.path / "r.json")
    server = _per_sample(fake_llm)
    _assert_counted(result, document, server, priced=not case.app)
    _assert_case(name, document, server)


def _assert_case(name: str, document: dict[str, Any], server: Counter[str]) -> None:
    """What makes each case the case it names (so that a count cannot agree by doing nothing)."""
    rows, answered = report_samples(document), sum(server.values())
    every_sample = len(server) == SAMPLES and len(rows) == SAMPLES
    cut_short = len(rows) < SAMPLES and answered > len(rows)  # calls of samples never run
    expect = {
        "x": cut_short,
        "maxfail-2": cut_short,
        "reruns-2": every_sample and set(server.values()) == {3},  # three attempts each
        "app-x": cut_short,
        "app-repeat-3": every_sample and set(server.values()) == {3},
        "app-repeat-auto": every_sample and answered > SAMPLES,  # auto asked for more runs
        "budget-stop": (document["summary"].get("budget") or {}).get("notRun", 0) > 0,
        "xdist-2": every_sample and answered == SAMPLES,
        "xdist-2-x": len(rows) < SAMPLES,
    }
    assert expect[name], (name, dict(server), sorted(rows))
