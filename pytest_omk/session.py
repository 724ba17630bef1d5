"""The run's state and the pytest hooks that drive it, owned by one object in ``config.stash``.

``OmkSession`` builds the executor and the call path lazily (a run without sample files pays
nothing), starts every selected sample's model calls before pytest's run loop, hands each item its
result in setup, and turns graded items into records for the reports.
"""

from __future__ import annotations

import concurrent.futures
import gc
import os
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_omk.errors import ConfigError, OmkError
from pytest_omk.judge.select import same_model_warning, select_judge
from pytest_omk.report.collector import RecordCollector
from pytest_omk.settings import Settings

# The call machinery (HTTP clients, the agent, MCP, the judge, the URL resolver) is imported when a
# run first needs it, so that loading the plugin stays cheap for test suites without sample files.
if TYPE_CHECKING:
    from pytest_omk.collect import SampleFile, SampleItem
    from pytest_omk.compare.variants import Variant
    from pytest_omk.execute.base import Executor
    from pytest_omk.execute.recordings import RecordingStore
    from pytest_omk.judge import LLMJudge
    from pytest_omk.loading import LoadedSample, SampleBundle
    from pytest_omk.models import Sample
    from pytest_omk.pipeline import SamplePlan, SampleRun, Stages
    from pytest_omk.resolve import UrlResolver
    from pytest_omk.runtime import CallRunner, ModelCalls
    from pytest_omk.xdist_prefetch import WorkerFeed

omk_session_key = pytest.StashKey["OmkSession"]()
RUN_LOOP_GC_THRESHOLD = 50_000
"""Allocations between young-generation collections while items run (CPython's default: 700)."""
NO_EXECUTOR = "no executor configured (set --omk-executor or omk_executor)"


