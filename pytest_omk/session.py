"""The run's state and the pytest hooks that drive it, owned by one object in ``config.stash``.

``OmkSession`` builds the executor and the call path lazily (a run without sample files pays
nothing), starts every selected sample's model calls before pytest's run loop, hands each item its
result in setup, and turns graded items into records for the reports.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_omk.attempts import Attempts, wait_for_runs
from pytest_omk.collection_hooks import CollectionHooks
from pytest_omk.compat import item_level_capture
from pytest_omk.errors import OmkError
from pytest_omk.execute.tls import SharedTls
from pytest_omk.file_checks import check_sample_file
from pytest_omk.gc_policy import young_collections_spaced
from pytest_omk.planning import Planner
from pytest_omk.report.collector import record_collector_key
from pytest_omk.safety import scrub_report
from pytest_omk.settings import Settings
from pytest_omk.wiring import CallWiring

# The call machinery is imported when a run first needs it: loading the plugin stays cheap.
if TYPE_CHECKING:
    from pytest_omk.call_loop import CallRunner
    from pytest_omk.collect import SampleFile, SampleItem
    from pytest_omk.execute.base import Executor
    from pytest_omk.js.v8 import JsEngine
    from pytest_omk.loading import SampleBundle
    from pytest_omk.models.run import SamplePlan, SampleRun
    from pytest_omk.prefetch import PrefetchWindow
    from pytest_omk.xdist_prefetch import WorkerFeed

NO_EXECUTOR = "no executor configured (set --omk-executor or omk_executor)"


class OmkSession:
    """State of one pytest run (one per process: the controller and each xdist worker)."""

    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        self.config = config
        self.settings = settings
        self.is_worker = hasattr(config, "workerinput")
        self.calls = CallWiring(config, settings)
        self.planner = Planner(config, settings)
        self._runner: CallRunner | None = None
        self._futures: dict[str, concurrent.futures.Future[list[SampleRun]]] = {}
        self._unmet: dict[Path, list[str]] = {}
        self._feed: WorkerFeed | None = None
        self._window: PrefetchWindow[SampleItem] | None = None
        self._tls = SharedTls()
        # JUnit properties cost memory per item: built only when a JUnit file is written.
        self._junit = bool(getattr(config.option, "xmlpath", None))
        self.collection = CollectionHooks(config, settings, is_sample=lambda item: id(item) in self._adopted)
        self._items: list[pytest.Item] = []
        self._attempts = Attempts()
        self._adopted: dict[int, SampleItem] = {}  # handed over by collection, by id (items include other tests)
        self._js: JsEngine | None = None

    @property
    def js(self) -> JsEngine:
        """This process's V8 engine for JavaScript semantics (its context starts on first use)."""
        if self._js is None:
            from pytest_omk.js.v8 import JsEngine
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

    # --- running ------------------------------------------------------------------------------

    def _skip_reason(self, item: SampleItem) -> str | None:
        if self.executor is None:
            return NO_EXECUTOR
        key = item.bundle.path
        if key not in self._unmet:
            from pytest_omk.requires import unmet_requirements

            self._unmet[key] = unmet_requirements(item.bundle.requires, item.bundle.base_dir)
        unmet = self._unmet[key]
        return "requires not met: " + "; ".join(unmet) if unmet else None

    def start(self, item: SampleItem) -> concurrent.futures.Future[list[SampleRun]] | None:
        """Start the item's model calls, every repeat of them (once); ``None`` when it will be skipped."""
        if item.nodeid in self._futures:
            return self._futures[item.nodeid]
        if self._skip_reason(item) is not None:
            return None
        from pytest_omk.pipeline import run_repeated

        future = self._call_runner().submit(run_repeated(item.plan, self.calls.stages(), self.settings.repeat))
        self._futures[item.nodeid] = future
        progress = self.calls.progress
        progress.sample_started()
        future.add_done_callback(
            lambda done: progress.sample_finished(failed=not done.cancelled() and done.exception() is not None)
        )
        return future

    def _prefetch(self, items: list[SampleItem]) -> None:
        """Start the first samples' calls; the items' setups top the window up (pytest_omk.prefetch)."""
        from pytest_omk.prefetch import PrefetchWindow, refill_mark, window_size

        self.calls.progress.plan(len(items))
        concurrency = self.settings.concurrency
        self._window = PrefetchWindow(
            items, window_size(concurrency), refill_mark(concurrency), start=lambda item: self.start(item) is not None,
            waiting=lambda: len(self._futures), seen=self._attempts.seen,
        )
        self._window.fill()

    def _start_indices(self, indices: list[int]) -> None:
        """Start the calls of the items xdist queued here (by index); one already set up started its own."""
        for index in indices:
            item = self._adopted.get(id(self._items[index])) if 0 <= index < len(self._items) else None
            if item is not None and not self._attempts.seen(item.nodeid):
                self.start(item)

    def _call_runner(self) -> CallRunner:
        if self._runner is None:
            from pytest_omk.call_loop import CallRunner

            self._runner = CallRunner()
        return self._runner

    def file_found(self) -> None:
        """A sample file is being collected: start the loop thread, the call path's imports and the
        TLS context while pytest goes on collecting (once; a run without sample files pays none)."""
        if self._runner is not None or not self.settings.executor or self.config.option.collectonly:
            return
        from pytest_omk.call_loop import preload_transport

        runner = self._call_runner()
        # The TLS context first: it needs only httpx, and the main thread meanwhile imports the
        # models the call path needs. A replay-only run connects nowhere: no CA bundle to load.
        if not self.calls.replay_only:
            runner.submit(preload_transport(self._tls))
        from pytest_omk.runtime import preload

        runner.submit(preload(judge=self.calls.judge_spec is not None))

    def _warm_clients(self) -> None:
        """Share the TLS context (before any call is submitted) and open the HTTP clients early."""
        from pytest_omk.runtime import share_tls, warm_clients

        executors = share_tls(self.calls.executors(), self._tls)
        if self.settings.record_mode != "none":  # nothing may be opened in a replay-only run
            self._call_runner().submit(warm_clients(executors))

    def setup_item(self, item: SampleItem) -> None:
        """Setup phase: skip, or wait for the item's model calls (failure = ERROR)."""
        from pytest_omk.report.records import new_record  # imports the report models
        executor = self.executor
        item.omk_record = new_record(
            nodeid=item.nodeid,
            file=item.shown_path,
            sample=item.loaded.sample,
            variant=item.plan.variant,
            executor=executor.id if executor is not None else None,
            model=self.settings.model,
            order=self.collection.order.get(item.nodeid, 0),
        )
        reason = self._skip_reason(item)
        if reason is not None:
            pytest.skip(reason)
        self._attempts.next_take(item, self._futures)
        future = self.start(item)
        assert future is not None
        try:
            item.omk_runs = wait_for_runs(
                self.config, future, progress=self.calls.progress, interval=self.settings.status_interval,
                feed=self._feed, start_indices=self._start_indices,
            )
            item.omk_run = item.omk_runs[0]
        except concurrent.futures.CancelledError:
            pytest.skip("omk: the model call was cancelled")
        except OmkError as exc:
            error = f"{type(exc).__name__}: {exc}"
        else:
            return
        finally:
            # The item holds the result now; the future (and its task) need not live to the end,
            # and the next sample in the window may start.
            self._futures.pop(item.nodeid, None)
            if self._window is not None:
                self._window.fill()
        # An infrastructure failure: the item ERRORs with one clear line, never a traceback, and
        # is never graded (so it counts neither as a pass nor as a model failure). Raised outside
        # the ``except`` so pytest does not print the chained original exception.
        item.omk_record["error"] = error
        pytest.fail(f"omk: {error}", pytrace=False)

    def grade_item(self, item: SampleItem) -> None:
        """Call phase: grade, report subtests and record the result."""
        from pytest_omk.report.subtests import grade_and_report

        with item_level_capture(item.config):
            grade_and_report(item, self.settings, self.js)

    # --- hooks --------------------------------------------------------------------------------

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        if self._adopted and not session.config.option.collectonly:
            self._before_run_loop(session)
        try:
            with young_collections_spaced():  # see pytest_omk.gc_policy
                return (yield)
        finally:
            if self._runner is not None:
                self._runner.cancel_pending()

    def _before_run_loop(self, session: pytest.Session) -> None:
        # A method of its own, not the wrapper's body: the wrapper's frame lives as long as the run
        # loop, and its locals (every plan, so every validated sample) with it.
        items = [sample for item in session.items if (sample := self._adopted.get(id(item))) is not None]
        if not items or self.executor is None:  # the executor is built only when samples are selected
            return
        runnable = [item for item in items if self._skip_reason(item) is None]
        self.calls.check_keys(runnable)
        self._warm_clients()
        plans: dict[Path, list[SamplePlan]] = {}
        for item in items:
            plans.setdefault(item.bundle.path, []).append(item.plan)
        self.calls.register_url_sets(plans)
        # Under xdist each worker sees every item but runs only some: it must not prefetch them
        # all, or each worker would call the model for every sample. It starts the items the
        # controller sends it, as they arrive (xdist_prefetch).
        if self.is_worker:
            from pytest_omk.xdist_prefetch import WorkerFeed

            self._items = session.items
            self._feed = WorkerFeed.attach(self.config.pluginmanager.get_plugins())
        else:
            self._prefetch(runnable)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        # Workers can only prefetch what they have been sent: keep their queues deep enough.
        from pytest_omk.xdist_prefetch import make_scheduler

        return make_scheduler(config, log, self.settings.concurrency)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
        record = getattr(item, "omk_record", None)
        if call.when == "teardown" and record is not None and self._junit:
            from pytest_omk.report.junit_layout import add_junit_properties
            add_junit_properties(item, record)
        report = yield
        scrubber = self.calls.scrubber
        scrub_report(report, scrubber)
        collector = self.config.stash.get(record_collector_key, None)
        if collector is not None:  # the JSON report hides the MCP tokens too
            collector.extra_secrets = scrubber.secrets
        if call.when == "teardown" and record is not None:
            report.omk_record = record
            # What the summary needs is in the record; the run's results (outputs, requests,
            # traces) would otherwise stay alive with the item until the end of the session.
            for name in ("omk_run", "omk_runs"):
                item.__dict__.pop(name, None)
        return report

    def pytest_keyboard_interrupt(self) -> None:
        # Ctrl-C: end every call (and the command and tool sessions they started) now. Under
        # xdist a worker that reports its session finished may be torn down by the controller
        # before its unconfigure runs, which left those sessions running for good.
        self._close_runner()

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self._js is not None:
            self._js.close()
            self._js = None
        self._close_runner()

    def _close_runner(self) -> None:
        if self._runner is not None:
            self._runner.close(self.calls.aclose())
            self._runner = None

