"""Gather sample records from pytest's reports (on the controller under xdist) and publish them.

Records arrive attached to each item's teardown report, so this works the same with and without
xdist: no temporary files, no shared memory, only pytest's own report channel.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_omk._util.visible import visible
from pytest_omk.compare.analysis import analyze
from pytest_omk.compare.baseline import load_baseline, regression_message
from pytest_omk.errors import ConfigError
from pytest_omk.plugin.answerer import answerer_key
from pytest_omk.plugin.compat import junit_xml, terminal_width
from pytest_omk.plugin.gate import GateCheck
from pytest_omk.plugin.gc_policy import collections_deferred, freeze_survivors
from pytest_omk.plugin.nodes import shown_key
from pytest_omk.plugin.recordings import pruned_line, run_callers
from pytest_omk.plugin.run_info import outcome_of
from pytest_omk.plugin.safety import ShownLines
from pytest_omk.plugin.wiring import recordings_dir
from pytest_omk.recordings.scrub import secrets_from_env
from pytest_omk.report.answer_diff import terminal_lines as answer_changes
from pytest_omk.report.comparisons import comparison_lines
from pytest_omk.report.kept import KeptRecord
from pytest_omk.report.outputs import ReportTargets, Written, write_reports
from pytest_omk.report.terminal import render_summary, summarize

if TYPE_CHECKING:
    from pytest_omk.config.settings import Settings
    from pytest_omk.plugin.summary_parts import SummaryParts

record_collector_key = pytest.StashKey["RecordCollector"]()
_NONE: tuple[()] = ()
"""The one empty sequence the kept reports of samples share (see ``_share_report_parts``)."""


class RecordCollector:
    """The controller's plugin for sample records: gathers them from reports, publishes them.

    Registered once per run, on the controller only (xdist workers send their records with their
    reports), as ``config.stash[record_collector_key]``.
    """

    def __init__(self, config: pytest.Config, settings: Settings, parts: SummaryParts) -> None:
        self.config = config
        self.settings = settings
        self.parts = parts
        self.totals: dict[str, Any] | None = None
        self.records: dict[str, KeptRecord] = {}
        """Each sample's record, packed, with its summary view; keyed by node id, in report order."""
        self.outcomes: dict[str, str] = {}
        self.baseline: dict[str, Any] | None = None
        self.analysis: dict[str, Any] | None = None
        """The comparison sections, computed once at the end of the run (controller only)."""
        self.regression: str | None = None
        """The regression gate's message when ``--omk-fail-on-regression`` tripped."""
        self.written: list[Written] = []
        self.annotations: list[str] = []
        """GitHub workflow commands (``::error file=…``) printed at the end of the summary."""
        """One line per HTML/Markdown report written (or not writable), shown after the scores."""
        self.pruned: str | None = None
        """What ``rewrite`` removed, shown after the scores."""
        self.extra_secrets: tuple[str, ...] = ()
        """Secrets beyond the environment's (MCP tokens), scrubbed from the reports too."""
        self._keywords: dict[str, dict[str, Any]] = {}
        self._rows: list[dict[str, Any]] | None = None
        self._resume_gc: Callable[[], None] = lambda: None
        self.targets = ReportTargets.from_options(
            settings.report,
            settings.html,
            settings.markdown,
            os.environ,
            self._path,
            code_quality=settings.code_quality,
            annotations=settings.annotations,
        )
        """The report files this run writes; records are kept whole only when there is one."""
        if settings.baseline:
            # Read now, so an unusable baseline is a usage error before any model is called.
            try:
                self.baseline = load_baseline(self._path(settings.baseline))
            except ConfigError as exc:
                raise pytest.UsageError(f"omk: {exc}") from None
            if settings.fail_on_regression is not None:
                config.pluginmanager.register(GateCheck(self.baseline, settings.baseline), "omk-gate")

    def _path(self, value: str) -> Path:
        """A path option: absolute when it came from the ini file, else relative to the invocation dir."""
        return Path(self.config.invocation_params.dir) / value

    def analyze(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        """The comparison sections (variants, comparisons, baseline, coverage), computed once."""
        if self.analysis is None:
            self.analysis = analyze(
                rows,
                variants=self.settings.variants,
                rootdir=self.settings.rootdir,
                baseline=self.baseline,
                baseline_path=self.settings.baseline or "",
                threshold=self.settings.fail_on_regression,
            )
            self.regression = regression_message(self.analysis["baseline"] or {})
        return self.analysis

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Track outcomes and pick up records (a no-op for non-omk items)."""
        self._share_report_parts(report)
        if isinstance(report, pytest.SubtestReport):
            return
        record = getattr(report, "omk_record", None)
        if record is not None:
            self.records[report.nodeid] = KeptRecord.of(record, whole=self.targets.wanted)
            # Last of the report's readers (trylast): pytest keeps every report to the end of the
            # session, and with it the record in its JSON-value form, four times the kept one.
            del report.omk_record  # set by OmkSession on teardown
        outcome = outcome_of(report)
        if outcome is not None and self.outcomes.get(report.nodeid) != "error":
            self.outcomes[report.nodeid] = outcome

    def _share_report_parts(self, report: pytest.TestReport) -> None:
        # pytest gives every report its own copy of the item's keywords (markers included) and
        # the terminal reporter keeps every report to the end: with one report per check that
        # was a tenth of a large replay's memory. The item's reports carry equal dicts; they now
        # share the first one.
        shared = self._keywords.setdefault(report.nodeid, report.keywords)  # type: ignore[arg-type]
        if shared is not report.keywords and shared == report.keywords:
            report.keywords = shared
        if "omk" in report.keywords:
            # Likewise each report's own empty ``sections`` and ``user_properties`` lists (two of
            # them for each of a sample's six or so reports): every reader has read them by now
            # (this hook is the last), and pytest only iterates them later (-rP, -rA).
            if not report.sections:
                report.sections = _NONE  # type: ignore[assignment]
            if not report.user_properties:
                report.user_properties = _NONE  # type: ignore[assignment]

    def ordered(self) -> list[dict[str, Any]]:
        """The records' summary views with their outcome, in collection order (built once the
        session has finished: the totals, the terminal section and the comparisons share them)."""
        if self._rows is not None:
            return self._rows
        rows = []
        for nodeid, kept in self.records.items():
            kept.view["outcome"] = self.outcomes.get(
                nodeid, "unknown"
            )  # in place: the views are the run's own
            rows.append(kept.view)
        rows.sort(key=lambda row: (row.get("order", 0), row["nodeid"]))
        return rows

    def full_rows(self) -> list[dict[str, Any]]:
        """The whole records with their outcome, in the order of :meth:`ordered`: what the report
        writers render."""
        return [{**self.records[row["nodeid"]].record(), "outcome": row["outcome"]} for row in self.ordered()]

    def add_carried(self, records: list[dict[str, Any]]) -> None:
        """Records of samples carried from the baseline (``--omk-changed``): reported, not run."""
        for record in records:
            nodeid = str(record["nodeid"])
            if nodeid not in self.records:
                self.records[nodeid] = KeptRecord.of(record, whole=self.targets.wanted)
                self.outcomes[nodeid] = str(record.get("outcome") or "unknown")

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """Print the ``omk scores`` section."""
        rows = self.ordered()
        if not rows:
            return
        # Foreign text (sample ids, servers' reasons) goes through the run's scrubber and escaper;
        # under CI no line of it can act as a workflow command (docs/security.md, "CI outputs").
        out = ShownLines(terminalreporter, self.config.stash.get(shown_key, visible))
        out.write_sep("=", "omk scores")
        verbosity = terminalreporter.config.get_verbosity()
        width = terminal_width(terminalreporter)
        for line in render_summary(
            rows, verbose=verbosity >= 0, width=width, wide=verbosity >= 1, totals=self.totals
        ):
            out.write_line(line)
        self.parts.write(out, rows, self.totals or {}, verbose=verbosity >= 1)
        analysis = self.analyze(rows)
        for line in comparison_lines(analysis, message=self.regression, coverage=verbosity >= 1):
            out.write_line(line, red=line == self.regression)
        for written in self.written:
            out.write_line(written.line, red=written.failed)
        for line in answer_changes(rows):
            out.write_line(line)
        if self.pruned:
            out.write_line(self.pruned)
        # Workflow commands last, each on a line of its own (GitHub reads them from the log).
        for command in self.annotations:
            terminalreporter.write_line(command)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self._resume_gc = collections_deferred()  # see pytest_omk.plugin.gc_policy
        self.add_carried(self.parts.carried)  # what the xdist workers carried
        rows = self._rows = self.ordered()
        if self.settings.record_mode == "rewrite":
            self._prune_unused(rows)
        if not rows:
            self._write_empty(session)
            return
        totals = self.totals = summarize(rows)
        totals.update(self.parts.totals(rows))
        self._junit_suite_properties(totals)
        analysis = self.analyze(rows)
        if self.regression and session.exitstatus == pytest.ExitCode.OK:
            # The gate: the tests themselves passed, but the run regressed against the baseline.
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        session.exitstatus = self.parts.exit_status(rows, totals, session.exitstatus)
        if self.targets.wanted:
            secrets = {*secrets_from_env(os.environ), *self.extra_secrets}
            full = self.full_rows()
            document = self._document(session, full, totals, analysis)
            self.written = write_reports(document, self.targets, secrets)
            self._ci_outputs(full, secrets)

    def _ci_outputs(self, rows: list[dict[str, Any]], secrets: set[str]) -> None:
        """GitHub annotations (printed with the summary) and GitLab's code-quality file."""
        if not (self.targets.annotations or self.targets.code_quality):
            return
        from pytest_omk.recordings.scrub import Scrubber
        from pytest_omk.report.annotations import ci_outputs, repository_path

        self.annotations, written = ci_outputs(
            rows,
            strict=self.settings.strict,
            github=self.targets.annotations,
            code_quality_path=self.targets.code_quality,
            scrub=Scrubber(secrets).text,
            repo_path=repository_path(self.settings.rootdir, os.environ.get("GITHUB_WORKSPACE")),
        )
        self.written += written

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self) -> None:
        self._resume_gc()
        # What a large run keeps is frozen once pytest has collected at unconfigure (see
        # pytest_omk.plugin.gc_policy). Under xdist the controller collects no item, so the count of
        # sample items that decides it elsewhere is zero here: the records it kept decide.
        freeze_survivors(len(self.records))

    def _document(
        self, session: pytest.Session, rows: list[dict[str, Any]], totals: dict[str, Any], analysis: Any
    ) -> dict[str, Any]:
        """The JSON report's document: the records and summary, then the run's own section."""
        # Imported when a report is written: the report models cost every run's start-up.
        from pytest_omk.report.json_report import build_report

        run_info = self.config.pluginmanager.get_plugin("omk-run-info")
        run = run_info.section(session) if run_info is not None else {}
        answerer = self.config.stash.get(answerer_key, None)
        # The id that answered is in the records (under xdist the controller builds no executor).
        answered = (
            answerer.report(next((r["executor"] for r in rows if r.get("executor")), None))
            if answerer
            else None
        )
        from pytest_omk.plugin.gold import judge_sections  # agreement, consistency, length probe

        judge = judge_sections(self.config)
        return {**build_report(rows, totals, self.settings, analysis, answered), **run, **judge}

    def _write_empty(self, session: pytest.Session) -> None:
        """No sample ran (nothing collected, a collection error ...): the JSON report is still written."""
        if not self.settings.report:
            return
        targets = ReportTargets(json=self._path(self.settings.report))
        document = self._document(session, [], summarize([]), None)
        self.written = write_reports(document, targets, {*secrets_from_env(os.environ), *self.extra_secrets})

    def _prune_unused(self, rows: list[dict[str, Any]]) -> None:
        """``rewrite``: delete the recordings of the samples that ran which this run did not use,
        and say which (the last lines of the scores section)."""
        directory = recordings_dir(self.config, self.settings)
        plugin = self.config.pluginmanager.get_plugin("omk-recordings")
        session = self.config.pluginmanager.get_plugin("omk-session")
        if directory is None or plugin is None or session is None:
            return
        callers = run_callers(session.calls.executor, session.calls.judge_spec, self.settings)
        removed = plugin.prune(directory, rows, self.settings.rootdir, callers)
        self.pruned = pruned_line(removed, directory)

    def _junit_suite_properties(self, totals: dict[str, Any]) -> None:
        xml = junit_xml(self.config)
        if xml is not None:
            from pytest_omk.report.records import suite_properties  # the record models: when needed

            for name, value in suite_properties(totals):
                xml.add_global_property(name, value)
