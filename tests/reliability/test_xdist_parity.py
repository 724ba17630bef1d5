"""xdist parity: ``-n 2`` and ``-n 0`` write the same JSON report, byte for byte, apart from timings.

Both examples run offline from their committed recordings (copied, with the examples' own
``pytest.ini``, into a temporary directory), once in one process and once on two workers.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.support import OmkRun, load_report

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

TIMING_FIELDS = ("createdAt", "startedAt", "durationS", "latencyMs", "durationApiMs")
"""The only fields allowed to differ: when the run started and the report was written
(``startedAt``, ``createdAt``), how long the run took (``durationS``) and how long calls took (``latencyMs``, ``durationApiMs``; a replay reports the recorded value, so they match
here, but a live run measures them)."""
_TIMING = re.compile(
    rb'"(' + b"|".join(f.encode() for f in TIMING_FIELDS) + rb')": ("[^"]*"|-?[0-9][0-9.eE+-]*|null)'
)


def normalised(report: Path) -> bytes:
    """The report's bytes with the value of every timing field replaced by a placeholder."""
    return _TIMING.sub(rb'"\1": "<timing>"', report.read_bytes())


@pytest.mark.parametrize("example", ["quickstart", "ab-compare"])
def test_two_workers_write_the_same_report_as_one(
    pytester: pytest.Pytester, omk_run: OmkRun, example: str
) -> None:
    pytest.importorskip("xdist")
    shutil.copytree(EXAMPLES / example, pytester.path, dirs_exist_ok=True)
    assert (pytester.path / "pytest.ini").is_file() and (pytester.path / "recordings").is_dir()
    common = ("--omk-record-mode=none", "-p", "no:cacheprovider", "-rA")
    serial = omk_run(*common, "-n", "0", "--omk-report=serial.json")
    parallel = omk_run(*common, "-n", "2", "--omk-report=parallel.json")
    assert "2 workers" in parallel.stdout.str()

    # The same outcomes, counted by pytest and named per sample.
    assert serial.ret == parallel.ret
    assert serial.parseoutcomes() == parallel.parseoutcomes()
    assert "Traceback" not in serial.stdout.str() + parallel.stdout.str()
    serial_doc, parallel_doc = (
        load_report(pytester.path / "serial.json"),
        load_report(pytester.path / "parallel.json"),
    )
    outcomes = [(s["nodeid"], s["outcome"]) for s in serial_doc["samples"]]
    assert outcomes == [(s["nodeid"], s["outcome"]) for s in parallel_doc["samples"]]
    assert serial_doc["summary"]["modelCalls"]["live"] == 0  # offline: everything replayed

    # The same document, byte for byte, once timings are normalised.
    serial_bytes, parallel_bytes = (
        normalised(pytester.path / "serial.json"),
        normalised(pytester.path / "parallel.json"),
    )
    assert serial_bytes.count(b'"<timing>"') >= 1 + len(outcomes)  # createdAt and each sample's latency
    assert parallel_bytes == serial_bytes
