"""The compact form a run keeps each sample's record in until it ends (``pytest_omk.report.kept``)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from pytest_omk.compare.analysis import analyze
from pytest_omk.report.kept import KeptRecord, pack, unpack
from pytest_omk.report.terminal import render_summary, summarize


def record(sample_id: str, **changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "nodeid": f"eval-samples.json::{sample_id}",
        "file": "eval-samples.json",
        "sample_id": sample_id,
        "prompt": "Explain the bug. " * 20,
        "variant": None,
        "outcome": "passed",
        "executor": "openai",
        "model": "m",
        "order": 0,
        "scores": {"assertions": 5.0, "fact": 5.0, "behavior": 5.0, "judge": 3.0, "composite": 4.33},
        "assertions": [
            {
                "index": 0,
                "type": "contains",
                "layer": "fact",
                "weight": 1.0,
                "status": "pass",
                "message": "found 'x'",
            },
            {
                "index": 1,
                "type": "semantic_similarity",
                "layer": "judge",
                "weight": 1.0,
                "status": "missing",
                "message": "no judge",
                "cause": "no-judge",
            },
        ],
        "rubric": {
            "clarity": {"score": 3.0, "weight": 1.0, "reason": "clear enough", "status": "pass"},
            "safety": {
                "score": None,
                "weight": 1.0,
                "reason": "reply had no score",
                "status": "missing",
                "cause": "judge-reply",
            },
        },
        "execution": {
            "output": "An answer " * 50,
            "costUSD": 0.0012,
            "latencyMs": 12.5,
            "inputTokens": 3,
            "outputTokens": 4,
            "numTurns": 1,
            "toolCalls": None,
            "replayed": True,
            "retries": 0,
        },
        "metadata": {"capability": ["triage"], "difficulty": "easy"},
        "modelCalls": {"live": 0, "replayed": 2},
        "urls": [{"url": "https://example.test/doc", "status": "ok"}],
        "error": None,
        "repeats": None,
    }
    base.update(changes)
    return base


def test_a_record_comes_back_whole_from_its_packed_form() -> None:
    original = record("a", prompt="naïve 日本語 \ud800 lone surrogate", scores={"composite": math.inf})
    kept = KeptRecord.of(original)
    assert kept.record() == original
    assert unpack(pack(original)) == original
    assert kept.packed is not None and len(kept.packed) < len(repr(original))


def test_a_record_is_kept_compressed() -> None:
    original = record("a")
    compact = json.dumps(original, separators=(",", ":"), ensure_ascii=False).encode()
    packed = KeptRecord.of(original).packed
    assert packed is not None and len(packed) < len(compact) / 2


def test_the_summary_view_drops_the_text_and_keeps_what_the_summary_reads() -> None:
    view = KeptRecord.of(record("a")).view
    assert "prompt" not in view and "urls" not in view
    assert view["execution"] == {"costUSD": 0.0012, "latencyMs": 12.5, "replayed": True, "stopReason": None}
    assert view["assertions"] == [{"type": "semantic_similarity", "status": "missing", "cause": "no-judge"}]
    assert view["rubric"] == {"safety": {"status": "missing", "cause": "judge-reply"}}
    assert KeptRecord.of(record("b", execution=None)).view["execution"] is None


def test_totals_terminal_lines_and_comparisons_are_the_same_from_the_views() -> None:
    rows = [
        record("a"),
        record(
            "b",
            outcome="failed",
            scores={"assertions": 1.0, "fact": 1.0, "behavior": None, "judge": None, "composite": 1.0},
        ),
        record("a", variant="B", nodeid="eval-samples.json::a[B]", metadata={"capability": ["x"]}),
        record("c", outcome="error", execution=None, assertions=[], rubric={}, error="executor failed"),
    ]
    views = [KeptRecord.of(row).view for row in rows]
    assert summarize(views) == summarize(rows)
    assert render_summary(views, verbose=True, width=120, wide=True) == render_summary(
        rows, verbose=True, width=120, wide=True
    )
    assert summarize(views)["judgeMissingReasons"]  # the missing readings' causes made it through
    options: dict[str, Any] = {"variants": [], "rootdir": Path(".")}
    assert analyze(views, **options) == analyze(rows, **options)


def test_views_share_the_text_samples_repeat() -> None:
    # Built from separate JSON documents, as records arrive: equal strings, distinct objects.
    first, second = (json.loads(json.dumps(record(name, model="model-under-test"))) for name in ("a", "b"))
    assert first["model"] is not second["model"]
    views = [KeptRecord.of(row).view for row in (first, second)]
    assert views[0]["model"] is views[1]["model"] and views[0]["file"] is views[1]["file"]
    assert views[0]["metadata"]["capability"][0] is views[1]["metadata"]["capability"][0]
    assert views[0]["metadata"] == first["metadata"] and views[0]["sample_id"] == "a"


def test_a_record_larger_than_the_packing_window_comes_back_whole() -> None:
    # Records are packed with a 4 KB window; an agent's trace or a long answer is many times that.
    words = [f"step {i}: called tool_{i % 7} with {{'path': 'src/mod_{i}.py'}} -> ok" for i in range(3000)]
    original = record("big", execution={"output": "\n".join(words), "trace": words, "replayed": False})
    packed = pack(original)
    assert unpack(packed) == original
    assert len(packed) < len(json.dumps(original)) / 4


def test_a_record_kept_for_the_summary_only_has_the_same_view_and_no_packed_form() -> None:
    # A run that writes no report file never reads the whole record back: it is not packed.
    original = record("a")
    summary_only, whole = KeptRecord.of(original, whole=False), KeptRecord.of(original)
    assert summary_only.packed is None and whole.packed is not None
    assert summary_only.view == whole.view
    with pytest.raises(ValueError, match=r"eval-samples\.json::a.*summary only"):
        summary_only.record()
