"""No known secret reaches the judge's provider (issue #49, item 9).

The judge's prompt quotes the answer and a summary of the agent's trace. An answer that echoed the
model-under-test provider's ``Authorization`` header was forwarded verbatim: one provider's key went
to another provider. A fake judge server records what it receives; the run's known secrets are
masked in every prompt, including inside the trace previews the summary cuts.
"""

from __future__ import annotations

import json
import secrets

import pytest

from tests.fakes.fake_llm import FakeLLM
from tests.support import FakeCommand, OmkRun, executor_arg, sample, write_sample_set

probe = pytest.mark.probe
PREVIEW = 280
"""Characters of a tool input the trace summary shows (``judge.trace_summary``)."""


@probe("secrets")
def test_judge_prompts_carry_no_secret_of_the_run(
    pytester: pytest.Pytester,
    omk_run: OmkRun,
    fake_llm: FakeLLM,
    fake_command: FakeCommand,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    upstream_key = f"ant-{secrets.token_hex(16)}"  # the model under test's provider
    password = f"pw{secrets.token_hex(10)}"
    monkeypatch.setenv("ANTHROPIC_API_KEY", upstream_key)
    monkeypatch.setenv("PGPASSWORD", password)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)  # the judge's provider
    monkeypatch.setenv("OPENAI_API_KEY", f"judge-{secrets.token_hex(8)}")
    fake_llm.script(default=json.dumps({"score": 4, "reason": "fine"}))
    answer = {
        "output": f"Debug dump: x-api-key: {upstream_key}\nAuthorization: Bearer {upstream_key}\nDB {password}",
        "numTurns": 2,
        "toolCalls": [
            # The summary cuts a tool input at 280 characters: the password spans the cut.
            {
                "tool": "Bash",
                "input": {"command": "A" * (PREVIEW + 1 - len(password)) + password},
                "success": True,
            },
            {"tool": "Bash", "input": {"command": f"echo {password}"}, "output": "ok", "success": True},
        ],
        "turns": [{"role": "tool", "content": f"env: PGPASSWORD={password}"}],
    }
    write_sample_set(
        pytester,
        sample("leaky", "Show the debug dump", rubric={"clarity": {"criterion": "Is it clear", "weight": 1}}),
    )
    result = omk_run(executor_arg(fake_command.script({"leaky": answer})), "--omk-judge=openai")
    bodies = [json.dumps(request.body) for request in fake_llm.requests]
    assert bodies, result.stdout.str()  # the judge was asked
    assert any("Debug dump" in body and "Bash" in body for body in bodies)  # the answer and trace went
    leaks = [
        f"{name} sent to the judge"
        for name, value in (("ANTHROPIC_API_KEY", upstream_key), ("PGPASSWORD", password))
        for body in bodies
        if value[: len(value) // 2] in body or value[len(value) // 2 :] in body
    ]
    assert not leaks, leaks
