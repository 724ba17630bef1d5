"""Every model call made for a sample goes into its record, whether its setup then succeeds, skips
or errors: a sample that ends in an error made its calls all the same.

A rerun's record counts the calls of the attempts before it too, which were made all the same
(``pytest_omk.plugin.attempts``: each setup of an item is an attempt).
"""

from __future__ import annotations

from collections.abc import Callable, Generator

import pytest

from pytest_omk.models.accounting import CallLog, CallRecord
from pytest_omk.plugin.item_records import note_calls
from pytest_omk.plugin.nodes import SampleItem


class CallAccounting:
    """``omk-call-accounting``: once the session's wait has taken an item's runs (or failed to),
    note every call made for the sample in its record.

    ``taken`` gives the calls of a sample whose runs its item took, ``None`` when its setup ended
    before the wait (the calls, if any were started, are then no item's: see ``Launcher.logs``).
    """

    def __init__(self, taken: Callable[[str], CallLog | None]) -> None:
        self._taken = taken
        self._last: tuple[str, tuple[CallRecord, ...]] = ("", ())
        """The last item's calls: a rerun follows its item at once, so one item's are enough."""

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, None, None]:
        """After the item's setup steps, whatever their outcome (registered inside the wrapper
        that drops the taken calls: ``pytest_omk.plugin.item_setup``)."""
        try:
            return (yield)
        finally:
            if isinstance(item, SampleItem) and (log := self._taken(item.nodeid)) is not None:
                note_calls(item, self.calls(item.nodeid, log))

    def calls(self, nodeid: str, log: CallLog) -> CallLog:
        """The calls of every attempt of the item so far: the earlier attempts' and ``log``'s."""
        earlier = self._last[1] if self._last[0] == nodeid else ()
        every = CallLog()  # a view for the record: the ledger has each call already
        for record in (*earlier, *log.records):
            every.add(record)
        self._last = (nodeid, every.records)
        return every
