"""The plugin's collection phase: its hooks, and the checks of each sample file as it is collected.

The hooks: the collector paused, recordings not walked, shards cut, and, at the end of a large run
of samples, its survivors frozen (see :mod:`pytest_omk.plugin.gc_policy`). One plugin object per
run (``omk-collection``), made by ``OmkSession``, which reads the collection order it keeps for the
records.

The checks (:func:`check_sample_file`): the loader validates a file on its own; what depends on the
options is checked here, once per file as it is collected: the check caps (``--omk-max-checks``),
the portability lint (``--omk-lint``), and whether the executor can intercept the tool calls that
the samples' mocks declare.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_omk._util.visible import visible
from pytest_omk.config.settings import Settings
from pytest_omk.errors import ConfigError
from pytest_omk.execute.budget import BudgetLimits
from pytest_omk.plugin.gc_policy import collector_paused, freeze_survivors
from pytest_omk.plugin.safety import check_caps, sandbox_notice, scrub_report
from pytest_omk.plugin.shard_cut import ShardCut
from pytest_omk.recordings.modes import running_in_ci

NO_EXECUTOR = "no executor configured (set --omk-executor or omk_executor)"

if TYPE_CHECKING:
    from pytest_omk.execute.base import Executor
    from pytest_omk.loading import SampleBundle
    from pytest_omk.recordings.scrub import Scrubber


class CollectionHooks:
    """What collection does for the plugin; ``order`` is each collected item's index by node id.

    ``is_sample`` tells a sample item from another test (the session knows the items it adopted).
    """

    def __init__(
        self,
        config: pytest.Config,
        settings: Settings,
        is_sample: Callable[[pytest.Item], bool],
        scrubber: Callable[[], Scrubber],
        carry: Callable[[list[pytest.Item]], list[pytest.Item]] = lambda items: [],
    ) -> None:
        self._carry = carry
        self._scrubber = scrubber
        self.config = config
        self.settings = settings
        self._is_sample = is_sample
        self.has_executor: Callable[[], bool] = lambda: True
        """Whether the run has an executor (the session says; asked once samples are collected)."""
        self.order: dict[str, int] = {}
        self.samples = 0
        """How many sample items were collected (a large run freezes what it keeps at its end)."""
        self.digest: dict[str, Any] | None = None
        """``{"items", "digest"}`` of the selected items before a shard's cut (when a report is written)."""
        self.shard_cut = ShardCut(settings)
        """Where ``--omk-shard`` cuts (registered as its own plugin object, ``omk-shard-cut``)."""
        self._recordings_root = (
            (settings.rootdir / settings.recordings).resolve() if settings.recordings else None
        )

    @pytest.hookimpl(wrapper=True)
    def pytest_collection(self, session: pytest.Session) -> Generator[None, object, object]:
        with collector_paused():  # see pytest_omk.plugin.gc_policy
            return (yield)

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(self, collector: pytest.Collector) -> Generator[None, Any, Any]:
        report = yield
        if report.longrepr is not None:  # a collection error may quote a hostile file name
            scrub_report(report, self._scrubber())
        return report

    def pytest_ignore_collect(self, collection_path: Path, config: pytest.Config) -> bool | None:
        """Skip the recordings directory."""
        # A recordings directory inside the project holds one file per call (tens of thousands
        # in a large suite): walking it would slow collection for nothing, and a recorded
        # fixture named like a sample file must not become a test.
        if self._recordings_root is not None and collection_path == self._recordings_root:
            return True
        return None

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        # Before the shard is cut: every shard of one run collects the same items, and the JSON
        # report says which (``merge`` refuses shards of different collections).
        # In collection order, whatever a plugin (pytest-randomly) reordered: see plugin/shard_cut.py.
        stable = self.shard_cut.stable(config, items) if self.settings.shard is not None else items
        # Last, so that the shard is cut from what -k, -m and --lf left: blocks stay even.
        self.shard_cut.apply(config, items, stable)
        if self.settings.report:
            self.digest = collection_digest(stable, self._is_sample, Path(config.rootpath))
            if self.shard_cut.cut is not None:
                limits = BudgetLimits(self.settings.budget_usd, self.settings.budget_tokens)
                self.digest["shard"] = self.shard_cut.cut.as_dict(limits)
            output = getattr(config, "workeroutput", None)
            if isinstance(output, dict):
                output[DIGEST_KEY] = self.digest
        # After the shard's cut: each shard reports the carried samples of its own block.
        carried = self._carry(items)
        if carried:
            left = set(map(id, carried))
            config.hook.pytest_deselected(items=carried)
            items[:] = [item for item in items if id(item) not in left]

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Keep the collection order and count the samples."""
        # Records are ordered by collection order, which every xdist worker shares, so reports
        # come out in the same order with and without -n.
        # As collected, not as pytest-randomly shuffled: two runs' score tables line up.
        ordered = self.shard_cut.collection_order(session.items)
        self.order = {item.nodeid: index for index, item in enumerate(ordered)}
        # Not by the "omk" keyword: every node's name is a keyword too (a directory named omk).
        self.samples = sum(1 for item in session.items if self._is_sample(item))
        # Locally a sample without an executor is skipped (the summary says why); in CI a run of
        # nothing but skips would be green for nothing.
        ci = running_in_ci(os.environ)
        if self.samples and ci and not self.config.option.collectonly and not self.has_executor():
            raise pytest.UsageError(
                f"omk: {self.samples} sample{'' if self.samples == 1 else 's'} collected but "
                f"{NO_EXECUTOR}; with CI set that stops the run instead of skipping them"
            )
        sandbox_notice(self.config, session, self.settings.executor)

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        # After pytest's own collection at unconfigure, which has run the finalizers of the run's
        # garbage with its unraisable-exception hook in place.
        freeze_survivors(self.samples)


DIGEST_KEY = "omk_collection"
"""Where an xdist worker leaves the collection's digest for the controller's report."""


def collection_digest(
    items: list[pytest.Item], is_sample: Callable[[pytest.Item], bool], rootdir: Path
) -> dict[str, Any]:
    """The selected items' node ids and the bytes of their sample files, hashed: equal for every
    shard of one run, different for another selection or an edited sample file."""
    ordered, members = hashlib.sha256(), hashlib.sha256()
    files: set[Path] = set()
    for item in items:
        ordered.update(item.nodeid.encode("utf-8", "surrogatepass") + b"\n")
        if is_sample(item):
            files.add(item.path)
    # The same items in any order: merge tells "another order" from "another selection" by it.
    for nodeid in sorted(item.nodeid for item in items):
        members.update(nodeid.encode("utf-8", "surrogatepass") + b"\n")
    for path in sorted(files):
        try:
            content = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            content = "unreadable"
        line = f"{os.path.relpath(path, rootdir)}\0{content}\n".encode("utf-8", "surrogatepass")
        ordered.update(line)
        members.update(line)
    return {
        "items": len(items),
        "digest": f"sha256:{ordered.hexdigest()}",
        "members": f"sha256:{members.hexdigest()}",
    }


def check_sample_file(
    node: pytest.File, bundle: SampleBundle, settings: Settings, executor: Executor | None
) -> None:
    """Raise :class:`ConfigError` for what the run cannot do with this file; warn for lint findings."""
    check_caps(node.path.name, bundle, settings.max_checks)
    if settings.lint:
        from pytest_omk.loading.lint import portability_warnings

        for loaded in bundle.samples:
            if loaded.source == node.path:
                for message in portability_warnings(loaded.sample.sample_id, loaded.sample.assertions or []):
                    node.warn(pytest.PytestWarning(f"omk-lint: {visible(message)}"))
    if executor is None or executor.supports_mocks:
        return
    with_mocks = [s.sample.sample_id for s in bundle.samples if s.sample.mocks]
    if with_mocks:
        raise ConfigError(
            f"{node.path.name}: samples {', '.join(with_mocks)} declare mocks, but executor "
            f"{executor.id!r} cannot intercept tool calls (a command executor declares it with "
            "the ini option omk_executor_capabilities = mocks)"
        )
