"""Retries, backoff and the adaptive concurrency limit (instant: ``sleep`` is faked)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Sequence

import httpx
import pytest

from pytest_omk.errors import ExecutionError
from pytest_omk.execute.base import TransientError
from pytest_omk.execute.http_errors import timed_out, transport_error
from pytest_omk.execute.retry import AdaptiveLimiter, RetryPolicy, call_with_retries


class FakeSleep:
    """Records the delays asked for, and what the limiter looked like during each."""

    def __init__(self, limiter: AdaptiveLimiter | None = None) -> None:
        self.delays: list[float] = []
        self.in_flight: list[int] = []
        self.limiter = limiter

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
        if self.limiter is not None:
            self.in_flight.append(self.limiter.in_flight)


def scripted(outcomes: Sequence[BaseException | str]) -> tuple[Callable[[], Awaitable[str]], list[int]]:
    """A call that raises or returns the outcomes in order; also returns its call counter."""
    calls = [0]

    async def call() -> str:
        outcome = outcomes[min(calls[0], len(outcomes) - 1)]
        calls[0] += 1
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    return call, calls


def retry(
    outcomes: Sequence[BaseException | str],
    policy: RetryPolicy,
    limiter: AdaptiveLimiter | None = None,
    sleep: FakeSleep | None = None,
) -> tuple[str, int]:
    call, _ = scripted(outcomes)
    return asyncio.run(
        call_with_retries(
            call,
            policy=policy,
            limiter=limiter or AdaptiveLimiter(4),
            sleep=sleep or FakeSleep(),
            rng=random.Random(1),
        )
    )


def test_success_first_time_uses_no_retries() -> None:
    sleep = FakeSleep()
    assert retry(["ok"], RetryPolicy(), sleep=sleep) == ("ok", 0)
    assert sleep.delays == []


def test_retry_after_is_honoured_and_retries_are_counted() -> None:
    sleep = FakeSleep()
    outcomes: list[BaseException | str] = [
        TransientError("429", retry_after=7, rate_limited=True),
        TransientError("503", retry_after=2),
        "ok",
    ]
    assert retry(outcomes, RetryPolicy(retries=3), sleep=sleep) == ("ok", 2)
    assert sleep.delays == [7, 2]


def test_retry_after_is_capped_by_max_delay() -> None:
    sleep = FakeSleep()
    retry([TransientError("429", retry_after=3600), "ok"], RetryPolicy(max_delay=30), sleep=sleep)
    assert sleep.delays == [30]


def test_backoff_doubles_and_is_capped() -> None:
    sleep = FakeSleep()
    policy = RetryPolicy(retries=6, base_delay=1, max_delay=10, jitter=0)
    with pytest.raises(ExecutionError, match=r"^boom \(after 6 retries\)$"):
        retry([TransientError("boom")], policy, sleep=sleep)
    assert sleep.delays == [1, 2, 4, 8, 10, 10]


def test_backoff_jitter_stays_within_bounds() -> None:
    policy = RetryPolicy(base_delay=1, max_delay=100, jitter=0.25)
    rng = random.Random(5)
    delays = [policy.delay(k, TransientError("x"), rng) for k in range(6) for _ in range(50)]
    for k in range(6):
        chunk = delays[k * 50 : (k + 1) * 50]
        assert all(0.75 * 2**k <= d <= 1.25 * 2**k for d in chunk)
        assert len(set(chunk)) > 1  # actually jittered
    assert RetryPolicy(base_delay=1, max_delay=1.1, jitter=0.25).delay(0, TransientError("x"), rng) <= 1.1


def test_retries_zero_means_one_attempt() -> None:
    call, calls = scripted([TransientError("503 unavailable")])
    sleep = FakeSleep()
    with pytest.raises(ExecutionError, match=r"^503 unavailable \(after 0 retries\)$") as info:
        asyncio.run(
            call_with_retries(call, policy=RetryPolicy(retries=0), limiter=AdaptiveLimiter(1), sleep=sleep)
        )
    assert calls == [1] and sleep.delays == []
    assert not isinstance(info.value, TransientError)  # the outer layers must not retry again
    assert isinstance(info.value.__cause__, TransientError)


@pytest.mark.parametrize("error", [ValueError("bug"), ExecutionError("401 bad key"), KeyboardInterrupt()])
def test_non_transient_errors_propagate_at_once(error: BaseException) -> None:
    call, calls = scripted([error, "ok"])
    limiter = AdaptiveLimiter(2)
    with pytest.raises(type(error)):
        asyncio.run(call_with_retries(call, policy=RetryPolicy(), limiter=limiter, sleep=FakeSleep()))
    assert calls == [1]
    assert limiter.in_flight == 0


def test_cancellation_propagates_and_frees_the_slot() -> None:
    limiter = AdaptiveLimiter(1)

    async def main() -> None:
        started = asyncio.Event()

        async def call() -> str:
            started.set()
            await asyncio.Event().wait()
            return "never"

        task = asyncio.create_task(call_with_retries(call, policy=RetryPolicy(), limiter=limiter))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert limiter.in_flight == 0


def test_slot_is_released_while_backing_off() -> None:
    limiter = AdaptiveLimiter(1)
    sleep = FakeSleep(limiter)
    retry([TransientError("x"), TransientError("x"), "ok"], RetryPolicy(), limiter=limiter, sleep=sleep)
    assert sleep.in_flight == [0, 0]


def test_rate_limit_halves_the_limiter_through_call_with_retries() -> None:
    limiter = AdaptiveLimiter(8)
    retry([TransientError("429", retry_after=0, rate_limited=True), "ok"], RetryPolicy(), limiter=limiter)
    assert limiter.current_limit == 4
    retry([TransientError("500"), "ok"], RetryPolicy(), limiter=limiter)
    assert limiter.current_limit == 4  # only 429 signals congestion


def test_limiter_halves_floors_and_recovers() -> None:
    limiter = AdaptiveLimiter(8, min_limit=2, recover_after=3)
    for expected in (4, 2, 2):
        limiter.on_congestion()
        assert limiter.current_limit == expected
    for _ in range(2):
        limiter.on_success()
    assert limiter.current_limit == 2
    limiter.on_success()
    assert limiter.current_limit == 3
    for _ in range(100):
        limiter.on_success()
    assert limiter.current_limit == 8  # never above the configured limit


def test_a_rate_limit_resets_the_success_run() -> None:
    limiter = AdaptiveLimiter(4, recover_after=2)
    limiter.on_congestion()
    limiter.on_success()
    limiter.on_congestion()
    limiter.on_success()
    assert limiter.current_limit == 1


def test_stale_429s_from_before_a_cut_do_not_cut_again() -> None:
    limiter = AdaptiveLimiter(8)

    async def main() -> None:
        async with limiter.slot() as a, limiter.slot() as b:
            assert a == b
            limiter.on_congestion(a)
            limiter.on_congestion(b)  # same burst: already accounted for
        assert limiter.current_limit == 4
        async with limiter.slot() as c:
            limiter.on_congestion(c)
        assert limiter.current_limit == 2

    asyncio.run(main())


def test_limiter_bounds_concurrency_and_serves_in_order() -> None:
    limiter = AdaptiveLimiter(3)
    active: list[int] = []
    peak = [0]
    order: list[int] = []

    async def worker(i: int) -> None:
        async with limiter.slot():
            order.append(i)
            active.append(i)
            peak[0] = max(peak[0], len(active))
            await asyncio.sleep(0.001)
            active.remove(i)

    async def main() -> None:
        await asyncio.gather(*(worker(i) for i in range(12)))

    asyncio.run(main())
    assert peak[0] == 3
    assert order == list(range(12))
    assert limiter.in_flight == 0


def test_shrunk_limit_applies_to_new_holders() -> None:
    limiter = AdaptiveLimiter(4)
    peak = [0]

    async def worker() -> None:
        async with limiter.slot():
            peak[0] = max(peak[0], limiter.in_flight)
            await asyncio.sleep(0.001)

    async def main() -> None:
        limiter.on_congestion()
        limiter.on_congestion()
        await asyncio.gather(*(worker() for _ in range(10)))

    asyncio.run(main())
    assert limiter.current_limit == 1 and peak[0] == 1


def test_cancelled_waiter_does_not_leak_a_slot() -> None:
    limiter = AdaptiveLimiter(1)

    async def main() -> None:
        async with limiter.slot():
            waiter = asyncio.create_task(limiter.slot().__aenter__())
            await asyncio.sleep(0)
            waiter.cancel()
            await asyncio.sleep(0)
        assert limiter.in_flight == 0
        async with limiter.slot():
            assert limiter.in_flight == 1

    asyncio.run(main())
    assert limiter.in_flight == 0


def test_growth_wakes_waiters() -> None:
    limiter = AdaptiveLimiter(2, recover_after=1)
    limiter.on_congestion()

    async def main() -> list[int]:
        seen: list[int] = []

        async def hold(i: int, gate: asyncio.Event) -> None:
            async with limiter.slot():
                seen.append(limiter.in_flight)
                await gate.wait()

        gate = asyncio.Event()
        tasks = [asyncio.create_task(hold(i, gate)) for i in range(2)]
        await asyncio.sleep(0)
        assert limiter.in_flight == 1
        limiter.on_success()  # limit 1 -> 2: the waiter gets in without anyone leaving
        await asyncio.sleep(0)
        gate.set()
        await asyncio.gather(*tasks)
        return seen

    assert asyncio.run(main()) == [1, 2]


@pytest.mark.parametrize(
    "kwargs", [{"retries": -1}, {"base_delay": -1}, {"max_delay": -0.1}, {"jitter": 1.5}]
)
def test_policy_validation(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        RetryPolicy(**kwargs)  # type: ignore[arg-type]


def test_limiter_validation() -> None:
    with pytest.raises(ValueError):
        AdaptiveLimiter(0)
    assert AdaptiveLimiter(2, min_limit=5).min_limit == 2


# --- timeouts are a congestion signal too -------------------------------------------------------
# A server that queues the calls beyond its slots times out the last ones; asking again at the same
# concurrency times them out again.

URL = httpx.URL("http://127.0.0.1:8080/v1/chat/completions")


def _retry(limiter: AdaptiveLimiter, first: BaseException) -> None:
    outcomes: list[BaseException | str] = [first, "ok"]

    async def call() -> str:
        outcome = outcomes.pop(0)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    asyncio.run(
        call_with_retries(
            call, policy=RetryPolicy(), limiter=limiter, sleep=FakeSleep(), rng=random.Random(0)
        )
    )


def test_a_call_that_timed_out_halves_the_concurrency() -> None:
    limiter = AdaptiveLimiter(8)
    _retry(limiter, timed_out("openai", 30, URL))
    assert limiter.current_limit == 4


def test_an_httpx_timeout_halves_it_too() -> None:
    limiter = AdaptiveLimiter(8)
    _retry(
        limiter, transport_error(httpx.ReadTimeout("read timed out"), provider="openai", timeout=30, url=URL)
    )
    assert limiter.current_limit == 4


def test_other_transient_failures_do_not() -> None:
    limiter = AdaptiveLimiter(8)
    _retry(limiter, TransientError("openai API error 503: busy"))
    _retry(limiter, transport_error(httpx.ConnectError("refused"), provider="openai", timeout=30, url=URL))
    assert limiter.current_limit == 8


def test_the_timeouts_of_one_wave_cut_once() -> None:
    # Calls sent together time out together: one signal, not eight.
    limiter = AdaptiveLimiter(8, recover_after=100)

    async def one() -> str:
        failed = False

        async def call() -> str:
            nonlocal failed
            await asyncio.sleep(0)  # all eight hold a slot before the first one fails
            if not failed:
                failed = True
                raise timed_out("openai", 30, URL)
            return "ok"

        result, retries = await call_with_retries(
            call, policy=RetryPolicy(), limiter=limiter, sleep=FakeSleep(), rng=random.Random(0)
        )
        assert retries == 1
        return result

    async def main() -> None:
        await asyncio.gather(*(one() for _ in range(8)))

    asyncio.run(main())
    assert limiter.current_limit == 4
