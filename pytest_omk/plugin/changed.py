"""``--omk-changed`` on the pytest side: each sample's input digest, and the samples carried from
the baseline.

Every selected sample's digest is computed before any call (only when a report will store it or
``--omk-changed`` compares it). A sample whose digest equals the baseline record's, and whose
baseline outcome is a result (passed, failed, xfailed, xpassed), is *carried*: at the end of
collection its item is deselected (pytest says so: it does not run), and its record, the
baseline's marked ``carried`` with no model call this run, is reported with the run's own, so
the summary and the reports cover the whole set. Every other sample runs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_omk.config.settings import Settings
from pytest_omk.errors import OmkError
from pytest_omk.plugin.item_records import note
from pytest_omk.plugin.nodes import SampleItem

if TYPE_CHECKING:
    from pytest_omk.compare.changed import RunInputs
    from pytest_omk.execute.base import Executor
    from pytest_omk.run.compose import CallPath

_KEEP = ("nodeid", "file", "sample_id", "variant", "executor", "model", "order")
"""Keys of this run's record a carried record keeps (where the item is, not what it answered)."""


class CarryPlan:
    """Digests and carried records of one process's run (see the module docstring)."""

    def __init__(
        self, config: pytest.Config, settings: Settings, adopted: Mapping[int, SampleItem], calls: CallPath
    ) -> None:
        """``adopted``: the session's sample items by id; ``calls``: its call wiring (the executor)."""
        self.config = config
        self.settings = settings
        self._adopted = adopted
        self._calls = calls
        self.enabled = bool(settings.report or settings.changed)
        self.records: list[dict[str, Any]] = []
        """The carried samples' records (wire form, outcome set): the collector reports them."""
        self._inputs: RunInputs | None = None
        self._digests: dict[str, str] = {}

    def digest_all(self, items: Sequence[SampleItem], executor: Executor, judge_spec: str | None) -> None:
        """Digest the items not digested yet (before any call starts)."""
        if not self.enabled:
            return
        from pytest_omk.compare.changed import input_digest

        inputs = self._run_inputs(executor, judge_spec)
        for item in items:
            if item.nodeid not in self._digests:
                sample, system, base = item.loaded.sample, item.plan.system, item.bundle.base_dir
                self._digests[item.nodeid] = input_digest(sample, system=system, base_dir=base, run=inputs)

    def take(self, items: list[pytest.Item]) -> list[pytest.Item]:
        """The collected ``items`` the baseline stands in for, their records handed to the
        controller's record collector (an xdist worker sends them with its output at the end)."""
        adopted, calls = self._adopted, self._calls
        if not self.settings.changed:
            return []  # before anything else: a run without --omk-changed builds nothing here
        samples = [sample for item in items if (sample := adopted.get(id(item))) is not None]
        executor = calls.executor if samples else None
        if executor is None:
            return []
        order = {item.nodeid: index for index, item in enumerate(items)}
        carried: list[pytest.Item] = list(self.select(samples, executor, calls.judge_spec, order))
        if hasattr(self.config, "workerinput"):
            self.config.workeroutput["omk_carried"] = self.records  # type: ignore[attr-defined]
        else:
            collector = self._collector()
            if collector is not None:
                collector.add_carried(self.records)
        return carried

    def _collector(self) -> Any:
        """The controller's record collector (by its plugin name: it imports this module)."""
        return self.config.pluginmanager.get_plugin("omk-records")

    def _baseline_document(self) -> Mapping[str, Any] | None:
        """The ``--omk-baseline`` document: the controller's collector read it at configure."""
        collector = self._collector()
        if collector is not None:
            return collector.baseline  # type: ignore[no-any-return]
        if not self.settings.baseline:
            return None
        from pytest_omk.compare.baseline import load_baseline

        try:
            return load_baseline(Path(self.settings.baseline))
        except OmkError as exc:
            raise pytest.UsageError(f"omk: {exc}") from None

    def select(
        self,
        items: Sequence[SampleItem],
        executor: Executor,
        judge_spec: str | None,
        order: Mapping[str, int],
    ) -> list[SampleItem]:
        """The items the baseline stands in for (``--omk-changed``); their records go to :attr:`records`."""
        document = self._baseline_document() if self.settings.changed else None
        if not document:
            return []
        from pytest_omk.compare.changed import carried_records, carry
        from pytest_omk.plugin.known_failures import known_reason
        from pytest_omk.report.records import new_record

        baseline = carried_records(document)
        self.digest_all(items, executor, judge_spec)
        carried: list[SampleItem] = []
        for item in items:
            key = (item.shown_path, item.sample_id, item.plan.variant)
            record = carry(baseline.get(key), self._digests[item.nodeid])
            if record is None:
                continue
            wire = new_record(
                nodeid=item.nodeid,
                file=item.shown_path,
                sample=item.loaded.sample,
                variant=item.plan.variant,
                executor=executor.id,
                model=self.settings.model,
                order=order.get(item.nodeid, 0),
            )
            kept = {key: wire[key] for key in _KEEP}
            # Shallow: each baseline record is its own dict, and nothing changes its parts.
            wire.update(record)
            wire.update(kept)
            wire.update(
                carried=True, inputDigest=self._digests[item.nodeid], modelCalls={"live": 0, "replayed": 0}
            )
            if self.settings.known_failures == "xfail" and (known := known_reason(record)) is not None:
                # Failed in the baseline, nothing changed since: the known failure it was there.
                wire.update(outcome="xfailed", knownFailure=known)
            self.records.append(wire)
            carried.append(item)
        return carried

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        """Put a sample's input digest in its record (when one was computed)."""
        digest = self._digests.get(item.nodeid)
        if digest is not None and isinstance(item, SampleItem):
            note(item, {"inputDigest": digest})

    def _run_inputs(self, executor: Executor, judge_spec: str | None) -> RunInputs:
        if self._inputs is None:
            from pytest_omk import __version__
            from pytest_omk.compare.changed import RunInputs
            from pytest_omk.execute.calls import executor_endpoint
            from pytest_omk.judge.templates import template_ids
            from pytest_omk.plugin.app_code import app_code_digest

            s = self.settings
            options = {
                "repeat": s.repeat,
                "repeatAuto": s.repeat_auto,
                "minPassRate": s.min_pass_rate,
                "minComposite": s.min_composite,
                "rubricThreshold": s.rubric_threshold,
                "strict": s.strict,
                "judgeRepeat": s.judge_repeat,
                "judgeFailure": s.judge_failure,
                "agent": [s.agent_api, s.agent_max_turns],
            }
            self._inputs = RunInputs(
                plugin_version=__version__,
                executor=executor.id,
                model=s.model,
                endpoint=executor_endpoint(executor),
                judge=judge_spec,
                judge_model=s.judge_model if judge_spec else None,
                judge_templates=json.dumps(template_ids(), sort_keys=True) if judge_spec else None,
                options=options,
                app_digest=app_code_digest(self.config, s, executor),
            )
        return self._inputs
