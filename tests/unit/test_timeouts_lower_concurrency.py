"""A timed-out call is a congestion signal, as a 429 is: a server that queues the calls beyond its
slots times out the last ones, and asking again at the same concurrency times them out again."""

from __future__ import annotations

import asyncio
import random

import httpx

from pytest_omk.execute.base import TransientError
from pytest_omk.execute.http_errors import timed_out, transport_error
from pytest_omk.execute.retry import AdaptiveLimiter, RetryPolicy, call_with_retries

URL = httpx.URL("http://127.0.0.1:8080/v1/chat/completions")


async def _no_wait(delay: float) -> None:
    pass


def _retry(limiter: AdaptiveLimiter, first: BaseException) -> None:
    outcomes: list[BaseException | str] = [first, "ok"]

    async def call() -> str:
        outcome = outcomes.pop(0)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    asyncio.run(
        call_with_retries(call, policy=RetryPolicy(), limiter=limiter, sleep=_no_wait, rng=random.Random(0))
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
            call, policy=RetryPolicy(), limiter=limiter, sleep=_no_wait, rng=random.Random(0)
        )
        assert retries == 1
        return result

    async def main() -> None:
        await asyncio.gather(*(one() for _ in range(8)))

    asyncio.run(main())
    assert limiter.current_limit == 4
