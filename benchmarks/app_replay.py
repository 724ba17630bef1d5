"""An app under test whose model call replays, against the built-in ``openai`` executor replaying
the same calls (issue 41): what running the app live and its call through the gateway costs.

Both arms run the same samples and make the same chat completion per sample (the same model,
the same messages), recorded once live against the loopback fake:

- ``openai``: ``--omk-executor openai``; a replay reads each answer from ``execute/``;
- ``app``: ``--omk-executor python:bench_app:answer``, a small app with an httpx client that posts
  the request the ``openai`` executor would send to ``OPENAI_BASE_URL``; it runs for every sample,
  and its call reaches the model gateway on loopback, which replays it from ``http/``.

The replays run with ``--omk-record-mode none`` and the fake stopped (a miss would be an error),
interleaved round by round; the figure is the ratio of the median walls, measured in one run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks import _support as s
from benchmarks.samples import CANNED_OUTPUT, make_samples, write_samples

FULL, QUICK = 2_000, 300
ROUNDS = 5
TARGET = 1.3
CONCURRENCY = 16

APP = '''"""The app under test: one chat completion per question, over a kept-alive httpx client."""
import os

import httpx

_client = httpx.Client(timeout=60)


def answer(request):
    base = os.environ["OPENAI_BASE_URL"].rstrip("/")
    body = {"model": request.model, "messages": [{"role": "user", "content": request.prompt}]}
    key = os.environ.get("OPENAI_API_KEY", "")
    reply = _client.post(base + "/chat/completions", json=body, headers={"authorization": "Bearer " + key})
    reply.raise_for_status()
    return reply.json()["choices"][0]["message"]["content"]
'''

ARMS = {"openai": "openai", "app": "python:bench_app:answer"}


def _args(arm: str, mode: str) -> tuple[str, ...]:
    return (
        "--omk-executor",
        ARMS[arm],
        "--omk-model",
        "bench-model",
        "--omk-record-mode",
        mode,
        f"--omk-recordings=recordings-{arm}",
        "--omk-concurrency",
        str(CONCURRENCY),
        "-q",
    )


def _project(root: Path, samples: list[dict[str, Any]]) -> None:
    (root / "pytest.ini").write_text("[pytest]\npythonpath = .\n", encoding="utf-8")
    (root / "bench_app.py").write_text(APP, encoding="utf-8")
    write_samples(root, samples)


def run(quick: bool) -> list[s.Row]:
    """Record both arms live once, then replay them interleaved; one row with the ratio."""
    count = QUICK if quick else FULL
    samples = make_samples(count, rubric=0)
    s.warm_bytecode()
    with s.workdir("app-replay") as root:
        _project(root, samples)
        port = s.free_port()
        url = f"http://127.0.0.1:{port}/v1"
        env = s.openai_env(url)
        with s.fake_llm(root, s.fake_script(latency=0.0, reply=CANNED_OUTPUT), port=port):
            for arm in ARMS:
                recorded = s.run_pytest(
                    *_args(arm, "new_episodes"), cwd=root, env=env, expect={"passed": count}
                )
                s.check_calls(recorded, live=count)
        # The server is gone: the same URL stays in the environment (it is part of the keys).
        runs: dict[str, list[s.RunResult]] = {arm: [] for arm in ARMS}
        for index in range(ROUNDS):
            for arm in s.rotated(list(ARMS), index):
                result = s.run_pytest(*_args(arm, "none"), cwd=root, env=env, expect={"passed": count})
                s.check_calls(result, live=0, replayed=count)
                runs[arm].append(result)
    app, builtin = (s.median_run(runs[arm]) for arm in ("app", "openai"))
    fastest = min(r.wall for r in runs["app"]) / min(r.wall for r in runs["openai"])
    notes = (
        f"app replay: {count} samples, one model call each through the gateway; walls {s.walls(runs['app'])} s",
        f"openai replay: the same calls from execute/ recordings; walls {s.walls(runs['openai'])} s",
        f"per sample: app {app.wall / count * 1000:.2f} ms, openai {builtin.wall / count * 1000:.2f} ms; "
        f"fastest against fastest: {fastest:.2f}×",
    )
    return [
        s.target_row(
            f"app executor replay, {count} samples",
            app.wall,
            builtin.wall,
            reference_label="openai executor replay",
            limit=TARGET,
            notes=notes,
        )
    ]
