"""The judge's consistency across its own replicates (``--omk-judge-repeat N`` with N ≥ 2).

Each rubric dimension's Krippendorff α over the samples, every sample's N replicate scores being
one unit's ratings (:func:`pytest_omk.compare.agreement.replicate_alpha`): 1 when the judge always
repeats itself, near 0 when its scores of one answer vary as much as its scores of different ones.
The figures reach the terminal (``omk judge consistency``) and the JSON report
(``judgeConsistency``); ``--omk-min-judge-consistency X`` names the dimensions whose α is below X
(or undefined) and fails the run. Computed from the records on the controller, so under xdist and
from recorded replicates alike.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_omk.compare.agreement import replicate_alpha
from pytest_omk.plugin.safety import ShownLines

judge_consistency_key = pytest.StashKey["JudgeConsistency"]()


class JudgeConsistency:
    """Gathers every dimension's replicate scores from the records, reports and gates their α."""

    def __init__(self, minimum: float | None) -> None:
        self.minimum = minimum
        self.units: dict[str, dict[tuple[Any, str], list[float]]] = {}
        """Per dimension, per (variant, sample id): the valid replicate scores."""

    @pytest.hookimpl(tryfirst=True)  # before the record collector takes the record off the report
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Keep the replicate scores of each judged dimension of a finished sample."""
        record = getattr(report, "omk_record", None)
        if record is None or isinstance(report, pytest.SubtestReport):
            return
        for name, entry in (record.get("rubric") or {}).items():
            scores = [s for s in entry.get("judgeReadings") or [] if isinstance(s, int | float)]
            key = (record.get("variant"), str(record.get("sample_id")))
            self.units.setdefault(str(name), {})[key] = scores

    def figures(self) -> dict[str, dict[str, Any]]:
        """Per dimension: α, the units with two or more replicates, and whether it is below the minimum."""
        found = {}
        for name, units in sorted(self.units.items()):
            alpha = replicate_alpha(list(units.values()))
            found[name] = {
                "alpha": alpha,
                "units": sum(1 for u in units.values() if len(u) >= 2),
                "below": self.minimum is not None and (alpha is None or alpha < self.minimum),
            }
        return found

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Fail the run when a dimension is below ``--omk-min-judge-consistency``."""
        if any(f["below"] for f in self.figures().values()) and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """The ``omk judge consistency`` section."""
        figures = self.figures()
        if not figures:
            return
        out = ShownLines(terminalreporter)  # each line wrapped to the terminal's width
        out.write_sep("=", "omk judge consistency")
        for name, f in figures.items():
            alpha = "undefined" if f["alpha"] is None else f"{f['alpha']:.3f}"
            out.write_line(f"{name}: alpha {alpha} across replicates ({f['units']} samples)")
        below = [name for name, f in figures.items() if f["below"]]
        if below:
            out.write_line(
                f"FAILED: judge consistency below --omk-min-judge-consistency {self.minimum:g}: {', '.join(below)}",
                red=True,
            )


def consistency_section(config: pytest.Config) -> dict[str, Any]:
    """The JSON report's ``judgeConsistency`` object, or nothing without ``--omk-judge-repeat`` ≥ 2."""
    plugin = config.stash.get(judge_consistency_key, None)
    figures = plugin.figures() if plugin is not None else {}
    return {"judgeConsistency": figures} if figures else {}
