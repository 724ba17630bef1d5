"""The live status line on a terminal of 80 columns keeps its counts, cost and ETA."""

from __future__ import annotations

from dataclasses import dataclass, field

from pytest_omk.execute.progress import Snapshot
from pytest_omk.plugin.status_line import StatusLine


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


@dataclass
class _LogReporter:
    """A reporter writing to a pipe (a CI log): the status is a line of its own."""

    _tw: _Writer = field(default_factory=_Writer)
    lines: list[str] = field(default_factory=list)

    def write_line(self, line: str) -> None:
        self.lines.append(line)


def test_status_line_in_a_log_fits_its_width() -> None:
    snap = Snapshot(total=12000, done=3700, in_flight=16, retrying=12, failed=100, cost=12.34, elapsed=7540.0)
    for width, form in ((80, "omk 3700/12000 · 16 live"), (200, "omk: 3700/12000 samples · 16 in flight")):
        reporter = _LogReporter(_Writer(fullwidth=width))
        StatusLine(reporter, _Source(snap), interval=5, tty=False).draw()
        assert len(reporter.lines) == 1 and reporter.lines[0].startswith(form), reporter.lines
        assert len(reporter.lines[0]) <= width and "$12" in reporter.lines[0] and "ETA" in reporter.lines[0]
