"""Scale: what a large suite needs beyond speed (the recordings directory is never collected)."""

from __future__ import annotations

import pytest

from tests.integration.conftest import OmkRun, sample, write_sample_set, write_samples


def test_the_recordings_directory_is_never_collected(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    write_sample_set(pytester, sample("s1", assertions=[{"type": "contains", "value": "hello"}]))
    # Anything pytest would collect, inside the recordings directory: none of it may run.
    write_samples(pytester, "recordings/execute/ab/eval-samples.json", "{not a sample file")
    pytester.makepyfile(**{"recordings/test_trap.py": "def test_trap():\n    assert False\n"})
    result = omk_run("--omk-executor", "echo", "--omk-recordings", "recordings", "--omk-record-mode", "new_episodes")
    result.assert_outcomes(passed=1)  # the trap would fail and the broken file would error
    assert "collected 1 item" in result.stdout.str()
    assert len(list((pytester.path / "recordings" / "execute").rglob("s1-*.json"))) == 1  # it was used
