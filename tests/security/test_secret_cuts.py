"""A secret is masked before any text is cut (issue #49, item 7).

The failure excerpt cut an answer at 80 characters before the one scrubber ran, and the scrubber
masks whole values only: an answer ``"A" * N + key`` published all but the last character of an API
key (and of ``PGPASSWORD``) in the terminal, the annotations, JUnit, the JSON/HTML/Markdown reports
and the code-quality file. The stored output's 1 MiB cap did the same in the reports. Every cut
now works on text that was masked whole.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest

from pytest_omk._util.stored_text import STORED_TEXT_BYTES
from tests.fakes.fake_llm import FakeLLM
from tests.support import FakeCommand, OmkRun, executor_arg, load_report, report_samples, write_samples

probe = pytest.mark.probe
EXCERPT = 80
"""The failure excerpt's length (``grade.base.excerpt``)."""
TOOL_OUTPUT = 30_000
"""Characters of a tool's output the model receives (``agent.tools.MAX_OUTPUT_CHARS``)."""


def padded(key: str, cut: int) -> str:
    """An answer whose cut at ``cut`` characters keeps all of ``key`` but its last character."""
    return "A" * (cut + 1 - len(key)) + key


def outputs_of(root: Path) -> dict[str, str]:
    names = ("r.json", "r.html", "r.md", "junit.xml", "gl-code-quality.json")
    return {name: (root / name).read_text(encoding="utf-8") for name in names}


@probe("secrets")
def test_a_padded_secret_leaks_no_prefix_to_any_output(
    pytester: pytest.Pytester, omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch, fake_command: FakeCommand
) -> None:
    api_key = f"proj-{secrets.token_hex(17)}"  # 39 characters, not shaped like "sk-"
    password = f"pg{secrets.token_hex(9)}ab"  # 22 characters
    monkeypatch.setenv("OPENAI_API_KEY", api_key)
    monkeypatch.setenv("PGPASSWORD", password)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    answers = {
        # contains fails and quotes the output's first 79 characters (then "…").
        "key": {"output": padded(api_key, EXCERPT - 1) + " and more text after it"},
        "pw": {"output": padded(password, EXCERPT - 1) + " and more text after it"},
        # ends_with fails and quotes the last 60 characters: all of the password but its first.
        "tail": {"output": "C" * 10 + password + "B" * (61 - len(password))},
        # The stored output is cut at 1 MiB: the password spans the cut.
        "big": {"output": padded(password, STORED_TEXT_BYTES) + " end"},
    }
    samples = [
        {"sample_id": "key", "prompt": "p", "assertions": [{"type": "contains", "value": "absent"}]},
        {"sample_id": "pw", "prompt": "p", "assertions": [{"type": "starts_with", "value": "absent"}]},
        {"sample_id": "tail", "prompt": "p", "assertions": [{"type": "ends_with", "value": "absent"}]},
        {"sample_id": "big", "prompt": "p", "assertions": [{"type": "max_length", "value": 10}]},
    ]
    (pytester.path / "eval-samples.json").write_text(
        json.dumps({"schemaVersion": "omk.eval-sample-set/v2", "samples": samples}), encoding="utf-8"
    )
    result = omk_run(
        executor_arg(fake_command.script(answers)),
        "-rA",
        "--omk-report=r.json",
        "--omk-html=r.html",
        "--omk-markdown=r.md",
        "--omk-code-quality=gl-code-quality.json",
        "--junitxml=junit.xml",
    )
    sinks = {"terminal": result.stdout.str() + result.stderr.str(), **outputs_of(pytester.path)}
    # The run did quote the outputs (so a leak would show): the padding reached every sink.
    assert all("AAAAAAAAAA" in text for text in sinks.values()), [
        k for k, v in sinks.items() if "AAAA" not in v
    ]
    # No sink holds the secrets' first halves (what a cut left of them).
    leaks = [
        f"{name} in {sink}"
        for name, value in (("OPENAI_API_KEY", api_key), ("PGPASSWORD", password))
        for sink, text in sinks.items()
        if value[: len(value) // 2] in text or value[len(value) // 2 :] in text
    ]
    assert not leaks, leaks


@pytest.mark.multiprocess
@probe("secrets")
def test_a_tool_output_is_masked_before_it_is_cut(
    pytester: pytest.Pytester, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A Bash output is cut at 30,000 characters before the model sees it; the password spans the cut.
    password = f"pg{secrets.token_hex(10)}"
    monkeypatch.setenv("PGPASSWORD", password)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", f"sk-openai-{secrets.token_hex(8)}")
    (pytester.path / "work").mkdir()
    (pytester.path / "work" / "dump.txt").write_text(
        padded(password, TOOL_OUTPUT) + "B" * 100, encoding="utf-8"
    )
    fake_llm.script(default="Done.")
    fake_llm.add_rule(
        prompt="Show the dump",
        replies=[{"tool_calls": [{"name": "Bash", "arguments": {"command": "cat dump.txt"}}]}, "Done."],
    )
    write_samples(
        pytester,
        "eval-samples.json",
        {
            "schemaVersion": "omk.eval-sample-set/v2",
            "samples": [
                {
                    "sample_id": "dump",
                    "cwd": "work",
                    "prompt": "Show the dump.",
                    "assertions": [{"type": "tools_called", "values": ["Bash"]}],
                }
            ],
        },
    )
    result = pytester.runpytest_subprocess(
        "-p", "no:hypothesispytest", "-p", "no:anyio", "--omk-executor=agent", "--omk-judge=none",
        "--omk-record-mode=new_episodes", "--omk-recordings=recs", "--omk-retries=0", "--omk-report=r.json",
    )  # fmt: skip
    sample = report_samples(load_report(pytester.path / "r.json"))["dump"]
    assert sample["outcome"] == "passed", result.stdout.str()
    assert "[output truncated" in sample["execution"]["toolCalls"][0]["output"]  # the cut happened
    sent = json.dumps([r.body for r in fake_llm.requests])
    stored = "".join(p.read_text(encoding="utf-8") for p in (pytester.path / "recs").rglob("*.json"))
    halves = (password[: len(password) // 2], password[len(password) // 2 :])
    assert [h for h in halves if h in sent or h in stored or h in json.dumps(sample)] == []
