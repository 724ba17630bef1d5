"""Sent calls: a normal end waits for them and sends nothing more; a cancelled sent call is noted.

Driven by events only (an answer is released by the test, never by a clock): the settle bound is
never reached in these tests except where a test gives it 0 seconds on purpose.
"""

from __future__ import annotations

import asyncio

import pytest

from pytest_omk.execute.in_flight import InFlight


def test_settle_waits_for_the_sent_call_and_refuses_the_next_one() -> None:
    async def scenario() -> tuple[list[str], int]:
        flight, events, release = InFlight(), [], asyncio.Event()

        async def answer() -> str:
            events.append("sent")
            await release.wait()
            events.append("answered")
            return "ok"

        async def caller() -> None:
            events.append(await flight.finishing(answer, lambda: events.append("cut"))())

        sent = asyncio.ensure_future(caller())
        while "sent" not in events:
            await asyncio.sleep(0)
        settling = asyncio.ensure_future(flight.settle())
        await asyncio.sleep(0)
        assert not settling.done()  # the sent call is waited for
        release.set()
        left = await settling
        await sent
        # Once settling, nothing more is sent: the next attempt is cancelled before it starts.
        with pytest.raises(asyncio.CancelledError):
            await flight.finishing(answer, lambda: events.append("cut"))()
        return events, left

    events, left = asyncio.run(scenario())
    assert events == ["sent", "answered", "ok"]
    assert left == 0


def test_a_sent_call_cancelled_is_noted_and_counted_as_cut() -> None:
    async def scenario() -> tuple[InFlight, list[str]]:
        flight, events = InFlight(), []

        async def answer() -> str:
            events.append("sent")
            await asyncio.Event().wait()  # never answered
            return "never"

        task = asyncio.ensure_future(flight.finishing(answer, lambda: events.append("cut"))())
        while "sent" not in events:
            await asyncio.sleep(0)
        task.cancel()  # Ctrl-C: nothing waited for
        with pytest.raises(asyncio.CancelledError):
            await task
        return flight, events

    flight, events = asyncio.run(scenario())
    assert events == ["sent", "cut"]
    assert flight.cut == 1


def test_settle_returns_with_the_calls_still_unanswered_at_its_bound() -> None:
    async def scenario() -> int:
        flight, started = InFlight(), asyncio.Event()

        async def answer() -> str:
            started.set()
            await asyncio.Event().wait()
            return "never"

        task = asyncio.ensure_future(flight.finishing(answer, lambda: None)())
        await started.wait()
        left = await flight.settle(bound=0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return left

    assert asyncio.run(scenario()) == 1


def test_once_closed_a_call_granted_a_slot_sends_nothing() -> None:
    """Ctrl-C: the door closes before the cancellations, so a slot one of them frees sends nothing."""

    async def scenario() -> tuple[InFlight, list[str]]:
        flight, events = InFlight(), []

        async def answer() -> str:
            events.append("sent")
            return "ok"

        flight.close()
        with pytest.raises(asyncio.CancelledError):
            await flight.finishing(answer, lambda: events.append("cut"))()
        return flight, events

    flight, events = asyncio.run(scenario())
    assert events == []
    assert flight.cut == 0
