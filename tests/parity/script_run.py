"""Both runners on one sample file: pytest-omk's command executor and the reference's script executor.

The cases of ``cases.py`` become a real ``omk.eval-sample-set/v2`` file (the prompt is the sample
id, every sample declares the mocks of ``reference.MOCKS`` so that both runners hand the command
an ``OMK_MOCKS_FILE``), and ``answer.sh`` answers each sample with its case's output, cost,
turns, tool calls and mock hits. The reference runs through its own CLI (``omk eval``) and writes
its report JSON; pytest-omk writes ``--omk-report``. Both are read into the shapes that
``reference.compare`` takes.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.parity.reference import MOCKS, Ours

ANSWER_SCRIPT = Path(__file__).with_name("answer.sh")
SCHEMA_VERSION = "omk.eval-sample-set/v2"
CONCURRENCY = 8
REPORTS = "reference-reports"
SHELL = shutil.which("sh") or "/bin/sh"


def sample_id(case: dict[str, Any]) -> str:
    """The id (and prompt) of a case's sample."""
    return f"case-{case['id']}"


def mentions(value: Any, kind: str) -> bool:
    """Whether an assertion of type ``kind`` occurs anywhere in ``value`` (nested sets included)."""
    if isinstance(value, dict):
        return value.get("type") == kind or any(mentions(v, kind) for v in value.values())
    if isinstance(value, list):
        return any(mentions(v, kind) for v in value)
    return False


def write_workspace(folder: Path, cases: Sequence[dict[str, Any]]) -> tuple[Path, str]:
    """Write the sample file and the answers; return the file and the executor command line."""
    samples = [
        {
            "sample_id": sample_id(c),
            "prompt": sample_id(c),
            "assertions": c["assertions"],
            "mocks": MOCKS,
            "mocksStrict": False,
        }
        for c in cases
    ]
    answers = folder / "answers"
    answers.mkdir()
    for case in cases:
        context = case["context"]
        stats = context["mockStats"]
        # Hits that add up, but for every tenth case: both runners must refuse those counts.
        hits = stats["hits"] if case["id"] % 10 == 0 else sum(stats["perMock"].values())
        answer = {
            "output": case["output"],
            "costUSD": context["costUSD"],
            "numTurns": context["numTurns"],
            "toolCalls": context["toolCalls"],
        }
        # One line each (ASCII JSON): the script reads each with one `read`.
        (answers / f"{sample_id(case)}.json").write_text(json.dumps(answer) + "\n", encoding="utf-8")
        (answers / f"{sample_id(case)}.hits.json").write_text(
            json.dumps({"hits_total": hits, "misses_total": stats["misses"], "perMock": stats["perMock"]})
            + "\n",
            encoding="utf-8",
        )
    path = folder / "eval-samples.json"
    path.write_text(
        json.dumps({"schemaVersion": SCHEMA_VERSION, "samples": samples}, ensure_ascii=False),
        encoding="utf-8",
    )
    # A POSIX shell script: the cheapest start for 2 x SLICE processes (no interpreter to load).
    return path, shlex.join([SHELL, str(ANSWER_SCRIPT), str(answers)])


def start_reference(node: str, package: Path, samples: Path, command: str) -> subprocess.Popen[str]:
    """Start ``omk eval`` with the script executor on ``samples`` (it runs while pytest-omk does).

    ``OMK_LENIENT_ASSERTIONS=1`` turns the reference's extra loader rule (the "single token" value
    lengths, a deliberate difference) into warnings; no judge, server, doctor or network check runs.
    """
    env = {**os.environ, "OMK_LENIENT_ASSERTIONS": "1", "OMK_SKIP_UPDATE_CHECK": "1", "OMK_LANG": "en"}
    argv = [
        node,
        str(package / "dist" / "cli" / "index.js"),
        "eval",
        "--lang",
        "en",
        "--control",
        "baseline",
        "--executor",
        command,
        "--samples",
        str(samples),
        "--output-dir",
        str(samples.parent / REPORTS),
        "--concurrency",
        str(CONCURRENCY),
        "--no-judge",
        "--no-serve",
        "--skip-connectivity",
        "--skip-doctor",
        "--no-diagnostic",
        "--no-evidence",
        "--no-gate",
        "--no-cache",
        "--report-only",
        "--retry",
        "0",
    ]
    return subprocess.Popen(
        argv,
        cwd=samples.parent,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        encoding="utf-8",
        errors="replace",
    )


def finish_reference(process: subprocess.Popen[str], samples: Path) -> dict[str, dict[str, Any]]:
    """Wait for the reference's run; its readings per sample id, from its report JSON."""
    try:
        printed, _ = process.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    reports = sorted((samples.parent / REPORTS).glob("*.report.json"))
    assert process.returncode == 0 and len(reports) == 1, (process.returncode, printed[-3000:])
    report = json.loads(reports[0].read_text(encoding="utf-8"))
    return {row["sample_id"]: _reference_reading(row["variants"]["baseline"]) for row in report["results"]}


def _reference_reading(variant: dict[str, Any]) -> dict[str, Any]:
    if not variant["ok"]:
        return {"execution_error": variant.get("error") or "failed"}
    assertions = variant["assertions"]
    layered = variant.get("layeredScores") or {}
    return {
        "passed": [d["passed"] for d in assertions["details"]],
        "score": assertions["score"],
        "fact": layered.get("factScore"),
        "behavior": layered.get("behaviorScore"),
        "composite": variant["compositeScore"],
    }


def read_ours(report: Path) -> dict[str, Ours | str]:
    """pytest-omk's ``--omk-report``: readings per sample id, or the executor error of a sample."""
    document = json.loads(report.read_text(encoding="utf-8"))
    readings: dict[str, Ours | str] = {}
    for row in document["samples"]:
        if row.get("error"):
            readings[row["sample_id"]] = str(row["error"])
            continue
        scores = row["scores"]
        readings[row["sample_id"]] = Ours(
            [a["status"] for a in sorted(row["assertions"], key=lambda a: a["index"])],
            {
                "score": scores["assertions"],
                "fact": scores["fact"],
                "behavior": scores["behavior"],
                "composite": scores["composite"],
            },
        )
    return readings
