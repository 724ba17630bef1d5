"""The composition root: how the run calls models, made in one place from the settings.

The executor (or the app under test and its gateway), the judge, the URL resolver, the recordings
store, the budget and the call path's stages are made here, lazily (a run without sample files pays
nothing). The pytest layer hands in only what the test runner knows (:class:`RunnerSide`) and gets
the built call path back.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_omk.config.settings import Settings
from pytest_omk.errors import ConfigError
from pytest_omk.execute.progress import CallProgress
from pytest_omk.judge.select import same_model_warning, select_judge
from pytest_omk.models.accounting import CallLedger
from pytest_omk.recordings.modes import replay_only
from pytest_omk.recordings.scrub import environment_snapshot
from pytest_omk.run.model_under_test import AppSide, ModelUnderTest

if TYPE_CHECKING:
    from pytest_omk.agent.options import AgentOptions
    from pytest_omk.execute.base import Executor
    from pytest_omk.execute.budget import Budget, BudgetLimits
    from pytest_omk.execute.calls import ModelCalls
    from pytest_omk.execute.retry import AdaptiveLimiter
    from pytest_omk.judge.judge import LLMJudge
    from pytest_omk.models.run import SamplePlan
    from pytest_omk.recordings.scrub import Scrubber
    from pytest_omk.recordings.store import RecordingStore
    from pytest_omk.resolve.resolver import UrlResolver
    from pytest_omk.run.live_needs import Planned
    from pytest_omk.run.pipeline import Stages


@dataclass(frozen=True)
class RunnerSide:
    """What only the test runner knows, handed in by the pytest layer."""

    warn: Callable[[str], None]
    """Where a warning about the configuration goes."""
    usage_error: Callable[[str], Exception]
    """The exception that stops the run with one line (``omk: <message>``, exit 4)."""
    workers: int | None
    """How many xdist workers share the run (``None``: not a worker)."""
    budget_limits: Callable[[], BudgetLimits] | None
    """This process's shard's caps (``None``: the run's, from the settings); asked once."""
    recordings_dir: Callable[[], Path | None]
    """Where the recordings live (asked when the store is first needed)."""
    started_ns: Callable[[], int]
    """The run's start (the controller's, on a worker too)."""
    app: AppSide
    """Who answers the samples."""


class CallPath:
    """The model-facing collaborators of one process's run, made on first use."""

    def __init__(self, settings: Settings, side: RunnerSide) -> None:
        self.settings = settings
        self.side = side
        self.is_worker = side.workers is not None
        self._executor: Executor | None = None
        self._executor_built = False
        self._stages: Stages | None = None
        self._judge_executor: Executor | None = None
        self._resolver: UrlResolver | None = None
        self._scrubber: Scrubber | None = None
        self._store: RecordingStore | None = None
        self._provider_env = environment_snapshot()
        self.ledger = CallLedger()  # every model call of this process, recorded once
        shared = (lambda: self.budget, lambda: self.limiter, self.ledger)
        self.model = ModelUnderTest(settings, side.app, lambda: self.store, self._agent_options, *shared)
        """What answers the samples, and the gateway of an app under test."""
        self.judge_spec = select_judge(settings.judge)
        warning = same_model_warning(self.judge_spec, settings.judge_model, settings.executor, settings.model)
        if warning and not self.is_worker:
            side.warn(warning)
        self.progress = CallProgress(ledger=self.ledger)  # the status line's counts
        self._check_specs()

    def _check_specs(self) -> None:
        """A typo'd executor name is a usage error now, not a command run for every sample."""
        from pytest_omk.execute.names import BUILTIN_EXECUTORS
        from pytest_omk.run.startup_checks import check_executor_spec

        try:
            for spec, option in (
                (self.settings.executor, "--omk-executor"),
                (self.judge_spec, "--omk-judge"),
            ):
                if spec:
                    check_executor_spec(spec, BUILTIN_EXECUTORS, option=option)
        except ConfigError as exc:
            raise self.side.usage_error(str(exc)) from None

    def check_keys(self, runnable: Sequence[Planned]) -> None:
        """Before any item: a missing API key for a call that will be live is a usage error.

        ``runnable``: the sample items that will run.
        """
        from pytest_omk.run.live_needs import judged, recorded_here
        from pytest_omk.run.startup_checks import check_live_key, missing_key

        stages = self.stages()
        mode = self.settings.record_mode
        try:
            if self._executor is not None and missing_key(self._executor) is not None:
                check = recorded_here(stages.calls.store, self._executor, runnable, self.settings.repeat)
                check_live_key(self._executor, mode, check.labels, check.recorded)
            if missing_key(self._judge_executor) is not None and mode != "none":
                check_live_key(
                    self._judge_executor, mode, judged(runnable), lambda _: True, option="--omk-judge"
                )
        except ConfigError as exc:
            raise self.side.usage_error(str(exc)) from None

    @property
    def replay_only(self) -> bool:
        """Whether every call must come from a recording, by the store's rule (known before the
        store is made): such a run wraps its executors in ``ReplayOnly`` and connects nowhere."""
        return replay_only(self.settings.record_mode, self.side.recordings_dir())

    def executors(self) -> list[Executor]:
        """The executors made so far (model under test, judge)."""
        return [e for e in (self._executor, self._judge_executor) if e is not None]

    @property
    def executor(self) -> Executor | None:
        """The model under test, or ``None`` when none is configured (built on first use)."""
        if not self._executor_built:
            self._executor_built = True
            try:
                self._executor = self.model.build()
            except ConfigError as exc:
                raise self.side.usage_error(str(exc)) from None
        return self._executor

    @property
    def store(self) -> RecordingStore:
        """The run's recordings store (made on first use: by the call path, or an app's gateway)."""
        if self._store is None:
            from pytest_omk.recordings.store import RecordingStore

            self._store = RecordingStore(
                self.side.recordings_dir(),
                self.settings.record_mode,
                warn=self.side.warn,
                started_ns=self.side.started_ns(),
            )
        return self._store

    def _agent_options(self) -> AgentOptions:
        # Imported only for the agent: the agent package (its providers, tools and MCP client)
        # cost a plain API run about 30 ms of start-up before its first call.
        from pytest_omk.agent.options import AgentOptions

        return AgentOptions.from_settings(self.settings)

    def stages(self) -> Stages:
        """The call path's stages, built on first use."""
        if self._stages is None:
            executor = self.executor
            assert executor is not None
            from pytest_omk.execute.calls import ModelCalls
            from pytest_omk.execute.replay_only import ReplayOnly
            from pytest_omk.execute.retry import RetryPolicy
            from pytest_omk.judge.probe import probed
            from pytest_omk.run.pipeline import Stages

            store = self.store
            if store.replay_only and executor.records_answers:
                # No transport in replay only; an app under test still runs, its model calls replayed.
                executor = ReplayOnly(executor)
            calls = ModelCalls(
                store=store,
                limiter=self.limiter,
                policy=RetryPolicy(retries=self.settings.retries),
                timeout=self.settings.timeout,
                progress=self.progress,
                budget=self.budget,
                ledger=self.ledger,
            )
            resolver = self._make_resolver(store)
            judge = probed(self._make_judge(calls), self.settings.judge_probe)  # --omk-judge-probe
            self._stages = Stages(calls=calls, executor=executor, resolver=resolver, judge=judge)
        return self._stages

    @cached_property
    def budget(self) -> Budget | None:
        """The run's spending cap (an xdist worker's share of it); ``None`` without one."""
        from pytest_omk.execute.budget import Budget, BudgetLimits

        ask = self.side.budget_limits
        limits = ask() if ask else BudgetLimits(self.settings.budget_usd, self.settings.budget_tokens)
        if not limits.active:
            return None
        return Budget(limits.share(self.side.workers or 1), self.ledger, shown=limits)

    @cached_property
    def limiter(self) -> AdaptiveLimiter:
        """Model calls in flight (``--omk-concurrency``, a worker's share): executors' and an app's."""
        from pytest_omk.execute.retry import AdaptiveLimiter
        from pytest_omk.run.prefetch import worker_share

        return AdaptiveLimiter(worker_share(self.settings.concurrency, self.side.workers or 1))

    def _make_resolver(self, store: RecordingStore) -> UrlResolver:
        from pytest_omk.resolve.resolver import UrlResolver

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
            raise self.side.usage_error(str(exc)) from None
        # MCP server tokens are secrets too: they must never reach a recording.
        store.add_secrets(self._resolver.secrets)
        return self._resolver

    def register_url_sets(self, by_file: dict[Path, list[SamplePlan]]) -> None:
        """Declare each file's selected samples to the URL resolver (its limits are per file)."""
        if self._resolver is not None:
            for path, plans in by_file.items():
                self._resolver.register(plans, name=str(path))

    def _make_judge(self, calls: ModelCalls) -> LLMJudge | None:
        if self.judge_spec is None:
            return None
        from pytest_omk.execute.pricing import PriceBook
        from pytest_omk.judge.judge import LLMJudge
        from pytest_omk.run.executors import make_executor

        try:
            # The provider variables as they were before an app's gateway pointed them at itself.
            self._judge_executor = make_executor(
                self.judge_spec,
                timeout=self.settings.timeout,
                env=self._provider_env,
                prices=PriceBook(self.settings.prices),
            )
        except ConfigError as exc:
            raise self.side.usage_error(f"judge: {exc}") from None
        if calls.store.replay_only:
            from pytest_omk.execute.replay_only import ReplayOnly

            self._judge_executor = ReplayOnly(self._judge_executor)
        return LLMJudge(
            calls,
            self._judge_executor,
            model=self.settings.judge_model,
            threshold=self.settings.rubric_threshold,
            repeat=self.settings.judge_repeat,
            failure=self.settings.judge_failure,
            response_format=self.settings.judge_response_format,
            max_tokens=self.settings.max_tokens,
        )

    @property
    def scrubber(self) -> Scrubber:
        """The one secret scrubber of the run (built on the main thread; final once calls exist).

        It reuses the recording store's environment snapshot and adds the MCP servers' tokens
        (URL resolver and agent), so every sink hides the same values.
        """
        if self._scrubber is not None:  # asked for every report: the common case comes first
            return self._scrubber
        from pytest_omk.recordings.scrub import Scrubber

        extra: list[str] = []
        if self._resolver is not None:
            extra.extend(self._resolver.secrets)
        if self._executor is not None:
            extra.extend(self._executor.secrets)
        if self._stages is None:
            return Scrubber.from_environment(environment_snapshot(), extra)
        self._scrubber = Scrubber.from_environment(self._stages.calls.store.environment, extra)
        return self._scrubber

    async def aclose(self) -> None:
        """Close the executors' clients."""
        for executor in (self._executor, self._judge_executor):
            if executor is not None:
                await executor.aclose()
        if self._resolver is not None:
            await self._resolver.aclose()

    def close_app(self) -> None:
        """Stop an app's gateway and restore the provider variables (after the calls have ended)."""
        self.model.close()
