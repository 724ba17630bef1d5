"""The pull-request section fits a GitHub comment (issue #49, item 8).

GitHub refuses a comment body over 65,536 characters, and the bot's whole comment is lost. With 700
newly failing samples the section was 75,809 characters: lost exactly when it mattered. Rows are
now dropped from the end with a note saying how many, the same rows for the same runs.
"""

from __future__ import annotations

import json
import re

import pytest

from pytest_omk.report.pr_comment import MARKER
from tests.support import OmkRun

probe = pytest.mark.probe
SAMPLES = 700
GITHUB_COMMENT_CHARS = 65_536


def write(pytester: pytest.Pytester, needle: str) -> None:
    samples = [
        {
            "sample_id": f"refund-policy-question-about-a-late-delivery-{i:04d}",
            "prompt": "answer about the refund policy: ok",
            "assertions": [{"type": "contains", "value": needle}],
        }
        for i in range(SAMPLES)
    ]
    (pytester.path / "eval-samples.json").write_text(
        json.dumps({"schemaVersion": "omk.eval-sample-set/v2", "samples": samples}), encoding="utf-8"
    )


def section(text: str) -> str:
    """The section as a bot posts it: from the marker through the ``N unchanged.`` line."""
    start = text.index(MARKER)
    end = text.index(" unchanged.", start) + len(" unchanged.")
    return text[start:end]


@probe("size cap")
def test_seven_hundred_newly_failing_samples_fit_one_comment(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    write(pytester, "ok")
    omk_run("--omk-executor=echo", "--omk-report=base.json", "-p", "no:randomly")
    write(pytester, "absent")
    omk_run("--omk-executor=echo", "--omk-baseline=base.json", "--omk-markdown=a.md", "-p", "no:randomly")
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
    assert shown == [f"refund-policy-question-about-a-late-delivery-{i:04d}" for i in range(len(shown))]
    assert f"_{SAMPLES - len(shown)} more not shown" in posted
    # Deterministic: the same runs give the same section (a bot replaces its comment in place).
    omk_run("--omk-executor=echo", "--omk-baseline=base.json", "--omk-markdown=b.md", "-p", "no:randomly")
    assert section((pytester.path / "b.md").read_text(encoding="utf-8")) == posted
