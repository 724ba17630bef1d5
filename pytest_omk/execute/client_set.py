"""The httpx clients one endpoint's calls go through, a few calls per client (no pytest here).

httpcore's connection pool re-examines every connection it holds each time a request starts or
ends, and for each idle one counts the whole pool again: work that grows with the square of the
connections, and a system call per idle connection. One client carrying every call of a run at
concurrency 120 spent most of its time there: replies sat unread and at most 6 calls of the 120
were in flight. So a run's calls are spread over several clients, each carrying at most
:data:`CALLS_PER_CLIENT` at once (another client is opened only when every open one is full); the
pools stay small, and every connection is kept for the next call (see :data:`POOL_LIMITS`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import httpx

CALLS_PER_CLIENT = 8
"""Calls one client carries at once; its pool then holds at most this many connections."""

POOL_LIMITS = httpx.Limits(max_connections=None, max_keepalive_connections=None)
"""No cap of the client's own: :class:`ClientSet` gives a client at most :data:`CALLS_PER_CLIENT`
calls, so its pool never holds more connections, and each one is kept for the next call. With
httpx's defaults (20 connections kept idle) and more calls in flight than that, httpcore closed
each connection as its call ended (it compares every connection of the pool, busy or idle, with
the keep-alive limit): nearly every call opened a new one, a TCP and TLS handshake per call. Idle
connections still close after httpx's keep-alive expiry (5 s)."""


@dataclass
class _Slot:
    client: httpx.AsyncClient
    in_flight: int = 0


class ClientSet:
    """The clients of one endpoint on the running loop, built by ``make`` when needed.

    Clients belong to the loop they were opened on: a call on another loop (a new ``asyncio.run``)
    starts a fresh set, and the old clients are left to be collected with their loop.
    """

    def __init__(self, make: Callable[[], httpx.AsyncClient]) -> None:
        self._make = make
        self._slots: list[_Slot] = []
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def clients(self) -> list[httpx.AsyncClient]:
        """The clients open now, the first one first."""
        return [slot.client for slot in self._slots]

    def first(self) -> httpx.AsyncClient:
        """The first client on the running loop (opened now if need be: the warm-up)."""
        return self._current()[0].client

    def _current(self) -> list[_Slot]:
        loop = asyncio.get_running_loop()
        if self._loop is not loop or not self._slots or self._slots[0].client.is_closed:
            self._slots = [_Slot(self._make())]
            self._loop = loop
        return self._slots

    @contextlib.contextmanager
    def lease(self) -> Iterator[httpx.AsyncClient]:
        """A client for one call: the first one not full, or a new one when every client is full.

        The first that is not full, not the least busy: a later client then takes calls only while
        every earlier one is full, so the connections of all the clients together never outnumber
        the most calls ever in flight at once (the least busy client would open a connection of its
        own while an earlier client had one idle).
        """
        slots = self._current()
        slot = next((s for s in slots if s.in_flight < CALLS_PER_CLIENT), None)
        if slot is None:
            slot = _Slot(self._make())
            slots.append(slot)
        slot.in_flight += 1
        try:
            yield slot.client
        finally:
            slot.in_flight -= 1

    async def aclose(self) -> None:
        """Close every client (those opened on another, finished loop are just dropped)."""
        slots, loop = self._slots, self._loop
        self._slots, self._loop = [], None
        same_loop = loop is asyncio.get_running_loop()
        for slot in slots:
            if same_loop:
                await slot.client.aclose()
            else:
                with contextlib.suppress(Exception):
                    await slot.client.aclose()