class OmkSession:
    """State of one pytest run (one per process: the controller and each xdist worker)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.settings = Settings.from_config(config)
        self.is_worker = hasattr(config, "workerinput")
        self.records = RecordCollector(config, self.settings)
        self._executor: Executor | None = None
        self._executor_built = False
        self._runner: CallRunner | None = None
        self._stages: Stages | None = None
        self._futures: dict[str, concurrent.futures.Future[list[SampleRun]]] = {}
        self._unmet: dict[Path, list[str]] = {}
        self._system_texts: dict[Path, str] = {}
        self._judge_executor: Executor | None = None
        self._resolver: UrlResolver | None = None
        self._marks: dict[tuple[Any, ...], pytest.MarkDecorator] = {}
        self._feed: WorkerFeed | None = None
        self._ssl_context: concurrent.futures.Future[Any] | None = None
        # JUnit properties cost memory per item: built only when a JUnit file is written.
        self._junit = bool(getattr(config.option, "xmlpath", None))
        self._recordings_root = (
            (self.settings.rootdir / self.settings.recordings).resolve() if self.settings.recordings else None
        )
        self._items: list[pytest.Item] = []
        from pytest_omk.progress import CallProgress

        self.progress = CallProgress()
        """Counts of this process's model calls, for the status line."""
        self._attempts: dict[str, int] = {}
        """Setups of each item so far: a rerun (pytest-rerunfailures) is a further take."""
        self.judge_spec = select_judge(self.settings.judge, os.environ)
        self._check_specs()
        warning = same_model_warning(self.judge_spec, self.settings.judge_model, self.settings.executor, self.settings.model)
        if warning and not self.is_worker:
            config.issue_config_time_warning(pytest.PytestWarning(f"omk: {warning}"), stacklevel=2)

    # --- configuration -----------------------------------------------------------------------

    def _check_specs(self) -> None:
        """A typo'd executor name is a usage error now, not a command run for every sample."""
        from pytest_omk.execute.factory import BUILTIN_EXECUTORS
        from pytest_omk.preflight import check_executor_spec

        try:
            for spec, option in ((self.settings.executor, "--omk-executor"), (self.judge_spec, "--omk-judge")):
                if spec:
                    check_executor_spec(spec, BUILTIN_EXECUTORS, option=option)
        except ConfigError as exc:
            raise pytest.UsageError(f"omk: {exc}") from None

    def _check_keys(self, items: list[SampleItem]) -> None:
        """Before any item: a missing API key for a call that will be live is a usage error."""
        from pytest_omk.live_needs import judged, recorded_here
        from pytest_omk.preflight import check_live_key, missing_key

        stages = self._stage_set()
        runnable = [item for item in items if self._skip_reason(item) is None]
        mode = self.settings.record_mode
        try:
            if missing_key(self._executor) is not None:
                check = recorded_here(stages.calls.store, self._executor, runnable, self.settings.repeat)
                check_live_key(self._executor, mode, check.labels, check.recorded)
            if missing_key(self._judge_executor) is not None and mode != "none":
                check_live_key(self._judge_executor, mode, judged(runnable), lambda _: True, option="--omk-judge")
        except ConfigError as exc:
            raise pytest.UsageError(f"omk: {exc}") from None

    @property
    def executor(self) -> Executor | None:
        """The model under test, or ``None`` when none is configured."""
        if not self._executor_built:
            self._executor_built = True
            from pytest_omk.agent.options import AgentOptions
            from pytest_omk.execute.factory import make_executor, wrap_callable

            made = self.config.hook.pytest_omk_make_executor(config=self.config)
            try:
                if made is not None:
                    self._executor = wrap_callable(made, "pytest_omk_make_executor")
                elif self.settings.executor:
                    self._executor = make_executor(
                        self.settings.executor,
                        timeout=self.settings.timeout,
                        capabilities=self.settings.executor_capabilities,
                        agent=AgentOptions.from_settings(self.settings),
                    )
            except ConfigError as exc:
                raise pytest.UsageError(f"omk: {exc}") from None
        return self._executor

    def _stage_set(self) -> Stages:
        if self._stages is None:
            executor = self.executor
            assert executor is not None
            from pytest_omk.execute.recordings import RecordingStore
            from pytest_omk.execute.retry import AdaptiveLimiter, RetryPolicy
            from pytest_omk.offline import ReplayOnly
            from pytest_omk.pipeline import Stages
            from pytest_omk.recording_session import run_started_ns
            from pytest_omk.runtime import ModelCalls

            store = RecordingStore(
                self._recordings_dir(), self.settings.record_mode, warn=self._warn, started_ns=run_started_ns(self.config)
            )
            if store.replay_only:
                executor = ReplayOnly(executor)  # no transport: a replay-only run cannot call a model
            calls = ModelCalls(
                store=store,
                limiter=AdaptiveLimiter(self._concurrency()),
                policy=RetryPolicy(retries=self.settings.retries),
                timeout=self.settings.timeout,
                progress=self.progress,
            )
            resolver = self._make_resolver(store)
            self._stages = Stages(calls=calls, executor=executor, resolver=resolver, judge=self._make_judge(calls))
        return self._stages

    def _concurrency(self) -> int:
        """Calls in flight in this process: an xdist worker takes its share of the total."""
        if not self.is_worker:
            return self.settings.concurrency
        from pytest_omk.xdist_prefetch import worker_share

        workers = int(getattr(self.config, "workerinput", {}).get("workercount", 1))
        return worker_share(self.settings.concurrency, workers)

    def _make_resolver(self, store: RecordingStore) -> UrlResolver:
        from pytest_omk.resolve import UrlResolver

        mcp_config = Path(self.settings.mcp_config) if self.settings.mcp_config else None
        try:
            self._resolver = UrlResolver(
                store,
                allow_hosts=self.settings.url_allow_hosts,
                mcp_config_path=mcp_config,
                rootdir=self.settings.rootdir,
                timeout=min(30.0, self.settings.timeout),
            )
        except ConfigError as exc:
            raise pytest.UsageError(f"omk: {exc}") from None
        # MCP server tokens are secrets too: they must never reach a recording.
        store.add_secrets(self._resolver.secrets)
        return self._resolver

    def _register_url_sets(self, items: list[SampleItem]) -> None:
        """Declare each file's selected samples to the URL resolver (its limits are per file)."""
        if self._resolver is None:
            return
        by_bundle: dict[Path, list[SamplePlan]] = {}
        for item in items:
            by_bundle.setdefault(item.bundle.path, []).append(item.plan)
        for path, plans in by_bundle.items():
            self._resolver.register(plans, name=str(path))

    def _make_judge(self, calls: ModelCalls) -> LLMJudge | None:
        if self.judge_spec is None:
            return None
        from pytest_omk.execute.factory import make_executor
        from pytest_omk.judge import LLMJudge

        try:
            self._judge_executor = make_executor(self.judge_spec, timeout=self.settings.timeout)
        except ConfigError as exc:
            raise pytest.UsageError(f"omk: judge: {exc}") from None
        if calls.store.replay_only:
            from pytest_omk.offline import ReplayOnly

            self._judge_executor = ReplayOnly(self._judge_executor)
        return LLMJudge(
            calls,
            self._judge_executor,
            model=self.settings.judge_model,
            threshold=self.settings.rubric_threshold,
            repeat=self.settings.judge_repeat,
        )

    async def _aclose(self) -> None:
        for executor in (self._executor, self._judge_executor):
            if executor is not None:
                await executor.aclose()
        if self._resolver is not None:
            await self._resolver.aclose()

    def _recordings_dir(self) -> Path | None:
        if self.settings.record_mode == "off":
            return None
        if self.settings.recordings:
            return (self.settings.rootdir / self.settings.recordings).resolve()
        cache = getattr(self.config, "cache", None)
        if cache is None:
            return None
        return Path(cache.mkdir("omk")) / "recordings"

    def _warn(self, message: str) -> None:
        self.config.issue_config_time_warning(pytest.PytestWarning(f"omk: {message}"), stacklevel=2)

    def system_text(self, path: Path) -> str:
        """The text of a system-prompt file, read once."""
        if path not in self._system_texts:
            try:
                self._system_texts[path] = path.read_text(encoding="utf-8")
            except OSError as exc:
                raise pytest.UsageError(f"omk: cannot read system prompt file {path}: {exc.strerror}") from None
        return self._system_texts[path]

    def _system_for(self, system_file: Path | None) -> str | None:
        if system_file is not None:
            return self.system_text(system_file)
        if self.settings.system:
            candidate = Path(self.config.invocation_params.dir) / self.settings.system
            if not candidate.exists():
                candidate = self.settings.rootdir / self.settings.system
            return self.system_text(candidate)
        return None

    # --- collection ---------------------------------------------------------------------------

    def check_file(self, node: SampleFile, bundle: SampleBundle) -> None:
        """Collection-time checks that need the configuration (mock interception support)."""
        executor = self.executor
        if executor is None or executor.supports_mocks:
            return
        with_mocks = [s.sample.sample_id for s in bundle.samples if s.sample.mocks]
        if with_mocks:
            raise ConfigError(
                f"{node.path.name}: samples {', '.join(with_mocks)} declare mocks, but executor "
                f"{executor.id!r} cannot intercept tool calls (a command executor declares it with "
                "the ini option omk_executor_capabilities = mocks)"
            )

    def plan_for(
        self, loaded: LoadedSample, bundle: SampleBundle, system_file: Path | None, variant: Variant | None = None
    ) -> SamplePlan:
        """The fixed inputs of one sample's run; a variant's file replaces every other system prompt."""
        from pytest_omk.pipeline import SamplePlan

        return SamplePlan(
            sample=loaded.sample,
            base_dir=bundle.base_dir,
            rootdir=self.settings.rootdir,
            system=self.system_text(variant.path) if variant else self._system_for(system_file or bundle.system_file),
            model=self.settings.model,
            variant=variant.name if variant else None,
            source=loaded.source,
        )

    def markers_for(self, sample: Sample) -> list[pytest.MarkDecorator]:
        """Markers carrying the sample's metadata (one shared mark object per distinct value)."""
        marks = [self._mark("omk")]
        if sample.difficulty:
            marks.append(self._mark("omk_difficulty", sample.difficulty, level=sample.difficulty))
        for capability in sample.capability or []:
            marks.append(self._mark("omk_capability", capability, name=capability))
        if sample.tripwire:
            marks.append(self._mark("xfail", strict=False, reason="tripwire sample: the model is expected to fail"))
        return marks

    def _mark(self, marker: str, /, *args: str, **kwargs: str | bool) -> pytest.MarkDecorator:
        # Building marks dominates collecting large files; a run has few distinct values.
        key = (marker, args, tuple(sorted(kwargs.items())))
        if key not in self._marks:
            decorator = getattr(pytest.mark, marker)
            self._marks[key] = decorator(*args, **kwargs) if args or kwargs else decorator
        return self._marks[key]

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

        future = self._call_runner().submit(run_repeated(item.plan, self._stage_set(), self.settings.repeat))
        self._futures[item.nodeid] = future
        self.progress.sample_started()
        future.add_done_callback(self._sample_done)
        return future

    def _sample_done(self, future: concurrent.futures.Future[list[SampleRun]]) -> None:
        self.progress.sample_finished(failed=not future.cancelled() and future.exception() is not None)

    def _wait(self, future: concurrent.futures.Future[list[SampleRun]]) -> list[SampleRun]:
        """The item's runs; the controller shows the status line meanwhile (not under ``-q``)."""
        if self._feed is not None:
            return self._feed.wait(future, self._start_indices)
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        interval = self.settings.status_interval
        if future.done() or reporter is None or interval <= 0 or self.config.get_verbosity() < 0:
            return future.result()
        from pytest_omk.status_line import StatusLine

        capture = self.config.pluginmanager.get_plugin("capturemanager")
        status = StatusLine(reporter, self.progress, interval=interval, tty=bool(reporter.isatty), capture=capture)
        return status.wait(future)

    def _start_indices(self, indices: list[int]) -> None:
        """Start the calls of the items xdist just queued on this worker (by collection index)."""
        from pytest_omk.collect import SampleItem

        for index in indices:
            item = self._items[index] if 0 <= index < len(self._items) else None
            if isinstance(item, SampleItem):
                self.start(item)

    def _call_runner(self) -> CallRunner:
        if self._runner is None:
            from pytest_omk.runtime import CallRunner

            self._runner = CallRunner()
        return self._runner

    def _warm_up(self) -> None:
        """Start the loop thread, the call path's imports and the TLS context while pytest collects."""
        if not self.settings.executor or self.config.option.collectonly:
            return
        from pytest_omk.runtime import preload

        self._ssl_context = self._call_runner().submit(preload(judge=self.judge_spec is not None))

    def _warm_clients(self) -> None:
        """Open the executors' HTTP clients on the loop before the first wave of calls."""
        from pytest_omk.runtime import warm_clients

        if self.settings.record_mode == "none":
            return  # nothing may be opened in a replay-only run
        executors = [e for e in (self._executor, self._judge_executor) if e is not None]
        self._call_runner().submit(warm_clients(executors, self._ssl_context))

    def setup_item(self, item: SampleItem) -> None:
        """Setup phase: skip, or wait for the item's model calls (failure = ERROR)."""
        self.records.begin(item, self.executor)
        reason = self._skip_reason(item)
        if reason is not None:
            pytest.skip(reason)
        self._next_take(item)
        future = self.start(item)
        assert future is not None
        try:
            item.omk_runs = self._wait(future)
            item.omk_run = item.omk_runs[0]
            # The item holds the result now; the future (and its task) need not live to the end.
            self._futures.pop(item.nodeid, None)
        except concurrent.futures.CancelledError:
            pytest.skip("omk: the model call was cancelled")
        except OmkError as exc:
            error = f"{type(exc).__name__}: {exc}"
        else:
            return
        # An infrastructure failure: the item ERRORs with one clear line, never a traceback, and
        # is never graded (so it counts neither as a pass nor as a model failure). Raised outside
        # the ``except`` so pytest does not print the chained original exception.
        item.omk_record["error"] = error
        pytest.fail(f"omk: {error}", pytrace=False)

    def _next_take(self, item: SampleItem) -> None:
        """A second setup of the same item is a rerun: it asks the model again, as take 1, 2 ...

        The take is part of the recording key, so each attempt is its own recording; replaying a
        rerun replays that attempt's answer (docs/recording.md, "Reruns and takes").
        """
        take = self._attempts.get(item.nodeid, -1) + 1
        self._attempts[item.nodeid] = take
        if take > 0:
            from dataclasses import replace

            item.plan = replace(item.plan, take=take)
            self._futures.pop(item.nodeid, None)

    def grade_item(self, item: SampleItem, subtests: pytest.Subtests) -> None:
        """Call phase: grade, report subtests and record the result."""
        from pytest_omk.report.subtests import grade_and_report

        grade_and_report(item, subtests, self)

    # --- hooks --------------------------------------------------------------------------------

    @pytest.hookimpl(wrapper=True)
    def pytest_collection(self, session: pytest.Session) -> Generator[None, object, object]:
        # Validating thousands of samples allocates millions of long-lived objects, and the
        # cyclic garbage collector would rescan them again and again (measured: most of the time
        # of a 10,000-sample collection). Pause it, then move the survivors out of its sight.
        self._warm_up()
        gc.disable()
        try:
            return (yield)
        finally:
            gc.freeze()
            gc.enable()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        from pytest_omk.collect import SampleItem

        items = [item for item in session.items if isinstance(item, SampleItem)]
        if items and not session.config.option.collectonly and self.executor is not None:
            self._check_keys(items)
            self._warm_clients()
            self._register_url_sets(items)
            # Under xdist each worker sees every item but runs only some: it must not prefetch
            # them all, or each worker would call the model for every sample. It starts the
            # items the controller sends it, as they arrive (xdist_prefetch).
            if self.is_worker:
                from pytest_omk.xdist_prefetch import WorkerFeed

                self._items = session.items
                self._feed = WorkerFeed.attach(self.config.pluginmanager.get_plugins())
            else:
                for item in items:
                    self.start(item)
        # Everything collected is frozen out of the collector's sight; what the run loop allocates
        # per item is mostly short-lived, and young collections every 700 allocations would scan
        # it again and again (measured: seconds on a 10,000-sample replay, freeing next to nothing).
        threshold = gc.get_threshold()
        gc.set_threshold(max(threshold[0], RUN_LOOP_GC_THRESHOLD), *threshold[1:])
        try:
            return (yield)
        finally:
            gc.set_threshold(*threshold)
            if self._runner is not None:
                self._runner.cancel_pending()

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        # Workers can only prefetch what they have been sent: keep their queues deep enough.
        from pytest_omk.xdist_prefetch import make_scheduler

        return make_scheduler(config, log, self.settings.concurrency)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
        record = getattr(item, "omk_record", None)
        if call.when == "teardown" and record is not None and self._junit:
            # JUnit writes the properties of the teardown report, so they are derived here, once,
            # from the final record (graded, skipped or errored alike).
            from pytest_omk.report.records import junit_properties

            props = junit_properties(record)
            self.config.hook.pytest_omk_junit_properties(item=item, result=record, properties=props)
            item.user_properties.extend((str(k), str(v)) for k, v in props)
        report = yield
        if call.when == "teardown" and record is not None:
            report.omk_record = record
            # What the summary needs is in the record; the run's results (outputs, requests,
            # traces) would otherwise stay alive with the item until the end of the session.
            for name in ("omk_run", "omk_runs"):
                item.__dict__.pop(name, None)
        return report

    def pytest_ignore_collect(self, collection_path: Path, config: pytest.Config) -> bool | None:
        # A recordings directory inside the project holds one file per call (tens of thousands
        # in a large suite): walking it would slow collection for nothing, and a recorded
        # fixture named like a sample file must not become a test.
        if self._recordings_root is not None and collection_path == self._recordings_root:
            return True
        return None

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        # Last, so that the shard is cut from what -k, -m and --lf left: blocks stay even.
        if self.settings.shard is not None:
            selected, deselected = self.settings.shard.split(items)
            if deselected:
                config.hook.pytest_deselected(items=deselected)
                items[:] = selected

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        # Records are ordered by collection order, which every xdist worker shares, so reports
        # come out in the same order with and without -n.
        self.records.order = {item.nodeid: index for index, item in enumerate(session.items)}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.records.observe(report)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.is_worker:
            self.records.print_summary(terminalreporter)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if not self.is_worker:
            self.records.finish(session)
            if self.settings.record_mode == "rewrite":
                self._prune_unused()

    def _prune_unused(self) -> None:
        """``rewrite``: delete the recordings of the samples that ran which this run did not use."""
        directory = self._recordings_dir()
        plugin = self.config.pluginmanager.get_plugin("omk-recordings")
        if directory is not None and plugin is not None:
            plugin.prune(directory, self.records.ordered(), self.settings.rootdir)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self._runner is not None:
            self._runner.close(self._aclose())
            self._runner = None

