"""Status files of xdist workers: written atomically, read whole, added up by the controller."""

from __future__ import annotations

from pathlib import Path

from pytest_omk.execute.progress import CallProgress
from pytest_omk.models.accounting import CallRecord
from pytest_omk.plugin.xdist.status_files import CombinedProgress, StatusWriter, read_statuses


def busy(progress: CallProgress, samples: int, cost: float) -> None:
    for _ in range(samples):
        progress.sample_started()
        progress.attempt_started()
    progress.retrying(1)
    progress.ledger.note(CallRecord("model", cost_usd=cost))


def test_the_controller_adds_up_every_workers_file(tmp_path: Path) -> None:
    first, second = CallProgress(), CallProgress()
    busy(first, 2, 0.001)
    busy(second, 3, 0.002)
    second.attempt_finished()
    second.sample_finished(failed=True)
    for name, progress in (("gw0", first), ("gw1", second)):
        writer = StatusWriter(progress, tmp_path / f"{name}.json", tick=3600)
        writer.start()
        writer.stop()  # stop writes the final counts, whatever the tick
    clock = iter([10.0, 12.5])
    snapshot = CombinedProgress(tmp_path, clock=lambda: next(clock)).snapshot()
    assert (snapshot.total, snapshot.done, snapshot.in_flight, snapshot.retrying, snapshot.failed) == (
        5,
        1,
        4,
        2,
        1,
    )
    assert round(snapshot.cost, 6) == 0.003
    assert not list(tmp_path.glob(".*"))  # no temporary file left behind


def test_unreadable_or_missing_files_count_as_absent(tmp_path: Path) -> None:
    (tmp_path / "gw0.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "gw1.json").write_text('{"total": 2, "done": 1}', encoding="utf-8")
    assert read_statuses(tmp_path) == [{"total": 2.0, "done": 1.0}]
    assert read_statuses(tmp_path / "gone") == []
    assert CombinedProgress(tmp_path / "gone").snapshot().total == 0


def test_a_writer_whose_directory_is_gone_stays_quiet(tmp_path: Path) -> None:
    progress = CallProgress()
    busy(progress, 1, 0.0)
    writer = StatusWriter(progress, tmp_path / "gone" / "gw0.json", tick=3600)
    writer.start()
    writer.stop()  # no exception: the controller removes the directory at the end of the run
