"""End to end over real HTTP: the OpenAI-compatible fake model and fake judge on loopback.

Covers what unit tests cannot show: recording then replaying with the server gone, secrets kept
out of every file, one model call per sample under xdist, the judge layer computed from scripted
judge scores, invalid judge replies kept apart from model failures, and URLs resolved through a
real MCP server and replayed with fetching impossible.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.doc_server import DocServer, Page
from tests.fakes.fake_llm import FakeLLM
from tests.support import (
    OmkRun,
    load_report,
    report_samples,
    sample,
    sample_set,
    write_sample_set,
    write_samples,
)

KEY = "sk-e2e-sentinel-3f9a1c77d2b04e55"
RUBRIC_SYSTEM = "impartial judge"
MCP_SERVER = Path(__file__).resolve().parents[1] / "fakes" / "mcp_docs_server.py"


@pytest.fixture
def llm(fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> FakeLLM:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return fake_llm


def verdict(score: Any, reason: str = "checked", *, reasoning: bool = True) -> str:
    body: dict[str, Any] = {"score": score, "reason": reason}
    if reasoning:
        body = {"reasoning": "point by point", **body}
    return json.dumps(body)


def model_requests(llm: FakeLLM) -> list[Any]:
    return [r for r in llm.requests if RUBRIC_SYSTEM not in r.system and "judge" not in r.system]


def judge_requests(llm: FakeLLM) -> list[Any]:
    return [r for r in llm.requests if "judge" in r.system]


def files_under(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


RUBRIC_DOC = sample_set(
    sample(
        "graded",
        "Explain SQL injection",
        assertions=[{"type": "contains", "value": "injection"}, {"type": "max_length", "value": 5}],
        rubric={
            "accuracy": {"criterion": "Explains the attack precisely", "weight": 0.75},
            "fix": {"criterion": "Offers a parameterized fix", "weight": 0.25},
        },
    ),
    sample("plain", "Say hi", assertions=[{"type": "starts_with", "value": "hi"}]),
)


def script_rubric(llm: FakeLLM, *, accuracy: Any = 4, fix: Any = 3) -> None:
    llm.add_rule("Explains the attack precisely", verdict(accuracy), system=RUBRIC_SYSTEM)
    llm.add_rule("Offers a parameterized fix", verdict(fix), system=RUBRIC_SYSTEM)
    llm.add_rule("Explain SQL injection", "SQL injection puts input into the query.")
    llm.add_rule("Say hi", "hi there")


def test_judge_layer_and_composite_follow_the_formulas(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM
) -> None:
    write_samples(pytester, "eval-samples.json", RUBRIC_DOC)
    script_rubric(llm, accuracy=4, fix=3)
    result = omk_run("--omk-executor", "openai", "--omk-judge", "openai", "--omk-report", "r.json", "-v")
    result.stdout.fnmatch_lines(["*SUBPASSED*rubric: accuracy*", "*SUBPASSED*rubric: fix*"])
    graded = report_samples(load_report(pytester.path / "r.json"))["graded"]
    # judge = 4*0.75 + 3*0.25 = 3.75 (round2: 3.75); fact = 5 (contains); behavior = 1 (max_length fails)
    assert graded["scores"] == {
        "assertions": 3.0,
        "fact": 5.0,
        "behavior": 1.0,
        "judge": 3.75,
        "composite": 3.25,
    }
    assert graded["rubric"]["accuracy"]["score"] == 4 and graded["rubric"]["fix"]["weight"] == 0.25
    # One judge call per dimension, each seeing its own criterion only (never the dimension name).
    calls = judge_requests(llm)
    assert len(calls) == 2
    assert all(("Explains the attack" in c.user) != ("parameterized fix" in c.user) for c in calls)
    assert not any("accuracy" in c.user for c in calls)


@pytest.mark.parametrize(
    ("reply", "defect"),
    [
        ("not json at all", "not JSON"),
        ('{"score": 4, "reason": ', "JSON"),
        ('```json\n{"reasoning": "r", "score": 4, "reason": "ok"}\n```', "JSON"),
        (verdict("4"), "score"),
        (verdict(4.5), "4.5"),
        (verdict(0), "0"),
        (verdict(6), "6"),
        (verdict(4, reason="  "), "reason"),
    ],
)
def test_an_invalid_judge_reply_is_missing_evidence_not_a_score(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM, reply: str, defect: str
) -> None:
    write_samples(pytester, "eval-samples.json", RUBRIC_DOC)
    llm.add_rule("Explains the attack precisely", reply, system=RUBRIC_SYSTEM)
    script_rubric(llm)
    result = omk_run(
        "--omk-executor",
        "openai",
        "--omk-judge",
        "openai",
        "--omk-report",
        "r.json",
        "-v",
        "--omk-judge-failure=skip",
    )
    result.stdout.fnmatch_lines(["*SUBSKIPPED*rubric: accuracy*"])
    graded = report_samples(load_report(pytester.path / "r.json"))["graded"]
    accuracy = graded["rubric"]["accuracy"]
    assert accuracy["status"] == "missing" and accuracy["score"] is None
    assert defect in accuracy["reason"]
    # One missing dimension: no judge layer at all (never a 0); the other layers stand.
    assert graded["scores"]["judge"] is None
    assert graded["scores"]["composite"] == 3.0
    assert graded["outcome"] == "failed"  # failed by max_length, not by the judge


def test_an_invalid_judge_reply_errors_the_sample_by_default(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM
) -> None:
    # Never PASSED on an unjudged rubric: re-asked once, then the sample errors naming the dimension.
    write_samples(pytester, "eval-samples.json", RUBRIC_DOC)
    llm.add_rule("Explains the attack precisely", "not json at all", system=RUBRIC_SYSTEM)
    script_rubric(llm)
    result = omk_run("--omk-executor", "openai", "--omk-judge", "openai", "--omk-report", "r.json")
    result.stdout.fnmatch_lines(["*could not score rubric dimension 'accuracy': judge reply is not JSON*"])
    graded = report_samples(load_report(pytester.path / "r.json"))["graded"]
    assert graded["outcome"] == "error"
    assert len([c for c in judge_requests(llm) if "Explains the attack precisely" in c.user]) == 2


def test_record_then_replay_with_the_server_gone(
    pytester: pytest.Pytester, omk_run: OmkRun, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    write_samples(pytester, "eval-samples.json", RUBRIC_DOC)
    script_rubric(fake_llm)
    args = (
        "--omk-executor",
        "openai",
        "--omk-judge",
        "openai",
        "--omk-recordings",
        "rec",
        "--junitxml",
        "j.xml",
    )
    first = omk_run(*args, "--omk-record-mode", "new_episodes", "--omk-report", "live.json")
    calls = len(fake_llm.requests)
    assert calls == 4  # 2 model calls + 2 judge calls
    fake_llm.stop()
    replay = omk_run(*args, "--omk-record-mode", "none", "--omk-report", "replay.json")
    assert replay.ret == first.ret
    live = report_samples(load_report(pytester.path / "live.json"))
    again = report_samples(load_report(pytester.path / "replay.json"))
    for sid in live:
        assert again[sid]["scores"] == live[sid]["scores"]
        assert again[sid]["rubric"] == live[sid]["rubric"]
        assert again[sid]["execution"]["replayed"] is True
        assert again[sid]["execution"]["latencyMs"] == live[sid]["execution"]["latencyMs"]
    assert load_report(pytester.path / "replay.json")["summary"]["modelCalls"] == {"live": 0, "replayed": 4}
    written = files_under(pytester.path)
    assert any(p.suffix == ".json" and "rec" in p.parts for p in written)
    for path in written:
        assert KEY.encode() not in path.read_bytes(), path


def test_a_replay_miss_in_none_mode_is_an_error_naming_the_nearest_recording(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM
) -> None:
    write_sample_set(pytester, sample("s", "Say hi"))
    llm.add_rule("Say hi", "hi")
    omk_run("--omk-executor", "openai", "--omk-recordings", "rec", "--omk-record-mode", "new_episodes")
    result = omk_run(
        "--omk-executor",
        "openai",
        "--omk-model",
        "other-model",
        "--omk-recordings",
        "rec",
        "--omk-record-mode",
        "none",
    )
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*ReplayMissError*", "*model*"])
    assert len(llm.requests) == 1


@pytest.mark.multiprocess
@pytest.mark.skipif(not __import__("importlib").util.find_spec("xdist"), reason="needs pytest-xdist")
def test_xdist_calls_each_model_once_and_matches_a_plain_run(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM
) -> None:
    samples = [
        sample(f"s{i}", f"Question {i}", assertions=[{"type": "contains", "value": f"answer {i}"}])
        for i in range(8)
    ]
    write_sample_set(pytester, *samples)
    for i in range(8):
        llm.add_rule(f"Question {i}", f"answer {i}" if i % 3 else "wrong")
    plain = omk_run("--omk-executor", "openai", "--omk-report", "plain.json")
    assert len(llm.requests) == 8
    llm.reset()
    for i in range(8):
        llm.add_rule(f"Question {i}", f"answer {i}" if i % 3 else "wrong")
    dist = omk_run("--omk-executor", "openai", "--omk-report", "dist.json", "-n", "2", subprocess=True)
    assert len(llm.requests) == 8, [r.user for r in llm.requests]
    assert plain.parseoutcomes()["failed"] == dist.parseoutcomes()["failed"]
    a = report_samples(load_report(pytester.path / "plain.json"))
    b = report_samples(load_report(pytester.path / "dist.json"))
    assert {k: (v["outcome"], v["scores"]) for k, v in a.items()} == {
        k: (v["outcome"], v["scores"]) for k, v in b.items()
    }


def test_transient_faults_are_retried_and_never_graded_as_model_failures(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM
) -> None:
    samples = [
        sample(f"s{i}", f"Question {i}", assertions=[{"type": "contains", "value": "yes"}]) for i in range(6)
    ]
    write_sample_set(pytester, *samples)
    llm.add_rule(None, "yes")
    # One 429 each for s1-s3 (matched by prompt, so which calls get them does not depend on the
    # order the concurrent calls reach the server), and s5 always fails.
    for i in (1, 2, 3):
        llm.inject("rate_limit", first=1, match=f"Question {i}", retry_after=0)
    llm.inject("server_error", match="Question 5", every=True)
    result = omk_run("--omk-executor", "openai", "--omk-retries", "2", "--omk-report", "r.json")
    result.assert_outcomes(passed=5, errors=1)
    document = load_report(pytester.path / "r.json")
    by_id = report_samples(document)
    assert by_id["s5"]["outcome"] == "error" and "500" in by_id["s5"]["error"]
    assert by_id["s5"]["scores"]["composite"] is None and by_id["s5"]["assertions"] == []
    retries = {s["sample_id"]: s["execution"]["retries"] for s in document["samples"] if s["execution"]}
    assert retries == {"s0": 0, "s1": 1, "s2": 1, "s3": 1, "s4": 0}


def test_urls_resolved_by_an_mcp_server_replay_without_fetching(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM, tmp_path: Path
) -> None:
    pidfile = tmp_path / "mcp.pid"
    config = {
        "mcpServers": {
            "docs": {
                "command": sys.executable,
                "args": [str(MCP_SERVER)],
                "env": {"MCP_DOCS_PIDFILE": str(pidfile), "DOCS_API_TOKEN": "tok-e2e-9d8c7b6a5f4e"},
                "urlPatterns": ["docs.internal.dev"],
                "fetchTool": {
                    "name": "fetch_doc",
                    "urlTransform": {
                        "regex": "docs\\.internal\\.dev/([^/]+)/([^/?#]+)",
                        "params": {"namespace": "$1", "slug": "$2"},
                    },
                    "contentExtract": "data.body",
                },
            }
        }
    }
    (pytester.path / ".mcp.json").write_text(json.dumps(config), encoding="utf-8")
    write_sample_set(
        pytester,
        sample(
            "doc",
            "Summarize https://docs.internal.dev/team/handbook.",
            assertions=[{"type": "contains", "value": "handbook"}],
        ),
    )
    llm.add_rule("Document handbook in team", "The handbook says hello.")
    args = ("--omk-executor", "openai", "--omk-recordings", "rec", "--omk-report", "r.json")
    first = omk_run(*args, "--omk-record-mode", "new_episodes")
    first.assert_outcomes(passed=1)
    sent = model_requests(llm)[0].user
    assert "--- OMK resolved content ---\nDocument handbook in team." in sent
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
        time.sleep(0.05)
    assert not Path(f"/proc/{pid}").exists(), "the MCP server outlived the run"
    live = report_samples(load_report(pytester.path / "r.json"))["doc"]
    assert live["urls"][0]["via"] == "mcp"
    # Replay: the MCP server cannot start and the model is gone; prompts and scores are identical.
    config["mcpServers"]["docs"]["command"] = "/nonexistent/mcp-server"
    (pytester.path / ".mcp.json").write_text(json.dumps(config), encoding="utf-8")
    pidfile.unlink()
    llm.stop()
    again = omk_run(*args, "--omk-record-mode", "none")
    again.assert_outcomes(passed=1)
    replayed = report_samples(load_report(pytester.path / "r.json"))["doc"]
    assert replayed["scores"] == live["scores"]
    assert replayed["urls"][0]["sha256"] == live["urls"][0]["sha256"]
    assert not pidfile.exists()
    for path in files_under(pytester.path):
        if path.name != ".mcp.json":  # the user's own config holds the token, of course
            assert b"tok-e2e-9d8c7b6a5f4e" not in path.read_bytes(), path


def test_a_url_that_cannot_be_fetched_errors_the_sample_and_is_never_sent_raw(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM
) -> None:
    with DocServer() as docs:
        docs.pages["/ok"] = Page(b"The answer is 42.", headers={"Content-Type": "text/plain; charset=utf-8"})
        base = f"http://127.0.0.1:{docs.port}"
        (pytester.path / "pytest.ini").write_text(
            "[pytest]\nomk_url_allow_hosts = 127.0.0.1\n", encoding="utf-8"
        )
        write_sample_set(
            pytester,
            sample("ok", f"Read {base}/ok and answer.", assertions=[{"type": "contains", "value": "42"}]),
            sample("gone", f"Read {base}/missing and answer."),
        )
        llm.add_rule("The answer is 42.", "It is 42.")
        result = omk_run("--omk-executor", "openai", "--omk-report", "r.json")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*ResolveError*missing*404*"])
    assert all("/missing" not in r.user for r in llm.requests)
    by_id = report_samples(load_report(pytester.path / "r.json"))
    assert by_id["gone"]["outcome"] == "error"


@pytest.fixture
def tls_builds(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every TLS context built from now on (``ssl.create_default_context`` calls: the CA bundle loads)."""
    import ssl

    builds: list[object] = []
    original = ssl.create_default_context

    def counting(*args: Any, **kwargs: Any) -> ssl.SSLContext:
        builds.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(ssl, "create_default_context", counting)
    return builds


