"""Writing the JSON report: the same text as ``json.dumps(indent=2)``, streamed to the file."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

from pytest_omk.report.outputs import ReportTargets, write_reports


def _document(rows: int) -> dict[str, Any]:
    return {
        "schema": "pytest-omk.report/v1",
        "samples": [
            {
                "sample_id": f"case-{i:05d}",
                "scores": {"assertions": 5.0, "fact": 5.0, "behavior": None, "judge": 4.25, "composite": 4.6},
                "assertions": [
                    {"index": k, "type": "contains", "status": "pass", "message": "ünïcode ok"}
                    for k in range(5)
                ],
                "execution": {"output": "Verdict: fine. " * 20, "latencyMs": 12.5},
            }
            for i in range(rows)
        ],
    }


def test_the_json_report_is_the_indented_dump_of_the_document(tmp_path: Path) -> None:
    document = _document(3)
    target = tmp_path / "out" / "r.json"
    assert write_reports(document, ReportTargets(json=target), ["no-such-secret"]) == []
    assert target.read_text(encoding="utf-8") == json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def test_writing_a_large_report_does_not_hold_its_text_in_memory(tmp_path: Path) -> None:
    # json.dumps with indent joins a list of every token at once: for this document its peak was
    # several times the file's size. Streamed, the peak is the scrubbed copy of the document (1.3x the file here, 7.3x before).
    document = _document(2000)
    target = tmp_path / "r.json"
    tracemalloc.start()
    try:
        write_reports(document, ReportTargets(json=target), [])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    size = target.stat().st_size
    assert size > 2_000_000
    assert peak < 2 * size, f"peak {peak:,} bytes for a {size:,}-byte report"


def test_the_json_report_writes_unsafe_characters_as_escapes_of_the_same_text(tmp_path: Path) -> None:
    document = {"samples": [{"output": "\u202e~ fr- mr \x9b31m \u200b"}]}
    target = tmp_path / "r.json"
    write_reports(document, ReportTargets(json=target), [])
    written = target.read_text(encoding="utf-8")
    assert json.loads(written) == document
    assert "\\u202e" in written and not {"\u202e", "\x9b", "\u200b"} & set(written)
