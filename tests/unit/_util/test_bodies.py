"""The one capped body reader shared by the provider client and the safe fetcher."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from pytest_omk._util.bodies import read_capped


class TooLarge(Exception):
    pass


def test_a_body_within_the_limit_is_returned_whole() -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for part in (b"ab", b"cd", b"e"):
            yield part

    assert asyncio.run(read_capped(chunks(), 5, TooLarge)) == b"abcde"


def test_reading_stops_at_the_first_chunk_past_the_limit() -> None:
    pulled: list[int] = []

    async def endless() -> AsyncIterator[bytes]:
        while True:
            pulled.append(1)
            yield b"x" * 1000

    with pytest.raises(TooLarge):
        asyncio.run(read_capped(endless(), 2500, TooLarge))
    assert len(pulled) == 3