@pytest.mark.floor("httpx")
def test_the_whole_run_builds_one_tls_context_even_when_calls_start_before_the_warm_up(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM, tls_builds: list[object]
) -> None:
    """The CA bundle is loaded once: by the warm-up while pytest collects, shared by every client.

    The calls are submitted right after the clients' warm-up, so the first of them used to build
    its client before the warm-up had handed the shared context over, loading the bundle again
    inside the first wave of calls.
    """
    write_samples(pytester, "eval-samples.json", sample_set(*(sample(f"s{i}", "Say hi") for i in range(40))))
    llm.add_rule("Say hi", "hi there")
    result = omk_run("--omk-executor", "openai", "--omk-judge", "openai", "--omk-concurrency", "32")
    result.assert_outcomes(passed=40)
    assert len(model_requests(llm)) == 40
    assert len(tls_builds) == 1


def test_a_replay_only_run_loads_no_ca_bundle(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM, tls_builds: list[object]
) -> None:
    """A replay-only run connects nowhere, so it builds no TLS context (tens of milliseconds)."""
    write_sample_set(pytester, *(sample(f"s{i}", "Say hi") for i in range(3)))
    llm.add_rule("Say hi", "hi there")
    args = ("--omk-executor", "openai", "--omk-judge", "openai", "--omk-recordings", "rec")
    omk_run(*args, "--omk-record-mode", "new_episodes").assert_outcomes(passed=3)
    tls_builds.clear()
    replay = omk_run(*args, "--omk-record-mode", "none")
    replay.assert_outcomes(passed=3)
    replay.stdout.fnmatch_lines(["model calls: 0 live, 3 replayed*"])
    assert tls_builds == []
    # A run that may call live still warms the context up while pytest collects.
    omk_run(*args, "--omk-record-mode", "new_episodes").assert_outcomes(passed=3)
    assert len(tls_builds) == 1


