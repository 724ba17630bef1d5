"""The pull-request section fits a GitHub comment (issue #49, item 8).

GitHub refuses a comment body over 65,536 characters, and the bot's whole comment is lost. With 700
newly failing samples the section was 75,809 characters: lost exactly when it mattered. Rows are
now dropped from the end with a note saying how many, the same rows for the same runs.

The run that counts is real: 700 samples failing against a baseline, writing ``--omk-markdown``. The
baseline, all 700 passing, is built from one real passing record repeated under 700 names (a
baseline is only read for its records; a second 700-sample run would cost seconds for nothing).
"""

from __future__ import annotations

import copy
import json
import random
import re

import pytest

from pytest_omk.report.markdown import render_markdown
from pytest_omk.report.pr_comment import MARKER
from tests.support import OmkRun

probe = pytest.mark.probe
SAMPLES = 700
GITHUB_COMMENT_CHARS = 65_536


def name(i: int) -> str:
    return f"refund-policy-question-about-a-late-delivery-{i:04d}"


def write(pytester: pytest.Pytester, needle: str, count: int = SAMPLES) -> None:
    samples = [
        {
            "sample_id": name(i),
            "prompt": "answer about the refund policy: ok",
            "assertions": [{"type": "contains", "value": needle}],
        }
        for i in range(count)
    ]
    (pytester.path / "eval-samples.json").write_text(
        json.dumps({"schemaVersion": "omk.eval-sample-set/v2", "samples": samples}), encoding="utf-8"
    )


def passing_baseline(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    """``base.json``: a real report of one passing sample, its record repeated for all 700 names."""
    write(pytester, "ok", count=1)
    omk_run("--omk-executor=echo", "--omk-report=one.json").assert_outcomes(passed=1)
    document = json.loads((pytester.path / "one.json").read_text(encoding="utf-8"))
    (record,) = document["samples"]
    assert record["outcome"] == "passed"
    document["samples"] = [
        {
            **copy.deepcopy(record),
            "sample_id": name(i),
            "nodeid": f"eval-samples.json::{name(i)}",
            "line": i + 1,
        }
        for i in range(SAMPLES)
    ]
    (pytester.path / "base.json").write_text(json.dumps(document), encoding="utf-8")


def section(text: str) -> str:
    """The section as a bot posts it: from the marker through the ``N unchanged.`` line."""
    start = text.index(MARKER)
    end = text.index(" unchanged.", start) + len(" unchanged.")
    return text[start:end]


@probe("size cap")
def test_seven_hundred_newly_failing_samples_fit_one_comment(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    passing_baseline(pytester, omk_run)
    write(pytester, "absent")
    omk_run(
        "--omk-executor=echo", "--omk-baseline=base.json", "--omk-markdown=a.md", "--omk-report=a.json",
        "--tb=no", "-p", "no:randomly",
    ).assert_outcomes(failed=2 * SAMPLES)  # fmt: skip
    posted = section((pytester.path / "a.md").read_text(encoding="utf-8"))
    assert len(posted) <= GITHUB_COMMENT_CHARS
    assert f"**Newly failing ({SAMPLES})**" in posted
    shown = re.findall(
        r"^\| eval-samples\.json::(refund-policy-question-about-a-late-delivery-\d{4}) \|",
        posted,
        re.MULTILINE,
    )
    assert 0 < len(shown) < SAMPLES
    # The first rows in node-id order stay; the rest are counted, not silently lost.
    assert shown == [name(i) for i in range(len(shown))]
    assert f"_{SAMPLES - len(shown)} more not shown" in posted
    # Deterministic: the same runs give the same section (a bot replaces its comment in place),
    # whatever order the run finished its samples in.
    document = json.loads((pytester.path / "a.json").read_text(encoding="utf-8"))
    assert len(document["baseline"]["changed"]) == SAMPLES
    random.Random(49).shuffle(document["baseline"]["changed"])
    random.Random(8).shuffle(document["samples"])
    assert section(render_markdown(document)) == posted
