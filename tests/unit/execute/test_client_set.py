"""How one endpoint's calls are spread over httpx clients (pytest_omk.execute.client_set)."""

from __future__ import annotations

import asyncio
import contextlib

import httpx

from pytest_omk.execute.client_set import CALLS_PER_CLIENT, ClientSet


def new_set() -> tuple[ClientSet, list[httpx.AsyncClient]]:
    made: list[httpx.AsyncClient] = []

    def make() -> httpx.AsyncClient:
        made.append(httpx.AsyncClient(transport=httpx.MockTransport(lambda request: httpx.Response(200))))
        return made[-1]

    return ClientSet(make), made


def test_a_client_carries_a_few_calls_and_the_first_not_full_takes_the_next() -> None:
    clients, made = new_set()

    async def go() -> None:
        with contextlib.ExitStack() as stack:
            leased = [stack.enter_context(clients.lease()) for _ in range(2 * CALLS_PER_CLIENT + 3)]
            assert len(made) == 3
            counts = [leased.count(client) for client in made]
            assert counts == [CALLS_PER_CLIENT, CALLS_PER_CLIENT, 3]
        # Everything returned: the next call goes to the first client again (its connections are idle).
        with clients.lease() as client:
            assert client is made[0]
        with clients.lease() as first, clients.lease() as second:
            assert first is second is made[0]
        assert len(made) == 3
        await clients.aclose()
        assert all(client.is_closed for client in made)
        assert clients.clients == []

    asyncio.run(go())


def test_a_full_first_client_sends_the_next_call_to_an_earlier_opened_one_before_a_new_one() -> None:
    clients, made = new_set()

    async def go() -> None:
        with contextlib.ExitStack() as first_client:
            for _ in range(CALLS_PER_CLIENT):
                first_client.enter_context(clients.lease())
            with clients.lease() as second:
                assert second is made[1]
            # The second client has nothing in flight, but it is the first one not full.
            with clients.lease() as again:
                assert again is made[1]
        assert len(made) == 2
        await clients.aclose()

    asyncio.run(go())


def test_a_new_loop_gets_new_clients_and_the_warm_up_opens_one() -> None:
    clients, made = new_set()

    async def warm() -> httpx.AsyncClient:
        return clients.first()

    first = asyncio.run(warm())
    assert made == [first]
    second = asyncio.run(warm())  # a fresh loop: the first client belongs to a finished one
    assert second is not first and clients.clients == [second]

    async def close() -> None:
        await clients.aclose()

    asyncio.run(close())
    assert second.is_closed
