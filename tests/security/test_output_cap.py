"""Stored outputs have a cap; grading still reads the whole output (issue #43).

Two 8 MiB outputs used to give 16 MiB each of JSON report, HTML report, pytest-html page and
recordings. Each stored copy now keeps the output up to the documented cap and marks the rest as
cut, while the assertions are graded on everything the model said.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import FakeCommand, executor_arg, load_report, report_samples, run_pytest, write_samples

probe = pytest.mark.probe
OUTPUT_BYTES = 8 * 1024 * 1024
STORED_LIMIT = 4 * 1024 * 1024
"""What two capped outputs and everything around them must fit in, per file."""


@pytest.mark.multiprocess
@probe("size cap")
def test_two_huge_outputs_are_stored_capped_and_graded_whole(
    pytester: pytest.Pytester, fake_command: FakeCommand
) -> None:
    outputs = {f"big-{i}": f"start-{i} " + "y" * OUTPUT_BYTES + f" END-{i}" for i in range(2)}
    write_samples(
        pytester,
        "eval-samples.json",
        {
            "schemaVersion": "omk.eval-sample-set/v2",
            "samples": [
                {
                    "sample_id": sample_id,
                    "prompt": "Write a lot.",
                    "assertions": [
                        {"type": "contains", "value": f"END-{i}"},
                        {"type": "min_length", "value": OUTPUT_BYTES},
                    ],
                }
                for i, sample_id in enumerate(outputs)
            ],
        },
    )
    result = run_pytest(
        pytester,
        executor_arg(fake_command.script(outputs)),
        "--omk-judge=none",
        "--omk-record-mode=new_episodes",
        "--omk-recordings=recs",
        "--omk-app-record=answers",  # the scripted command is an app: its answers recorded on request
        "--omk-app-digest=version:1",
        "--omk-report=r.json",
        "--omk-html=report.html",
        "--html=page.html",
        "--self-contained-html",
        subprocess=True,
    )
    # Graded on the whole output: the ends and the length are seen.
    result.assert_outcomes(passed=2)
    samples = report_samples(load_report(pytester.path / "r.json"))
    kept = {
        sample_id: _kept(samples[sample_id]["execution"]["output"], output)
        for sample_id, output in outputs.items()
    }
    assert kept == dict.fromkeys(outputs, (True, True, True))
    sizes = {name: (pytester.path / name).stat().st_size for name in ("r.json", "report.html", "page.html")}
    recordings = list((pytester.path / "recs").rglob("*.json"))
    sizes |= {str(p.relative_to(pytester.path)): p.stat().st_size for p in recordings}
    assert len(recordings) == 2
    assert {name: size for name, size in sizes.items() if size > STORED_LIMIT} == {}
    for path in recordings:
        recorded = json.loads(Path(path).read_text(encoding="utf-8"))["result"]["output"]
        assert "cut" in recorded[-200:]


def _kept(stored: str, output: str) -> tuple[bool, bool, bool]:
    """Whether ``stored`` starts as ``output`` does, is shorter, and says that it was cut."""
    return stored.startswith(output[:1000]), len(stored) < len(output), "cut" in stored[-200:]
