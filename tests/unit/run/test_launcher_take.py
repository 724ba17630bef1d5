"""A started sample's runs are taken by its item before its calls' log is dropped: the features
that read the log after the wait (``pytest_omk.plugin.call_accounting``) find it in between."""

from __future__ import annotations

import concurrent.futures
from typing import NoReturn

import pytest

from pytest_omk.models.accounting import CallLog, CallRecord
from pytest_omk.run.launcher import Launcher


def _unstartable() -> NoReturn:
    raise AssertionError("no sample is started through the call path here")


@pytest.fixture
def launcher() -> Launcher:
    launcher = Launcher(_unstartable, _unstartable, repeat=1)
    # A started sample as :meth:`Launcher.start` leaves it: its future and its calls' log.
    launcher.futures["s"] = concurrent.futures.Future()
    launcher.logs["s"] = CallLog()
    launcher.logs["s"].add(CallRecord("model", "m"))
    return launcher


def test_the_calls_are_no_item_s_until_the_item_takes_its_runs(launcher: Launcher) -> None:
    assert launcher.taken_calls("s") is None  # started, not taken: a setup that ended early
    launcher.take("s")
    assert "s" not in launcher.futures  # the next sample in the window may start
    taken = launcher.taken_calls("s")
    assert taken is not None and taken.records == (CallRecord("model", "m"),)


def test_forgetting_drops_the_log_and_tells_the_listener_once(launcher: Launcher) -> None:
    told: list[str] = []
    launcher.on_forget = lambda key, log: told.append(key)
    launcher.take("s")
    launcher.forget("s")
    launcher.forget("s")
    assert launcher.taken_calls("s") is None and "s" not in launcher.logs
    assert told == ["s"]


def test_a_sample_never_started_has_no_calls(launcher: Launcher) -> None:
    launcher.take("other")
    assert launcher.taken_calls("other") is None
