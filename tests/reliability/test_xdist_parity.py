"""xdist parity: ``-n 2`` and ``-n 0`` write the same JSON report, byte for byte, apart from timings.

Both examples run offline from their committed recordings (copied, with the examples' own
``pytest.ini``, into a temporary directory), once in one process and once on two workers.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support import OmkRun, load_report
from tests.support.reports import normalised

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.multiprocess
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
