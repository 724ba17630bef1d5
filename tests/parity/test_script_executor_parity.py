"""A real pytest run with a command executor against the reference's own CLI and script executor.

A slice of the generated corpus becomes one sample file; the same small script (``answer.sh``)
answers every sample with its case's output, telemetry, tool calls and mock hits, once under
pytest-omk (``--omk-executor command:...`` in a ``pytester`` run, ``--omk-report``) and once under
``omk eval --executor ...`` (the reference's report JSON). Per sample, both runners must agree on
whether the execution failed; per assertion, no verdict may come out opposite outside the
documented deliberate differences; where the readings agree, so must the scores.

``latency_max`` is left out of the slice: each runner measures its own latency around the call.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pytest_omk.js.v8 import JsEngine
from tests.parity.cases import generate
from tests.parity.reference import Ours, compare, grade_reference, load_ours
from tests.parity.script_run import (
    CONCURRENCY,
    finish_reference,
    mentions,
    read_ours,
    sample_id,
    start_reference,
    write_workspace,
)
from tests.support.runner import run_pytest

SLICE = 250
PROVIDER_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")


def _slice(node: str, package: Path) -> list[dict[str, Any]]:
    """The first ``SLICE`` cases without ``latency_max`` that both graders load."""
    candidates = [c for c in generate(SLICE * 2) if not mentions(c["assertions"], "latency_max")]
    graded = grade_reference(node, package, candidates)
    engine = JsEngine()
    try:
        loadable = [
            c
            for c, g in zip(candidates, graded, strict=True)
            if "error" not in g and not isinstance(load_ours(c, engine), str)
        ]
    finally:
        engine.close()
    assert len(loadable) >= SLICE, len(loadable)
    return loadable[:SLICE]


def _problems(
    case: dict[str, Any], ours: Ours | str | None, theirs: dict[str, Any] | None, tally: Counter[str]
) -> list[str]:
    if ours is None or theirs is None:
        return [f"not reported: ours={ours is not None} reference={theirs is not None}"]
    our_error = ours if isinstance(ours, str) else None
    their_error = theirs.get("execution_error")
    if our_error is not None or their_error is not None:
        if our_error is not None and their_error is not None:
            tally["both: execution failure"] += 1
            return []
        return [f"execution: ours={our_error!r} reference={their_error!r}"]
    assert isinstance(ours, Ours)
    return compare(case, ours, theirs, tally)


@pytest.mark.slow
def test_command_executor_run_equals_the_reference_script_executor(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, node: str, reference_package: Path
) -> None:
    for name in (*PROVIDER_ENV, "CI"):
        monkeypatch.delenv(name, raising=False)
    cases = _slice(node, reference_package)
    samples, command = write_workspace(pytester.path, cases)
    pytester.makeini("[pytest]\nomk_executor_capabilities = mocks\n")
    reference = start_reference(node, reference_package, samples, command)
    try:
        result = run_pytest(
            pytester,
            "-p",
            "no:randomly",
            "--omk-record-mode=off",
            f"--omk-executor=command:{command}",
            f"--omk-concurrency={CONCURRENCY}",
            "--omk-report=ours.json",
            "-q",
        )
    finally:
        theirs = finish_reference(reference, samples)
    assert result.ret in (0, 1), result.stdout.str()[-3000:]
    ours = read_ours(pytester.path / "ours.json")
    tally: Counter[str] = Counter()
    failures = [
        f"{sample_id(c)} output={c['output'][:60]!r}: {problem}"
        for c in cases
        for problem in _problems(c, ours.get(sample_id(c)), theirs.get(sample_id(c)), tally)
    ]
    print(dict(tally))
    assert tally["same verdict"] > SLICE
    assert tally["both: execution failure"] > 0  # blank answers and mock counts that do not add up
    assert not failures, f"{len(failures)} disagreements, first ones:\n" + "\n".join(failures[:25])
