"""What a sample item's record holds from its setup to its last report, and what its reports carry.

Every write of an item's record goes through this module (:func:`open_record`, :func:`note`,
:func:`note_calls`, :func:`note_lines`): a feature that adds a key to the record adds a call here,
and a reader finds every writer by searching for these names.

The record (a :class:`~pytest_omk.models.report.SampleRecord` in its JSON-safe wire form) is made
when the item's setup starts, so that a skip or an error is reported with it too; it then takes the
calls its sample made (every one, an errored sample's too) and rides to the controller on the
item's teardown report, which :class:`ItemReports` also scrubs of secrets and, when a JUnit file is
written, gives the sample's properties.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping
from typing import TYPE_CHECKING, Any

import pytest

from pytest_omk.plugin.nodes import SampleItem
from pytest_omk.plugin.safety import scrub_report
from pytest_omk.report.calls_record import record_calls

if TYPE_CHECKING:
    from pytest_omk.execute.base import Executor
    from pytest_omk.models.accounting import CallLog
    from pytest_omk.recordings.scrub import Scrubber
    from pytest_omk.run.compose import CallPath


def open_record(item: SampleItem, *, executor: str | None, model: str | None, order: int) -> None:
    """Give ``item`` its record before anything ran (the record models are imported on first use)."""
    from pytest_omk.report.records import new_record  # lazy: the record models (pydantic)

    item.omk_record = new_record(
        nodeid=item.nodeid,
        file=item.shown_path,
        sample=item.loaded.sample,
        variant=item.plan.variant,
        executor=executor,
        model=model,
        order=order,
        line=None if (line := item.reportinfo()[1]) is None else line + 1,
    )


def note(item: SampleItem, fields: Mapping[str, Any]) -> None:
    """Set keys of ``item``'s record (JSON values; new keys are written in the order given)."""
    item.omk_record.update(fields)


def note_calls(item: SampleItem, log: CallLog | None) -> None:
    """Put every call made for the sample (by role) in its record, whatever its outcome."""
    record_calls(item.omk_record, log)


def note_lines(item: SampleItem, lines: list[int | None]) -> None:
    """Each check's ``line`` into the record's entries (assertions by index, then rubric)."""
    record = item.omk_record
    entries = [*(record.get("assertions") or []), *(record.get("rubric") or {}).values()]
    for entry, line in zip(entries, lines, strict=False):
        if line is not None:
            entry["line"] = line


def note_ignored_judge_recordings(item: SampleItem, calls: CallPath) -> None:
    """With no judge configured, say in the record when the recordings hold judge readings of the
    sample (a rubric or an LLM-scored assertion that nothing scored this run)."""
    if calls.judge_spec is not None:
        return
    sample = item.plan.sample  # read from the sample: the judge's module stays unimported
    asks = bool(sample.rubric) or any(assertion.is_llm for assertion in sample.assertions or [])
    if asks and calls.store.recorded_for("judge", sample.sample_id, item.plan.source):
        note(item, {"judgeRecordingsIgnored": True})


class IgnoredJudgeRecordings:
    """``omk-judge-recordings``: once an item has its runs, note judge readings nothing scored."""

    def __init__(self, calls: CallPath) -> None:
        self._calls = calls

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, None, None]:
        """After every setup step (the wait for the runs among them), when they all succeeded."""
        yield
        if isinstance(item, SampleItem) and "omk_runs" in item.__dict__:
            note_ignored_judge_recordings(item, self._calls)


class ItemReports:
    """The plugin object around every item's record and reports (one per process)."""

    def __init__(
        self,
        config: pytest.Config,
        scrubber: Callable[[], Scrubber],
        executor: Callable[[], Executor | None] = lambda: None,
        order: Callable[[str], int] = lambda nodeid: 0,
        model: str | None = None,
    ) -> None:
        self.config = config
        self._model = model
        self._scrubber = scrubber
        self._executor = executor
        self._order = order
        # JUnit properties cost memory per item: built only when a JUnit file is written.
        self._junit = bool(getattr(config.option, "xmlpath", None))

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        """The sample's record, before anything ran: a skip or an error is reported with it too."""
        if isinstance(item, SampleItem):
            executor = self._executor()
            shown = None if executor is None else executor.id
            open_record(item, executor=shown, model=self._model, order=self._order(item.nodeid))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, Any, Any]:
        """Scrub every report; hand the record over on the teardown report."""
        record = getattr(item, "omk_record", None)
        if call.when == "teardown" and record is not None and self._junit:
            from pytest_omk.plugin.junit import add_junit_properties  # lazy: the record models

            add_junit_properties(item, record)
        report = yield
        scrubber = self._scrubber()
        scrub_report(report, scrubber)
        # By its plugin name: the collector's module imports the carry plan, which writes records here.
        collector = self.config.pluginmanager.get_plugin("omk-records")
        if collector is not None:  # the JSON report hides the MCP tokens too
            collector.extra_secrets = scrubber.secrets
        if call.when == "teardown" and record is not None:
            report.omk_record = record
            # What the summary needs is in the record; the run's results (outputs, requests,
            # traces) would otherwise stay alive with the item until the end of the session.
            for name in ("omk_run", "omk_runs"):
                item.__dict__.pop(name, None)
        return report
