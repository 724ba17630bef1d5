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


async def main(prompts, concurrency):
    base = os.environ["OPENAI_BASE_URL"].rstrip("/")
    headers = {{"authorization": "Bearer " + os.environ["OPENAI_API_KEY"]}}
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    gate = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(base_url=base, headers=headers, limits=limits, timeout=60) as client:

        async def one(row):
            async with gate:
                body = {{"model": "bench-model", "messages": [{{"role": "user", "content": row["prompt"]}}]}}
                response = await client.post("/chat/completions", json=body)
                response.raise_for_status()
                text = response.json()["choices"][0]["message"]["content"]
                return {MUST_CONTAIN!r} in text and {MUST_NOT_CONTAIN!r} not in text

        return await asyncio.gather(*(one(row) for row in prompts))


start = time.perf_counter()
prompts = json.load(open(sys.argv[1], encoding="utf-8"))
passed = asyncio.run(main(prompts, int(sys.argv[2])))
print(json.dumps({{"calls": len(passed), "passed": sum(passed), "seconds": time.perf_counter() - start}}))
'''
"""Run as ``python bare_client.py prompts.json CONCURRENCY``; prints one JSON line."""


def run_bare_client(root: Path, prompts: Path, env: dict[str, str], concurrency: int) -> s.RunResult:
    """Run :data:`BARE_CLIENT` in a child process; fails unless every call passed both checks."""
    script = root / "bare_client.py"
    if not script.exists():
        script.write_text(BARE_CLIENT, encoding="utf-8")
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
