"""Judge calibration (``--omk-gold``): one item per gold dataset (and variant), run after the samples.

The item ``<DIR>::judge-agreement`` (``judge-agreement[VARIANT]`` under variants) compares each gold
label with the judge-layer score of the sample of that id, as the samples' records carry it (so a
replayed run computes it from the recorded judge readings, with no call), and fails when a gate
(``--omk-min-agreement``, ``--omk-min-tpr``, ``--omk-min-tnr``) is not met. The figures reach the
terminal (the item's failure text, and an ``omk judge agreement`` section), JUnit (the item's
testcase and properties), the JSON, HTML and Markdown reports (the collector asks
:func:`calibration_section`).

Under pytest-xdist the workers hold no other worker's records, so no item is collected there: the
controller computes the same figures when the run ends, prints them and fails the run on a gate.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_omk.compare.calibration import Gates, JudgeReading, calibrate, export_rows
from pytest_omk.config.gold import GoldSettings
from pytest_omk.errors import ConfigError
from pytest_omk.loading.gold import load_gold
from pytest_omk.models.calibration import Calibration
from pytest_omk.models.gold import GoldDataset
from pytest_omk.plugin.nodes import shown_key
from pytest_omk.plugin.safety import ShownLines
from pytest_omk.report.calibration import csv_text, failure_text, figure_lines

gold_plugin_key = pytest.StashKey["GoldPlugin"]()
ITEM_NAME = "judge-agreement"


class CalibrationFailed(Exception):
    """A calibration item's gate failed; the text has the gates, figures and worst disagreements."""


class GoldDirectory(pytest.Directory):
    """The gold dataset's directory as a node, so that its item's id is ``<DIR>::judge-agreement``."""

    def collect(self) -> list[Any]:
        """Nothing: the directory's item is made by :class:`GoldPlugin`."""
        return []  # its items are made by GoldPlugin, not found in the directory


