"""The run's state and the pytest hooks that drive it, owned by one object in ``config.stash``.

``OmkSession`` builds the executor and the call path lazily (a run without sample files pays
nothing), starts every selected sample's model calls before pytest's run loop, hands each item its
result in setup, and turns graded items into records for the reports.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_omk.config.settings import Settings
from pytest_omk.errors import OmkError
from pytest_omk.js.v8 import JsEngine
from pytest_omk.plugin.attempts import Attempts, wait_for_runs
from pytest_omk.plugin.changed import CarryPlan
from pytest_omk.plugin.collection import CollectionHooks, check_sample_file
from pytest_omk.plugin.compat import item_level_capture
from pytest_omk.plugin.gc_policy import young_collections_spaced
from pytest_omk.plugin.item_records import ItemReports, note
from pytest_omk.plugin.not_graded import ctrl_c
from pytest_omk.plugin.planning import Planner
from pytest_omk.plugin.requires import Requirements
from pytest_omk.plugin.usage_errors import UsageErrors
from pytest_omk.plugin.wiring import call_path
from pytest_omk.plugin.xdist.prefetch import WorkerFeed
from pytest_omk.run.launcher import Launcher, RunsFuture
from pytest_omk.run.prefetch import PrefetchWindow, refill_mark, window_size

# The call machinery is imported when a run first needs it: loading the plugin stays cheap.
if TYPE_CHECKING:
    from pytest_omk.execute.base import Executor
    from pytest_omk.loading import SampleBundle
    from pytest_omk.models.run import SamplePlan
    from pytest_omk.plugin.nodes import SampleFile, SampleItem

CALL_PATH_MODULES = ("pytest_omk.run.pipeline", "pytest_omk.execute.openai", "pytest_omk.execute.anthropic")
"""What every run's first wave of calls imports: loaded on the call loop while pytest collects."""
JUDGE_MODULES = ("pytest_omk.judge.judge",)
"""Loaded the same way when a judge is configured."""


