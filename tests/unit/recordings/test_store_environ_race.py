"""The recording path never iterates ``os.environ`` once the store exists.

Recording 20,000 calls once gave ``KeyError: 'PYTEST_CURRENT_TEST'`` and a lost recording: the
secrets scan iterated ``os.environ`` on the loop's worker thread while pytest's main thread set and
deleted ``PYTEST_CURRENT_TEST``. The race needs thousands of writes to show up by chance; this test
makes it certain instead, with an environment that raises as soon as anything iterates it.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_omk.models.results import ExecutionResult
from pytest_omk.models.run import ExecutionRequest
from pytest_omk.recordings.store import RecordingStore


class _RacingEnviron(dict[str, str]):
    """``os.environ`` as another thread sees it mid-update: iterating it fails, lookups work."""

    iterations = 0

    def __iter__(self) -> Iterator[str]:
        type(self).iterations += 1
        raise KeyError("PYTEST_CURRENT_TEST")

    def items(self):  # type: ignore[no-untyped-def]
        type(self).iterations += 1
        raise KeyError("PYTEST_CURRENT_TEST")


def test_recording_calls_never_iterates_the_live_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-from-the-environment")
    store = RecordingStore(tmp_path / "rec", "new_episodes")  # the snapshot is taken here, once
    monkeypatch.setattr(os, "environ", _RacingEnviron(os.environ))

    async def record(index: int) -> ExecutionResult:
        async def live() -> ExecutionResult:
            return ExecutionResult(output=f"answer {index} sk-secret-from-the-environment")

        request = ExecutionRequest(prompt=f"question {index}", sample_id=f"s{index}")
        return await store.call("echo", request, live)

    async def main() -> list[ExecutionResult]:
        # The writes hop to worker threads, as they do in a run.
        return list(await asyncio.gather(*(record(i) for i in range(50))))

    results = asyncio.run(main())
    assert [r.output for r in results] == [f"answer {i} sk-secret-from-the-environment" for i in range(50)]
    assert _RacingEnviron.iterations == 0
    files = sorted((tmp_path / "rec").rglob("*.json"))
    assert len(files) == 50
    # The snapshot still feeds the scrubber: the environment's key never reaches disk.
    assert not any("sk-secret-from-the-environment" in f.read_text(encoding="utf-8") for f in files)
