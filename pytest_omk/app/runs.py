"""Which sample an app's model call belongs to, and which repetition of a request it is.

Every run of an app for one sample (one repeat round, one take) is an :class:`AppRun`, open while
the app answers. A model call reaching the gateway is given to a run:

1. by its URL, when the app used the run's own base URL (its token is random: an unknown token is
   refused by the gateway, never guessed onto a run) (``command:`` scripts always do: their
   ``OPENAI_BASE_URL`` names the run; an in-process app may build its client from
   ``request.model_env``);
2. else to the only run open in this process, when there is one;
3. else to the one open run whose prompt the request's text contains (a prompt shorter than 12
   characters only as a whole string of it, such as the user message);
4. else to none: the call still replays or records by its content, only its file is named
   ``app-...`` and ``rewrite`` leaves it alone.

The attribution names files, counts each sample's calls and blames a replay miss on its sample; it
never enters a recording's key. The repetition count does (``occurrence``): the n-th identical
request of a sample (for calls that name their run) or of the process (for the others) gets its
own recording, so repeats, reruns and an app that asks the same thing twice keep their answers.
"""

from __future__ import annotations

import itertools
import secrets
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_omk.models.accounting import CallLog
from pytest_omk.models.run import ExecutionRequest

UNATTRIBUTED = "app"
"""The label (file-name part) of a call no sample could be found for."""
_MIN_PROMPT = 12
"""Shorter prompts ("hi") say nothing about which sample sent a request."""


@dataclass
class AppRun:
    """One sample attempt's run of the app and what its model calls did."""

    token: str
    label: str
    source: Path | None
    prompt: str
    live: int = 0
    replayed: int = 0
    misses: list[str] = field(default_factory=list)
    log: CallLog | None = None
    """The sample's call log, where the gateway notes each of the run's model calls."""
    refused: list[str] = field(default_factory=list)
    """Live calls the run's budget refused (the sample is then skipped, as the budget skips)."""
    errors: list[str] = field(default_factory=list)
    """What went wrong for its calls that is neither a miss nor the budget (a saturated gateway)."""

    @property
    def scope(self) -> tuple[str, str]:
        """What its occurrences are counted over: the sample (every round and take of it)."""
        return (str(self.source or ""), self.label)


class _Occurrences:
    """Taken and finished repetition numbers per request, within one scope."""

    def __init__(self) -> None:
        self.done: dict[str, set[int]] = {}
        self.taken: dict[str, set[int]] = {}

    def take(self, request: str) -> int:
        busy = self.done.get(request, set()) | self.taken.get(request, set())
        number = next(n for n in itertools.count() if n not in busy)
        self.taken.setdefault(request, set()).add(number)
        return number

    def end(self, request: str, number: int, *, answered: bool) -> None:
        self.taken.get(request, set()).discard(number)
        if answered:
            self.done.setdefault(request, set()).add(number)


class AppRuns:
    """The runs open in this process, and the repetition counts of their requests. Thread-safe:
    runs open on the call loop's thread, calls arrive on the gateway's."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[str, AppRun] = {}
        self._occurrences: dict[tuple[str, str] | None, _Occurrences] = {}

    def open(self, request: ExecutionRequest) -> AppRun:
        """A new run for ``request``; its token (128 random bits) names it in the run's base URL."""
        run = AppRun(
            secrets.token_urlsafe(16), request.sample_id, request.source, request.prompt, log=request.calls
        )
        with self._lock:
            self._open[run.token] = run
        return run

    def close(self, run: AppRun) -> None:
        """The app has answered (or failed) for ``run``: later calls are no longer its own."""
        with self._lock:
            self._open.pop(run.token, None)

    def named(self, token: str) -> AppRun | None:
        """The open run a URL names."""
        with self._lock:
            return self._open.get(token)

    def guess(self, body: Any) -> AppRun | None:
        """The run a call with no run in its URL most likely belongs to (rules 2 and 3 above)."""
        with self._lock:
            runs = list(self._open.values())
        if len(runs) <= 1:
            return runs[0] if runs else None
        strings = list(_strings(body))
        text = "\n".join(strings)
        whole = set(strings)
        # A long prompt inside the request, or a short one that is a whole string of it (the user
        # message itself): "hi" inside "this" says nothing, a message that is exactly "hi" does.
        found = [
            run
            for run in runs
            if (len(run.prompt) >= _MIN_PROMPT and run.prompt in text) or run.prompt in whole
        ]
        return found[0] if len({(r.source, r.label) for r in found}) == 1 else None

    def count(self, run: AppRun, *, replayed: bool) -> None:
        """One answered call of ``run`` (calls may be answered on several threads at once)."""
        with self._lock:
            if replayed:
                run.replayed += 1
            else:
                run.live += 1

    def open_runs(self) -> list[AppRun]:
        """Every run open now (a miss no run could be found for is blamed on each)."""
        with self._lock:
            return list(self._open.values())

    def blamed(self, run: AppRun | None) -> list[AppRun]:
        """Who a failed call is held against: its run, or every open run when none can be named
        (over-blaming costs an ERROR to investigate, under-blaming a pass on an answer the app made
        up after its call failed)."""
        return [run] if run is not None else self.open_runs()

    def saturated(self, message: str) -> None:
        """A connection to the gateway was turned away: it cannot be told whose, so every open run
        may have lost a call."""
        for run in self.open_runs():
            run.errors.append(message)

    def take(self, scope: tuple[str, str] | None, request: str) -> int:
        """The repetition number of ``request`` in ``scope`` (``None``: the process)."""
        with self._lock:
            return self._occurrences.setdefault(scope, _Occurrences()).take(request)

    def end(self, scope: tuple[str, str] | None, request: str, number: int, *, answered: bool) -> None:
        """Release ``number``; an answered call keeps it, a failed one lets its retry take it again."""
        with self._lock:
            self._occurrences.setdefault(scope, _Occurrences()).end(request, number, answered=answered)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
