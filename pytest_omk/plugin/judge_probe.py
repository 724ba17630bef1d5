"""The length probe's verdict over the run (``--omk-judge-probe length``, ``--omk-max-judge-bias``).

Each judged sample's record carries, per rubric dimension, the score shift when neutral filler is
appended to the output (``judgeProbe``, :mod:`pytest_omk.judge.probe`). Per dimension the run
reports the mean shift and its 95 % percentile bootstrap interval (the variant comparison's
procedure, :func:`pytest_omk.compare.bootstrap.bootstrap_interval`); ``--omk-max-judge-bias X`` fails
the run when a dimension's whole interval lies beyond ±X (the judge reliably rewards, or punishes,
length). Read from the records on the controller, so replays and xdist runs get it too.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_omk.compare.bootstrap import bootstrap_interval
from pytest_omk.plugin.safety import ShownLines

judge_probe_key = pytest.StashKey["JudgeProbe"]()


class JudgeProbe:
    """Gathers every sample's shifts from the records; reports and gates each dimension's mean."""

    def __init__(self, maximum: float | None) -> None:
        self.maximum = maximum
        self.shifts: dict[str, list[float]] = {}

    @pytest.hookimpl(tryfirst=True)  # before the record collector takes the record off the report
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Keep a finished sample's shifts."""
        record = getattr(report, "omk_record", None)
        if record is None or isinstance(report, pytest.SubtestReport):
            return
        for name, shift in (record.get("judgeProbe") or {}).items():
            if isinstance(shift, int | float):
                self.shifts.setdefault(str(name), []).append(float(shift))

    def figures(self) -> dict[str, dict[str, Any]]:
        """Per dimension: the samples, the mean shift, its interval and whether it is beyond the maximum."""
        found = {}
        for name, shifts in sorted(self.shifts.items()):
            interval = bootstrap_interval(shifts)
            beyond = self.maximum is not None and (
                interval.low > self.maximum or interval.high < -self.maximum
            )
            found[name] = {
                "samples": len(shifts),
                "meanShift": sum(shifts) / len(shifts),
                "low": interval.low,
                "high": interval.high,
                "beyond": beyond,
            }
        return found

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Fail the run when a dimension's shift is beyond ``--omk-max-judge-bias``."""
        if any(f["beyond"] for f in self.figures().values()) and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """The ``omk judge length probe`` section."""
        figures = self.figures()
        if not figures:
            return
        out = ShownLines(terminalreporter)  # each line wrapped to the terminal's width
        out.write_sep("=", "omk judge length probe")
        for name, f in figures.items():
            out.write_line(
                f"{name}: mean shift {f['meanShift']:+.2f} with filler appended "
                f"(95% CI {f['low']:+.2f} to {f['high']:+.2f}, {f['samples']} samples)"
            )
        beyond = [name for name, f in figures.items() if f["beyond"]]
        if beyond:
            out.write_line(
                f"FAILED: judge length bias beyond --omk-max-judge-bias {self.maximum:g}: {', '.join(beyond)}",
                red=True,
            )


def probe_section(config: pytest.Config) -> dict[str, Any]:
    """The JSON report's ``judgeProbe`` object, or nothing without ``--omk-judge-probe``."""
    plugin = config.stash.get(judge_probe_key, None)
    figures = plugin.figures() if plugin is not None else {}
    return {"judgeProbe": figures} if figures else {}
