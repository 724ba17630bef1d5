"""xdist: a worker hands the controller the calls it made for samples it never ran (not graded).

Each worker starts the samples the controller sends it ahead of running them; a run cut short
(``-x``, ``--maxfail``) leaves some never run, their calls answered and paid for. The worker sends
those calls (one plain dict per call) in its ``workeroutput``; the controller's summary counts them
with its own (docs/reporting.md, "Every call is counted").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

import pytest

from pytest_omk.models.accounting import CallLog, CallRecord

OUTPUT_KEY = "omk_not_graded"
"""The worker's ``workeroutput`` key: a list of :class:`CallRecord` fields, one dict per call."""


class WorkerNotGraded:
    """On a worker: puts the calls of its untaken samples in its ``workeroutput`` at the end."""

    def __init__(self, config: pytest.Config, untaken: Callable[[], Iterable[CallLog]]) -> None:
        self._config = config
        self._untaken = untaken

    def pytest_sessionfinish(self) -> None:
        """The run loop has ended (and waited for every call sent): hand the calls on."""
        records = [dataclasses.asdict(record) for log in self._untaken() for record in log.records]
        output: dict[str, Any] = getattr(self._config, "workeroutput", {})
        output[OUTPUT_KEY] = records


def worker_log(output: dict[str, Any]) -> CallLog | None:
    """A worker's not-graded calls as one call log (none when it sent none)."""
    records = output.get(OUTPUT_KEY)
    if not isinstance(records, list) or not records:
        return None
    names = {field.name for field in dataclasses.fields(CallRecord)}
    log = CallLog()
    for fields in records:
        # Written by our own worker; kept to the record's fields all the same.
        if isinstance(fields, dict) and fields.get("role") in ("model", "judge"):
            log.add(CallRecord(**{key: value for key, value in fields.items() if key in names}))
    return log
