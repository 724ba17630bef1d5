"""The controller's summary parts in use: the budget (its own ledger and each xdist worker's), auto
repeats, carried samples and mutation; the terminal's lines and the exit rule they add."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pytest

from pytest_omk.config.settings import Settings
from pytest_omk.execute.budget import BudgetLimits
from pytest_omk.models.accounting import CallLog
from pytest_omk.plugin.not_graded import worker_log
from pytest_omk.report.mutation import mutation_lines
from pytest_omk.report.not_graded import not_graded_usage
from pytest_omk.report.summary_parts import extra_lines, extra_totals, unfinished


class SummaryParts:
    """The summary's optional parts on the controller (see the module docstring)."""

    def __init__(
        self,
        settings: Settings,
        refused: Callable[[], int],
        untaken: Callable[[], Iterable[CallLog]] = tuple,
    ) -> None:
        """``refused``: the live calls this process's budget refused (its spend is in the records);
        ``untaken``: the call logs of samples started and never run (no record carries them)."""
        self.settings = settings
        self._refused = refused
        self._untaken = untaken
        self._worker_refused = 0
        self._worker_untaken: list[CallLog] = []
        self.carried: list[dict[str, Any]] = []
        """Records of samples the workers carried (``--omk-changed``), for the record collector."""

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """xdist: a worker finished; keep what its live calls spent and the samples it carried."""
        output = getattr(node, "workeroutput", {})
        if isinstance(refused := output.get("omk_refused"), int):
            self._worker_refused += refused
        if isinstance(records := output.get("omk_carried"), list):
            self.carried.extend(records)
        if (log := worker_log(output)) is not None:
            self._worker_untaken.append(log)

    def totals(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        """The summary's ``budget``, ``repeats``, ``carried`` and ``mutation`` parts (those in use)."""
        limits = BudgetLimits(self.settings.budget_usd, self.settings.budget_tokens)
        refused = self._refused() + self._worker_refused
        not_graded = not_graded_usage([*self._untaken(), *self._worker_untaken])
        return extra_totals(
            rows, limits=limits, refused=refused, mutate=self.settings.mutate, not_graded=not_graded
        )

    def exit_status(self, rows: list[dict[str, Any]], totals: dict[str, Any], status: int) -> int:
        """The run's exit status once these parts are counted."""
        if status == pytest.ExitCode.NO_TESTS_COLLECTED and totals.get("carried"):
            # Nothing changed since the baseline: every sample was carried, none left to run.
            status = pytest.ExitCode.OK
        if not status and unfinished(rows, totals, allow_incomplete=self.settings.allow_incomplete):
            # A budget cut the run short (an incomplete eval is not a pass), or a sample carried
            # from the baseline failed there and nothing that decides it changed since.
            status = pytest.ExitCode.TESTS_FAILED
        return status

    def write(
        self, reporter: Any, rows: list[dict[str, Any]], totals: dict[str, Any], *, verbose: bool
    ) -> None:
        """The parts' lines after the scores table, then the ``omk mutation`` section."""
        allow = self.settings.allow_incomplete
        for line, red in extra_lines(rows, totals, baseline=self.settings.baseline, allow_incomplete=allow):
            reporter.write_line(line, red=red)
        if totals.get("mutation"):
            reporter.write_sep("=", "omk mutation")
            for line in mutation_lines(rows, totals["mutation"], verbose=verbose):
                reporter.write_line(line)
