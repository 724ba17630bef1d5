"""Starting samples' model calls: the call loop, its warm-up, and one future per started sample.

The pytest layer decides *which* samples start and *when* (the prefetch window, an xdist worker's
queue, an item's own setup); this module owns *how*: each sample's runs (every repeat) go to the
call loop once, keyed by the item's id, and stay there until the item takes them. It is also where
a concern of the whole call path that is not one call's goes (a cost budget that stops new
samples from starting, say): every sample passes through :meth:`Launcher.start`.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
from collections.abc import Callable, Coroutine, Iterable
from typing import TYPE_CHECKING, Any, Protocol

from pytest_omk.execute.tls import SharedTls
from pytest_omk.models.accounting import CallLog

if TYPE_CHECKING:
    from pytest_omk.execute.base import Executor
    from pytest_omk.execute.in_flight import InFlight
    from pytest_omk.execute.progress import CallProgress
    from pytest_omk.grade.sequential import StopRule
    from pytest_omk.models.run import SamplePlan, SampleRun
    from pytest_omk.run.cutoff import Tracked
    from pytest_omk.run.loop import CallRunner
    from pytest_omk.run.pipeline import Stages

RunsFuture = concurrent.futures.Future[list["SampleRun"]]


class RunGrading(Protocol):
    """How a sample's runs are graded as they end, to stop repeating once the rule has decided
    (``--omk-repeat auto``: :class:`pytest_omk.plugin.auto_repeat.AutoRepeat`)."""

    rule: StopRule

    def passed(self, plan: SamplePlan) -> Callable[[SampleRun], bool]:
        """Whether one of ``plan``'s runs passed (asked when the sample starts, called off the loop)."""
        ...