class CalibrationItem(pytest.Item):
    """One gold dataset (and variant) against the judge's scores."""

    def __init__(self, *, dataset: GoldDataset, variant: str | None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.dataset = dataset
        self.variant = variant
        self.add_marker("omk_calibration")

    def runtest(self) -> None:
        """Compute the figures; fail with them when a gate is not met."""
        plugin = self.config.stash[gold_plugin_key]
        found = plugin.calibrate(self.dataset, self.variant)
        for name, value in (
            ("omk_alpha", found.alpha),
            ("omk_alpha_low", found.alphaLow),
            ("omk_pairs", found.pairs),
        ):
            self.user_properties.append(
                (name, "" if value is None else f"{value:.4f}" if name != "omk_pairs" else str(value))
            )
        if found.failures:
            raise CalibrationFailed(failure_text(found, plugin.shown))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:  # type: ignore[override]
        """The failed gates and the figures, without a traceback."""
        if isinstance(excinfo.value, CalibrationFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """The dataset's directory and the item's name."""
        return (
            self.path,
            None,
            f"{ITEM_NAME}: {self.config.stash[gold_plugin_key].shown(self.dataset.directory)}",
        )


class GoldPlugin:
    """Loads the datasets (a bad one is a usage error before any call), gathers the judge scores,
    adds the calibration items and reports their figures."""

    def __init__(self, config: pytest.Config, settings: GoldSettings, threshold: float, judge_ids: list[str],
                 variants: tuple[str, ...]) -> None:  # fmt: skip
        self.config, self.settings, self.threshold = config, settings, threshold
        self.judge_ids, self.variants = judge_ids, variants or (None,)
        self.readings: dict[tuple[str | None, str], JudgeReading] = {}
        self.results: dict[tuple[str, str | None], Calibration] = {}
        self.datasets: list[GoldDataset] = []
        self.paths: dict[str, Path] = {}
        """Each dataset's directory by its display name (relative to the rootdir when below it)."""
        for directory in settings.datasets:
            try:
                loaded = load_gold(Path(directory))
            except ConfigError as exc:
                raise pytest.UsageError(f"omk: --omk-gold: {exc}") from None
            shown = _display(Path(directory), config.rootpath)
            self.datasets.append(loaded.model_copy(update={"directory": shown}))
            self.paths[shown] = Path(directory)
        self.shown = config.stash.get(shown_key, str)

    @pytest.hookimpl(wrapper=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, items: list[pytest.Item]) -> Any:
        # Added before every other implementation (so -k and -m select these items too), moved
        # last after all of them (after any reordering, pytest-randomly's): the samples run first.
        if not hasattr(self.config, "workerinput"):  # under xdist the controller computes them
            for dataset in self.datasets:
                parent = GoldDirectory.from_parent(session, path=self.paths[dataset.directory])
                for variant in self.variants:
                    name = ITEM_NAME if variant is None else f"{ITEM_NAME}[{variant}]"
                    items.append(
                        CalibrationItem.from_parent(parent, name=name, dataset=dataset, variant=variant)
                    )
        result = yield
        items.sort(key=lambda item: isinstance(item, CalibrationItem))
        return result

    @pytest.hookimpl(tryfirst=True)  # before the record collector takes the record off the report
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = getattr(report, "omk_record", None)
        if record is None or isinstance(report, pytest.SubtestReport):
            return
        score = (record.get("scores") or {}).get("judge")
        reasons = "; ".join(
            f"{name}: {entry.get('reason') or ''}" for name, entry in (record.get("rubric") or {}).items()
        )
        key = (record.get("variant"), str(record.get("sample_id")))
        self.readings.setdefault(key, JudgeReading(score=score if isinstance(score, int | float) else None,
                                                   reason=reasons))  # fmt: skip

    def calibrate(self, dataset: GoldDataset, variant: str | None) -> Calibration:
        """The dataset's figures for ``variant`` from the judge scores gathered so far (kept)."""
        readings = {sid: r for (v, sid), r in self.readings.items() if v == variant}
        found = calibrate(dataset, readings, threshold=self.threshold, judge_ids=self.judge_ids, variant=variant,
                          gates=Gates(self.settings.min_agreement, self.settings.min_tpr, self.settings.min_tnr))  # fmt: skip
        self.results[(dataset.directory, variant)] = found
        return found

    @pytest.hookimpl(tryfirst=True)  # before the record collector writes the reports
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Under xdist, compute (and gate) on the controller; write the export file."""
        if hasattr(self.config, "workerinput"):
            return
        for dataset in self.datasets:  # under xdist (or when deselected) no item computed them
            for variant in self.variants:
                if (dataset.directory, variant) not in self.results and self._xdist():
                    found = self.calibrate(dataset, variant)
                    if found.failures and session.exitstatus == pytest.ExitCode.OK:
                        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if self.settings.export:
            self._export()

    def _xdist(self) -> bool:
        return bool(
            getattr(self.config.option, "numprocesses", None)
        ) and self.config.pluginmanager.hasplugin("dsession")

    def _export(self) -> None:
        rows = []
        for dataset in self.datasets:
            for variant in self.variants:
                readings = {sid: r for (v, sid), r in self.readings.items() if v == variant}
                rows += export_rows(dataset, readings, self.threshold, variant)
        Path(self.settings.export or "").write_text(csv_text(rows), encoding="utf-8")

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """The ``omk judge agreement`` section: each calibration's verdict and figures."""
        if not self.results:
            return
        out = ShownLines(terminalreporter)
        out.write_sep("=", "omk judge agreement")
        for found in self.results.values():
            out.write_line(f"{self.shown(found.dataset)}: {'FAILED' if found.failures else 'passed'}",
                           red=bool(found.failures))  # fmt: skip
            for line in [*(f"  FAILED gate: {f}" for f in found.failures), *figure_lines(found, self.shown)]:
                out.write_line(line)


def _display(directory: Path, rootdir: Path) -> str:
    try:
        return directory.relative_to(rootdir).as_posix()
    except ValueError:
        return str(directory)


def calibration_section(config: pytest.Config) -> dict[str, Any]:
    """The JSON report's ``calibration`` list (every calibration computed this run), or nothing."""
    plugin = config.stash.get(gold_plugin_key, None)
    if plugin is None or not plugin.results:
        return {}
    return {"calibration": [c.model_dump(mode="json") for c in plugin.results.values()]}


def judge_sections(config: pytest.Config) -> dict[str, Any]:
    """The JSON report's judge checks: ``calibration`` (``--omk-gold``), ``judgeConsistency``
    (``--omk-judge-repeat`` >= 2) and ``judgeProbe`` (``--omk-judge-probe``), each only when it applies."""
    from pytest_omk.plugin.judge_consistency import consistency_section
    from pytest_omk.plugin.judge_probe import probe_section

    return {**calibration_section(config), **consistency_section(config), **probe_section(config)}
