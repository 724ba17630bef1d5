"""A scripted DNS resolver for the safe fetcher's tests."""

from __future__ import annotations

from typing import Any

LOOP = "loop.fixture.dev"
"""A host name the stub resolves to loopback in the tests that allow it."""


class StubDns:
    """Answers from a table (a list, or a list per call for rebinding) and logs every lookup."""

    def __init__(self, table: dict[str, Any]) -> None:
        self.table = table
        self.lookups: list[str] = []

    async def __call__(self, host: str) -> list[str]:
        self.lookups.append(host)
        answer = self.table.get(host)
        if answer is None:
            raise OSError(f"stub DNS has no record for {host}")
        if isinstance(answer, Exception):
            raise answer
        if answer and isinstance(answer[0], list):
            return list(answer[min(self.lookups.count(host), len(answer)) - 1])
        return list(answer)
