"""80 columns: the scores table keeps every sample id whole (the A/B example's ids included), and
the live status line keeps its counts, cost and ETA."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field

import pytest

from pytest_omk.progress import Snapshot
from pytest_omk.status_line import StatusLine
from tests.integration.conftest import REPO, OmkRun, load_report


def scores_table(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if "omk scores" in line) + 1
    end = lines.index("", start)
    return lines[start:end]


def test_ab_compare_table_keeps_every_sample_id_at_80_columns(
    pytester: pytest.Pytester, omk_run: OmkRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(REPO / "examples" / "ab-compare", pytester.path, dirs_exist_ok=True)
    monkeypatch.setenv("COLUMNS", "80")
    result = omk_run("--omk-record-mode=none", "-p", "no:cacheprovider", "--omk-report=r.json")
    table = scores_table(result.stdout.str())
    assert max(map(len, table)) <= 80, table
    assert not any("…" in line for line in table), table
    ids = [f"{s['sample_id']}[{s['variant']}]" for s in load_report(pytester.path / "r.json")["samples"]]
    assert len(ids) == 16
    shown = [line.split()[0] for line in table[1:] if line.strip()]
    for sample_id in ids:
        assert sample_id in shown, (sample_id, table)


@dataclass
class _Writer:
    fullwidth: int = 80
    _current_line: str = "eval-samples.yaml "
    written: list[str] = field(default_factory=list)

    def write(self, text: str, flush: bool = False) -> None:
        self.written.append(text)


@dataclass
class _Reporter:
    _tw: _Writer = field(default_factory=_Writer)


@dataclass
class _Source:
    snap: Snapshot

    def snapshot(self) -> Snapshot:
        return self.snap


def test_status_line_at_80_columns_keeps_counts_cost_and_eta() -> None:
    snap = Snapshot(total=120, done=37, in_flight=8, retrying=2, failed=1, cost=0.0213, elapsed=754.0)
    reporter = _Reporter()
    line = StatusLine(reporter, _Source(snap), interval=5, tty=True)
    line.draw()
    shown = reporter._tw.written[-1].lstrip("\b ")
    assert len(reporter._tw._current_line) + 1 + len(shown) <= 80
    for part in ("37/120", "8", "2", "1", "$0.021", "ETA 28m11s"):
        assert part in shown, shown
