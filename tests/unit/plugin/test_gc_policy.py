"""The garbage-collector policy: every pause is undone as it was found."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from pytest_omk.plugin.gc_policy import collections_deferred, collector_paused, young_collections_spaced


@pytest.fixture(autouse=True)
def _restore_gc() -> Iterator[None]:
    enabled, threshold = gc.isenabled(), gc.get_threshold()
    yield
    gc.set_threshold(*threshold)
    (gc.enable if enabled else gc.disable)()


def test_deferred_collections_resume_only_when_they_were_on() -> None:
    gc.enable()
    resume = collections_deferred()
    assert not gc.isenabled()
    resume()
    assert gc.isenabled()
    gc.disable()  # a user (or another plugin) switched it off: resuming must not switch it on
    resume_off = collections_deferred()
    resume_off()
    assert not gc.isenabled()


def test_deferred_collections_still_collect_when_asked() -> None:
    # pytest's own gc.collect() at exit still finds garbage cycles while automatic collection waits.
    resume = collections_deferred()
    try:
        cycle: list[object] = []
        cycle.append(cycle)
        del cycle
        assert gc.collect() >= 1
    finally:
        resume()


def test_young_collections_are_spaced_then_restored() -> None:
    before = gc.get_threshold()
    with young_collections_spaced(12_345):
        assert gc.get_threshold()[0] == max(before[0], 12_345)
        assert gc.get_threshold()[1:] == before[1:]
    assert gc.get_threshold() == before


def test_a_paused_collection_freezes_its_survivors() -> None:
    gc.enable()
    frozen = gc.get_freeze_count()
    with collector_paused():
        assert not gc.isenabled()
        kept = [[i] for i in range(1000)]  # lists are always tracked (small dicts may not be)
    assert gc.isenabled()
    assert gc.get_freeze_count() >= frozen + len(kept)