class Launcher:
    """Starts each sample's runs on the call loop (built on first use) and keeps their futures.

    ``stages`` builds the call path when the first sample starts; ``repeat`` is ``--omk-repeat``
    (the most runs when :attr:`grading` decides how many).
    """

    def __init__(
        self,
        stages: Callable[[], Stages],
        progress: Callable[[], CallProgress],
        repeat: int,
    ) -> None:
        self._stages = stages
        self._progress = progress
        self._repeat = repeat
        self.grading: RunGrading | None = None
        """Set by ``--omk-repeat auto``: each sample runs until its grades decide, at most ``repeat`` times."""
        self._runner: CallRunner | None = None
        self._tls = SharedTls()
        self.futures: dict[str, RunsFuture] = {}
        """The started samples' runs by item id, until their item takes them."""
        self.logs: dict[str, CallLog] = {}
        """The started samples' model calls by item id (every call, the judge's too), until taken."""
        self.tasks: dict[str, Tracked] = {}
        """The started samples' tasks on the call loop, until taken (a sample's calls can be cut)."""
        self._in_flight: InFlight | None = None
        self.on_forget: Callable[[str, CallLog], None] | None = None
        """Told each call log as it is dropped (``--omk-store-durations`` sums its latency)."""

    def runner(self) -> CallRunner:
        """The call loop, started on first use."""
        if self._runner is None:
            from pytest_omk.run.loop import CallRunner

            self._runner = CallRunner()
        return self._runner

    def warm_up(self, modules: Iterable[str], *, connects: bool) -> None:
        """Start the loop, then build the TLS context (when the run ``connects`` anywhere) and
        import ``modules`` on it while the main thread goes on collecting (once)."""
        if self._runner is not None:
            return
        from pytest_omk.run.loop import preload, preload_transport

        runner = self.runner()
        # The TLS context first: it needs only httpx, and the main thread meanwhile imports the
        # models the call path needs. A replay-only run connects nowhere: no CA bundle to load.
        if connects:
            runner.submit(preload_transport(self._tls))
        runner.submit(preload(tuple(modules)))

    def open_clients(self, executors: list[Executor], *, connects: bool) -> None:
        """Share the TLS context (before any call is submitted) and, when the run ``connects``
        anywhere, open the executors' HTTP clients early."""
        from pytest_omk.run.loop import share_tls, warm_clients

        share_tls(executors, self._tls)
        if connects:  # nothing may be opened in a replay-only run
            self.runner().submit(warm_clients(executors))

    def start(self, key: str, plan: SamplePlan) -> RunsFuture:
        """Start ``plan``'s runs under ``key`` (once: a started sample's future is returned again)."""
        if key in self.futures:
            return self.futures[key]
        from pytest_omk.run.cutoff import Tracked, tracked
        from pytest_omk.run.pipeline import run_auto, run_repeated

        stages = self._stages()
        self._in_flight = stages.calls.in_flight
        log = self.logs[key] = CallLog(stages.calls.ledger)  # the sample's calls, in the run's ledger
        if self.grading is not None:
            runs = run_auto(plan, stages, self.grading.rule, self.grading.passed(plan), log)
        else:
            runs = run_repeated(plan, stages, self._repeat, log)
        slot = self.tasks[key] = Tracked()
        future = self.runner().submit(tracked(runs, slot))
        self.futures[key] = future
        progress = self._progress()
        progress.sample_started()
        future.add_done_callback(
            lambda done: progress.sample_finished(
                failed=not done.cancelled() and done.exception() is not None
            )
        )
        return future

    def take(self, key: str) -> None:
        """A sample's item took its runs: drop their future (the next sample may start). The log of
        its calls stays, as :meth:`taken_calls`, until :meth:`forget`."""
        self.futures.pop(key, None)

    def taken_calls(self, key: str) -> CallLog | None:
        """The calls of a sample whose item took its runs; ``None`` before that, or once forgotten."""
        return None if key in self.futures else self.logs.get(key)

    def forget(self, key: str) -> None:
        """Drop a sample's future and call log: its item holds the result now, or a rerun will
        start afresh."""
        self.futures.pop(key, None)
        self.tasks.pop(key, None)
        log = self.logs.pop(key, None)
        if log is not None and self.on_forget is not None:
            self.on_forget(key, log)

    def cut(self, key: str, *, wait: float) -> None:
        """End a started sample's calls now (its time ran out) and wait for them to end, at most
        ``wait`` seconds; a call already sent is counted as failed in its log."""
        future, slot = self.futures.get(key), self.tasks.get(key)
        if future is None or future.done():
            return
        if slot is None or slot.task is None:  # its task has not run yet: no call was sent
            future.cancel()
            return
        from pytest_omk.run.cutoff import cut_off

        with contextlib.suppress(concurrent.futures.TimeoutError):
            self.runner().submit(cut_off(slot.task)).result(wait)

    def cancel_pending(self, *, settle: bool = True) -> None:
        """End every call of the samples still started (``-x``, a budget stop, Ctrl-C, the end of the
        run loop). ``settle`` (a run that ends normally): first send nothing more and wait, on
        events and within :data:`~pytest_omk.execute.in_flight.SETTLE_SECONDS`, for the calls
        already sent, which are paid for: they are noted in their samples' logs (kept in
        :attr:`logs`: the calls of samples not graded). Ctrl-C (``settle=False``) waits for none."""
        if self._runner is None:
            return
        if self._in_flight is not None and settle:
            from pytest_omk.execute.in_flight import SETTLE_SECONDS

            # A loop stuck past the bound must not hold the run: the bound is the wait's too.
            with contextlib.suppress(concurrent.futures.TimeoutError):
                self._runner.submit(self._in_flight.settle()).result(timeout=SETTLE_SECONDS + 5)
        elif self._in_flight is not None:
            self._in_flight.close()  # before cancelling: a slot freed must send nothing more
        self._runner.cancel_pending()

    @property
    def cut_calls(self) -> int:
        """Calls sent and cancelled before their answer (Ctrl-C, or the settle bound ran out)."""
        return self._in_flight.cut if self._in_flight is not None else 0

    def close(self, cleanup: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """End every call and the loop; ``cleanup()`` gives the coroutine that closes the clients
        (asked for only when the loop was started)."""
        if self._runner is not None:
            if self._in_flight is not None:
                self._in_flight.close()
            self._runner.close(cleanup())
            self._runner = None