class OmkSession:
    """State of one pytest run (one per process: the controller and each xdist worker)."""

    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        self.config = config
        self.settings = settings
        self.is_worker = hasattr(config, "workerinput")
        self.calls = call_path(config, settings)
        self.planner = Planner(config, settings)
        self.launcher = Launcher(self.calls.stages, lambda: self.calls.progress, settings.repeat)
        self._feed: WorkerFeed | None = None
        self.bound_wait: Callable[[SampleItem, RunsFuture, Launcher], RunsFuture] | None = None
        """What bounds a sample's wait for its calls, set by the feature that does (pytest-timeout's
        limit, ``plugin/item_setup.py``); ``None``: the wait is bounded by the calls' own timeouts."""
        self._window: PrefetchWindow[SampleItem] | None = None
        # Handed over by collection, by id (the items include other tests).
        self._adopted: dict[int, SampleItem] = {}
        self.carry = CarryPlan(config, settings, self._adopted, self.calls)
        scrubber, adopted = (lambda: self.calls.scrubber), (lambda item: id(item) in self._adopted)
        self.collection = CollectionHooks(config, settings, adopted, scrubber, self.carry.take)
        self.collection.has_executor = lambda: self.executor is not None
        self.reports = ItemReports(
            config,
            scrubber,
            lambda: self.executor,
            lambda id_: self.collection.order.get(id_, 0),
            settings.model,
        )
        self.usage_errors = UsageErrors(config)
        self.requires = Requirements(lambda: self.executor)
        self._items: list[pytest.Item] = []
        self.attempts = Attempts(self.launcher.forget)
        self._js: JsEngine | None = None
        self._deferred: list[SampleItem] = []
        self._queued: list[int] = []

    @property
    def js(self) -> JsEngine:
        """This process's V8 engine for JavaScript semantics (its context starts on first use)."""
        if self._js is None:
            self._js = JsEngine()
        return self._js

    @property
    def executor(self) -> Executor | None:
        """The model under test, or ``None`` when none is configured."""
        return self.calls.executor

    # --- collection ---------------------------------------------------------------------------

    def check_file(self, node: SampleFile, bundle: SampleBundle) -> None:
        """Collection-time checks that need the configuration (check caps, lint, mock interception)."""
        check_sample_file(node, bundle, self.settings, self.executor)

    def adopt(self, item: SampleItem) -> None:
        """A sample file hands over each item it collected."""
        self._adopted[id(item)] = item

    def usage_error(self, message: str) -> None:
        """A usage error found while collecting: raised once collection is finished."""
        self.usage_errors.defer(message)

    # --- running ------------------------------------------------------------------------------

    def start(self, item: SampleItem) -> RunsFuture | None:
        """Start the item's model calls, every repeat of them (once); ``None`` when it will be skipped
        (or cannot start yet: the ``omk_app`` fixture's app is set up by the first sample that runs)."""
        if item.nodeid not in self.launcher.futures and self.requires.reason(item) is not None:
            return None
        if self.calls.model.waits_for_fixture:
            return None
        return self.launcher.start(item.nodeid, item.plan)

    def _prefetch(self, items: list[SampleItem]) -> None:
        """Start the first samples' calls; the items' setups top the window up (pytest_omk.run.prefetch)."""
        self.calls.progress.plan(len(items))
        concurrency = self.settings.concurrency
        self._window = PrefetchWindow(
            items,
            window_size(concurrency),
            refill_mark(concurrency),
            start=lambda item: self.start(item) is not None,
            waiting=lambda: len(self.launcher.futures),
            seen=self.attempts.seen,
        )
        self._window.fill()

    def fixture_bound(self) -> None:
        """The ``omk_app`` fixture's app is bound (pytest_omk.plugin.fixture_app): start the calls
        held back until now."""
        deferred, self._deferred = self._deferred, []
        if deferred:
            self._prefetch(deferred)
        queued, self._queued = self._queued, []
        self._start_indices(queued)

    def _start_indices(self, indices: list[int]) -> None:
        """Start the calls of the items xdist queued here (by index); one already set up started its own."""
        if self.calls.model.waits_for_fixture:
            self._queued.extend(indices)  # started once the fixture's app exists
            return
        for index in indices:
            item = self._adopted.get(id(self._items[index])) if 0 <= index < len(self._items) else None
            if item is not None and not self.attempts.seen(item.nodeid):
                self.start(item)

    def file_found(self) -> None:
        """A sample file is being collected: start the loop thread, the call path's imports and the
        TLS context while pytest goes on collecting (once; a run without sample files pays none)."""
        if not self.settings.executor or self.config.option.collectonly:
            return
        judged = self.calls.judge_spec is not None
        modules = CALL_PATH_MODULES + (JUDGE_MODULES if judged else ())
        self.launcher.warm_up(modules, connects=not self.calls.replay_only)

    def setup_item(self, item: pytest.Item) -> None:
        """Last step of a sample's setup: wait for its model calls (failure = ERROR).

        The features' steps before it are their plugin objects' hooks, registered before the step
        that calls this; their wrappers around it handle what else the wait may raise
        (``pytest_omk.plugin.item_setup``)."""
        sample = self._adopted.get(id(item))
        if sample is None:
            return
        future = self.start(sample)
        assert future is not None
        if self.bound_wait is not None:
            future = self.bound_wait(sample, future, self.launcher)
        stopped = self._wait(sample, future)
        if stopped is None:
            return
        skip, error = stopped
        if skip:  # never failed, never passed: the run ended (``-x``, Ctrl-C) before its calls did
            note(sample, {"skipReason": skip})
            pytest.skip(skip)
        # An infrastructure failure: the item ERRORs with one clear line, never a traceback, and
        # is never graded (so it counts neither as a pass nor as a model failure). Raised outside
        # the ``except`` so pytest does not print the chained original exception.
        note(sample, {"error": error})
        pytest.fail(f"omk: {error}", pytrace=False)

    def _wait(self, item: SampleItem, future: RunsFuture) -> tuple[str, str] | None:
        """Give the item its runs; else why not: ``(skip reason, "")`` or ``("", error)``. Any
        other exception is a feature's (a budget refusal, say) and goes on to its wrapper."""
        # Lazy, as below: grading imports the format's models (pydantic), no part of start-up.
        from pytest_omk.plugin.subtests import error_line

        try:
            item.omk_runs = wait_for_runs(
                self.config,
                future,
                progress=self.calls.progress,
                interval=self.settings.status_interval,
                feed=self._feed,
                start_indices=self._start_indices,
            )
            item.omk_run = item.omk_runs[0]
        except concurrent.futures.CancelledError:
            return "omk: the model call was cancelled", ""
        except OmkError as exc:
            return "", error_line(item, exc, self.settings, self.js)
        finally:
            # The item holds the result now; the future (and its task) need not live to the end,
            # and the next sample in the window may start. The calls' log stays until the
            # features' wrappers have read it (:meth:`release`).
            self.launcher.take(item.nodeid)
            if self._window is not None:
                self._window.fill()
        return None

    def release(self, item: pytest.Item) -> None:
        """Once every setup step and wrapper is done: drop the calls' log of a sample whose runs its
        item took (a sample whose setup ended before its wait keeps it: its calls are no item's)."""
        sample = self._adopted.get(id(item))
        if sample is not None and self.launcher.taken_calls(sample.nodeid) is not None:
            self.launcher.forget(sample.nodeid)

    def grade_item(self, item: SampleItem) -> None:
        """Call phase: grade, report subtests and record the result."""
        from pytest_omk.plugin.subtests import grade_and_report

        with item_level_capture(item.config):
            grade_and_report(item, self.settings, self.js)

    # --- hooks --------------------------------------------------------------------------------

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        if self._adopted and not session.config.option.collectonly:
            self._before_run_loop(session)
        settle = True  # a run that ends normally waits for its sent calls; Ctrl-C for none
        try:
            with young_collections_spaced():  # see pytest_omk.plugin.gc_policy
                return (yield)
        except BaseException as exc:
            settle = not ctrl_c(exc, session)
            raise
        finally:
            self.launcher.cancel_pending(settle=settle)

    def _before_run_loop(self, session: pytest.Session) -> None:
        # A method of its own, not the wrapper's body: the wrapper's frame lives as long as the run
        # loop, and its locals (every plan, so every validated sample) with it.
        items = [sample for item in session.items if (sample := self._adopted.get(id(item))) is not None]
        if not items or self.executor is None:  # the executor is built only when samples are selected
            return
        self.carry.digest_all(items, self.executor, self.calls.judge_spec)
        runnable = [item for item in items if self.requires.reason(item) is None]
        self.calls.check_keys(runnable)
        self.launcher.open_clients(self.calls.executors(), connects=self.settings.record_mode != "none")
        plans: dict[Path, list[SamplePlan]] = {}
        for item in items:
            plans.setdefault(item.bundle.path, []).append(item.plan)
        self.calls.register_url_sets(plans)
        # Under xdist each worker sees every item but runs only some: it must not prefetch them
        # all, or each worker would call the model for every sample. It starts the items the
        # controller sends it, as they arrive (xdist_prefetch).
        if self.is_worker:
            self._items = session.items
            self._feed = WorkerFeed.attach(self.config.pluginmanager.get_plugins())
        elif self.calls.model.waits_for_fixture:
            self._deferred = runnable  # prefetching starts once the fixture's app exists
        else:
            self._prefetch(runnable)

    def pytest_keyboard_interrupt(self) -> None:
        """End every call now."""
        # Ctrl-C: end every call (and the command and tool sessions they started) now. Under
        # xdist a worker that reports its session finished may be torn down by the controller
        # before its unconfigure runs, which left those sessions running for good.
        self.launcher.close(self.calls.aclose)
        self.calls.close_app()

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        """Close the JavaScript engine and end every call."""
        if self._js is not None:
            self._js.close()
            self._js = None
        self.launcher.close(self.calls.aclose)
        self.calls.close_app()