@pytest.mark.multiprocess
def test_a_plain_api_run_never_imports_the_agent(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM
) -> None:
    """The agent package (providers, tools, the MCP client) is start-up a plain API run does not need."""
    pytester.makeconftest(
        """
        import json, sys

        def pytest_sessionfinish(session):
            loaded = sorted(m for m in sys.modules if m.startswith(("pytest_omk.agent", "mcp")))
            (session.config.rootpath / "loaded.json").write_text(json.dumps(loaded))
        """
    )
    write_samples(pytester, "eval-samples.json", sample_set(sample("hi", "Say hi")))
    llm.add_rule("Say hi", "hi there")
    result = omk_run("--omk-executor", "openai", "--omk-judge", "openai", subprocess=True)
    result.assert_outcomes(passed=1)
    assert json.loads((pytester.path / "loaded.json").read_text()) == []


@pytest.mark.floor("httpx")
def test_a_run_opens_one_connection_per_call_in_flight(
    pytester: pytest.Pytester, omk_run: OmkRun, llm: FakeLLM
) -> None:
    """Connections are kept alive for the next call whatever the concurrency: with httpx's pool
    defaults, a run with more than 20 calls in flight opened a new connection for nearly every call
    (a TLS handshake each against a real provider)."""
    write_sample_set(pytester, *(sample(f"s{i:02d}", "Say hi") for i in range(90)))
    llm.add_rule("Say hi", "hi there", latency=0.05)
    llm.gate(30, timeout=5)  # the first 30 calls are in flight together: 30 connections open
    result = omk_run("--omk-executor", "openai", "--omk-concurrency", "30")
    result.assert_outcomes(passed=90)
    assert llm.peak_in_flight == 30
    assert len(llm.requests) == 90
    assert llm.connections == 30
