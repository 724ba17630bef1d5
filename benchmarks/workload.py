"""The network-bound workload shared by ``concurrency`` and ``peers``: N samples, 2 checks each.

Every sample is one chat completion against the loopback fake at :data:`LATENCY` a call, graded by
the same two deterministic checks (:data:`CHECKS`), with :data:`CONCURRENCY` calls in flight. The
bare client (:data:`BARE_CLIENT`) is the floor of that workload on this harness: a plain
``httpx.AsyncClient`` script making the same calls with the same concurrency and applying the same
checks, with nothing else around it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks import _support as s
from benchmarks.samples import make_samples

SAMPLES = 200
LATENCY = 0.25
CONCURRENCY = 32
MUST_CONTAIN = "parameterized"
MUST_NOT_CONTAIN = "as an AI"
CHECKS: tuple[dict[str, str], ...] = (
    {"type": "contains", "value": MUST_CONTAIN},
    {"type": "not_contains", "value": MUST_NOT_CONTAIN},
)
"""The two checks of every sample; :data:`benchmarks.samples.CANNED_OUTPUT` passes both."""


def whole_rounds(calls: int, concurrency: int, latency: float) -> float:
    """What a schedule of whole rounds needs: ⌈calls ÷ concurrency⌉ × latency."""
    return -(-calls // concurrency) * latency


def workload_samples(count: int = SAMPLES) -> list[dict[str, Any]]:
    """``count`` generated samples (prompt, context, metadata), no rubric, :data:`CHECKS` each."""
    samples = make_samples(count, rubric=0, assertions=len(CHECKS))
    for sample in samples:
        sample["assertions"] = [dict(check) for check in CHECKS]
    return samples


def user_prompt(sample: dict[str, Any]) -> str:
    """The user message the plugin sends for ``sample`` (prompt, then the context in a fence)."""
    context = sample.get("context")
    return f"{sample['prompt']}\n\n```\n{context}\n```" if context else str(sample["prompt"])


def write_prompts(directory: Path, samples: list[dict[str, Any]]) -> Path:
    """``prompts.json``: the sample ids and user messages, for the bare client and the peers."""
    path = directory / "prompts.json"
    rows = [{"id": sample["sample_id"], "prompt": user_prompt(sample)} for sample in samples]
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


BARE_CLIENT = f'''\
"""The floor: the workload's calls with a bare httpx.AsyncClient, then its two checks."""
import asyncio, json, os, sys, time

import httpx


async def main(prompts, concurrency, answered=None):
    base = os.environ["OPENAI_BASE_URL"].rstrip("/")
    headers = {{"authorization": "Bearer " + os.environ["OPENAI_API_KEY"]}}
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    gate = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(base_url=base, headers=headers, limits=limits, timeout=60) as client:

        async def one(index, row):
            async with gate:
                body = {{"model": "bench-model", "messages": [{{"role": "user", "content": row["prompt"]}}]}}
                response = await client.post("/chat/completions", json=body)
                response.raise_for_status()
                text = response.json()["choices"][0]["message"]["content"]
                if answered is not None:
                    answered(index, text)
                return {MUST_CONTAIN!r} in text and {MUST_NOT_CONTAIN!r} not in text

        return await asyncio.gather(*(one(index, row) for index, row in enumerate(prompts)))


if __name__ == "__main__":
    start = time.perf_counter()
    prompts = json.load(open(sys.argv[1], encoding="utf-8"))
    passed = asyncio.run(main(prompts, int(sys.argv[2])))
    print(json.dumps({{"calls": len(passed), "passed": sum(passed), "seconds": time.perf_counter() - start}}))
'''
"""Run as ``python bare_client.py prompts.json CONCURRENCY``; prints one JSON line. Its ``main`` is
also what :data:`PYTEST_FLOOR_CONFTEST` runs inside pytest."""

PYTEST_FLOOR_CONFTEST = f'''\
"""pytest around the bare client: its calls start when collection ends, on a thread of their own,
and each test waits for its sample's answer (what a minimal plugin would do, nothing more)."""
import asyncio, concurrent.futures, json, sys, threading
from pathlib import Path

import pytest

import bare_client  # beside this file (pytest puts the conftest's directory on sys.path)

ANSWERS = []


def _calls(prompts):
    try:
        asyncio.run(bare_client.main(prompts, {CONCURRENCY}, lambda index, text: ANSWERS[index].set_result(text)))
    except BaseException as exc:
        for answer in ANSWERS:
            if not answer.done():
                answer.set_exception(exc)


def pytest_collection_finish(session):
    prompts = json.loads((Path(__file__).parent / "prompts.json").read_text(encoding="utf-8"))
    ANSWERS[:] = [concurrent.futures.Future() for _ in prompts]
    threading.Thread(target=_calls, args=(prompts,), daemon=True).start()


@pytest.fixture
def answer(request):
    return ANSWERS[request.param].result(timeout=120)
'''
"""``pytest-floor/conftest.py``: pytest plus the bare client, the floor of any pytest plugin."""


def write_pytest_floor(floor: Path, prompts: Path) -> int:
    """A pytest project in ``floor`` (outside the plugin's project): :data:`PYTEST_FLOOR_CONFTEST`,
    the bare client, a copy of ``prompts`` and one test per prompt (the two checks); their count."""
    floor.mkdir(parents=True, exist_ok=True)
    count = len(json.loads(prompts.read_text(encoding="utf-8")))
    (floor / "prompts.json").write_text(prompts.read_text(encoding="utf-8"), encoding="utf-8")
    write_bare_client(floor)
    (floor / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (floor / "conftest.py").write_text(PYTEST_FLOOR_CONFTEST, encoding="utf-8")
    (floor / "test_floor.py").write_text(
        "import pytest\n\n\n"
        f'@pytest.mark.parametrize("answer", range({count}), indirect=True)\n'
        "def test_sample(answer):\n"
        f"    assert {MUST_CONTAIN!r} in answer\n"
        f"    assert {MUST_NOT_CONTAIN!r} not in answer\n",
        encoding="utf-8",
    )
    return count


def write_bare_client(root: Path) -> Path:
    """``root/bare_client.py`` (:data:`BARE_CLIENT`), written once."""
    script = root / "bare_client.py"
    if not script.exists():
        script.write_text(BARE_CLIENT, encoding="utf-8")
    return script


def run_pytest_floor(floor: Path, count: int, env: dict[str, str]) -> s.RunResult:
    """pytest in ``floor`` (:func:`write_pytest_floor`), no plugin: fails unless every test passed."""
    return s.run_pytest("-q", cwd=floor, env=env, plugins=(), expect={"passed": count})


def run_bare_client(root: Path, prompts: Path, env: dict[str, str], concurrency: int) -> s.RunResult:
    """Run :data:`BARE_CLIENT` in a child process; fails unless every call passed both checks."""
    script = write_bare_client(root)
    result = s.run([s.PYTHON, str(script), str(prompts), str(concurrency)], cwd=root, env=env)
    lines = result.output.strip().splitlines()
    try:
        summary = json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        summary = {}
    count = len(json.loads(prompts.read_text(encoding="utf-8")))
    if result.returncode != 0 or summary.get("passed") != count:
        tail = "\n".join(lines[-10:])
        raise s.BenchmarkError(f"the bare httpx client did not pass {count} samples:\n{tail}")
    return result
