"""Replay only: a call made again with no recording of its own replays the last one recorded.

Two parts of a key count "the same call, once more": the take of a rerun (pytest-rerunfailures
sets an item up again: take 1, 2 ...) and the occurrence of an app's repeated call (the same
request sent again within a sample). Recorded live, each is its own file; replayed in CI, a rerun
or a repetition the recording run never made would be a miss, an ERROR that hides the failed check
it reruns. One rule answers both (as vcrpy's ``allow_playback_repeats``): the nearest earlier one
that was recorded replays. Only where a miss would be an error (``--omk-record-mode=none``); the
other modes call live and record the new take.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

Found = TypeVar("Found")
TAKE = ("request", "take")
"""Where an executor call's identity holds its take."""
OCCURRENCE = ("occurrence",)
"""Where an app's model call's identity holds its occurrence."""


def recorded_or_last(
    lookup: Callable[[Mapping[str, Any]], Found | None],
    identity: Mapping[str, Any],
    counter: tuple[str, ...],
    *,
    earlier: bool,
) -> Found | None:
    """What ``lookup`` finds for ``identity``; if nothing and ``earlier`` (replay only), the last
    recorded one before it (:func:`last_recorded`)."""
    found = lookup(identity)
    return last_recorded(lookup, identity, counter) if found is None and earlier else found


def last_recorded(
    lookup: Callable[[Mapping[str, Any]], Found | None], identity: Mapping[str, Any], counter: tuple[str, ...]
) -> Found | None:
    """What ``lookup`` finds for ``identity`` with the number at ``counter`` (the keys leading to a
    take or an occurrence) set to each smaller number in turn, from the nearest down to 0; ``None``
    when none was recorded."""
    number = _at(identity, counter)
    if not isinstance(number, int) or isinstance(number, bool):
        return None
    for earlier in range(number - 1, -1, -1):
        found = lookup(_with(identity, counter, earlier))
        if found is not None:
            return found
    return None


def _at(identity: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = identity
    for key in path:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def _with(identity: Mapping[str, Any], path: tuple[str, ...], number: int) -> dict[str, Any]:
    head, *rest = path
    return {**identity, head: _with(identity[head], tuple(rest), number) if rest else number}
