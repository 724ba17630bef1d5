"""Scale: the recordings directory is never collected, thousands of calls record under two workers
with nothing lost, and recordings replay whatever pytest's rootdir is."""

from __future__ import annotations

import os

import pytest

from tests.reliability.helpers import audit_recordings
from tests.support import OmkRun, sample, sample_set, write_sample_set, write_samples


def test_the_recordings_directory_is_never_collected(pytester: pytest.Pytester, omk_run: OmkRun) -> None:
    write_sample_set(pytester, sample("s1", assertions=[{"type": "contains", "value": "hello"}]))
    # Anything pytest would collect, inside the recordings directory: none of it may run.
    write_samples(pytester, "recordings/execute/ab/eval-samples.json", "{not a sample file")
    pytester.makepyfile(**{"recordings/test_trap.py": "def test_trap():\n    assert False\n"})
    result = omk_run(
        "--omk-executor", "echo", "--omk-recordings", "recordings", "--omk-record-mode", "new_episodes"
    )
    result.assert_outcomes(passed=1)  # the trap would fail and the broken file would error
    assert "collected 1 item" in result.stdout.str()
    assert len(list((pytester.path / "recordings" / "execute").rglob("s1-*.json"))) == 1  # it was used


def many_samples(count: int) -> dict[str, object]:
    samples = [
        sample(f"s{i:05d}", f"question {i}", assertions=[{"type": "contains", "value": "question"}])
        for i in range(count)
    ]
    return sample_set(*samples)


# 20,000 calls (the figure) take 90 s on a loaded 2-core machine, too long for every CI run;
# CI records 2,000: a thousand per worker, which the controller feeds each worker in many batches
# of about its share of --omk-concurrency. A call costs about 5 ms of CPU here, most of it pytest's
# and xdist's per item (reports over execnet), so the 4,000 recorded before cost 21 CPU-s a run.
# The race this guards against (the secrets scan iterating os.environ on a worker thread while
# pytest sets PYTEST_CURRENT_TEST) is pinned deterministically by
# tests/unit/recordings/test_store_environ_race.py; run the full size with OMK_SCALE_CALLS=20000.
SCALE_CALLS = int(os.environ.get("OMK_SCALE_CALLS", "2000"))


@pytest.mark.multiprocess
@pytest.mark.slow
def test_thousands_of_calls_record_under_two_workers_without_loss(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    """Recording at scale under xdist, with prefetching workers writing concurrently: every call
    ends up as exactly one complete recording, and no item errors."""
    pytest.importorskip("xdist")
    count = SCALE_CALLS
    write_samples(pytester, "eval-samples.json", many_samples(count))
    args = ("--omk-executor", "echo", "--omk-recordings", "rec", "-p", "no:cacheprovider", "-q", "-n", "2")
    result = omk_run(*args, "--omk-record-mode", "new_episodes", "--omk-concurrency", "32", subprocess=True)
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed") == count and not {"failed", "errors"} & set(outcomes), result.stdout.lines[
        -15:
    ]
    assert f"model calls: {count} live, 0 replayed" in result.stdout.str()
    audit = audit_recordings(pytester.path / "rec")
    assert audit.problems == [] and audit.temps == []
    assert audit.labels("execute") == [f"s{i:05d}" for i in range(count)]


def test_a_recording_made_under_one_rootdir_replays_under_another(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    project = pytester.path / "project"
    write_samples(
        pytester,
        "project/eval-samples.json",
        sample_set(sample("s1", assertions=[{"type": "contains", "value": "hello"}])),
    )
    recordings = pytester.path / "elsewhere" / "rec"  # outside the project, given as an absolute path
    (project / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    # The = form: written with a space, an existing path is taken for a test path by pytest's
    # first reading of the command line, which chooses the ini file (a usage error says so).
    args = ("--omk-executor", "echo", f"--omk-recordings={recordings}", "-p", "no:cacheprovider", "-rA")
    recorded = omk_run(*args, "--omk-record-mode", "new_episodes", "--rootdir", str(project), str(project))
    recorded.assert_outcomes(passed=1)
    # The same files and recordings, but pytest's rootdir one level up.
    replayed = omk_run(*args, "--omk-record-mode", "none", "--rootdir", str(pytester.path), str(project))
    replayed.assert_outcomes(passed=1)
    assert "model calls: 0 live, 1 replayed" in replayed.stdout.str()


@pytest.mark.multiprocess
def test_checks_share_the_items_capture_instead_of_opening_one_each(
    pytester: pytest.Pytester, omk_run: OmkRun
) -> None:
    """Under --capture=fd pytest's subtests would open a capture (two temporary files) per check;
    the plugin's checks print nothing, so they share their item's capture: the count of captures
    opened does not grow with the number of checks."""
    pytester.makeconftest(
        """
        import os
        from _pytest import capture

        opened = []
        original = capture.FDCapture.__init__

        def counting(self, *args, **kwargs):
            opened.append(1)
            original(self, *args, **kwargs)

        capture.FDCapture.__init__ = counting

        def pytest_unconfigure(config):
            with open(os.path.join(str(config.rootpath), "captures.txt"), "w") as f:
                f.write(str(len(opened)))
        """
    )
    counts = []
    for checks in (1, 12):
        assertions = [{"type": "contains", "value": "q"} for _ in range(checks)]
        write_sample_set(pytester, *(sample(f"s{i}", f"q{i}", assertions=assertions) for i in range(3)))
        result = omk_run("--omk-executor", "echo", "--capture=fd", "-p", "no:cacheprovider", subprocess=True)
        result.assert_outcomes(passed=3)
        counts.append(int((pytester.path / "captures.txt").read_text()))
    assert counts[0] == counts[1], counts
