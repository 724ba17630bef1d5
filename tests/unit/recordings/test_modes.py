"""Record modes: where the mode comes from (CI sets the ini file's aside), and whose recordings
``rewrite`` may prune."""

from __future__ import annotations

import pytest

from pytest_omk.recordings.modes import caller_of, choose_mode


@pytest.mark.parametrize(
    ("cli", "ini", "environ", "mode", "source", "ignored"),
    [
        (None, None, {}, "new_episodes", "default", None),
        (None, "all", {}, "all", "ini key omk_record_mode", None),
        ("once", "all", {}, "once", "--omk-record-mode", None),
        (None, "all", {"OMK_RECORD_MODE": "rewrite"}, "rewrite", "OMK_RECORD_MODE", None),
        # CI: only the flag or the variable make live calls; the ini file's mode is for local runs.
        (None, "new_episodes", {"CI": "true"}, "none", "default", "new_episodes"),
        (None, "off", {"CI": "1"}, "none", "default", "off"),
        ("all", "new_episodes", {"CI": "true"}, "all", "--omk-record-mode", None),
        (None, "new_episodes", {"CI": "true", "OMK_RECORD_MODE": "new_episodes"}, "new_episodes",
         "OMK_RECORD_MODE", None),
        (None, "all", {"CI": "false"}, "all", "ini key omk_record_mode", None),
    ],
)  # fmt: skip
def test_the_mode_and_where_it_came_from(
    cli: str | None, ini: str | None, environ: dict[str, str], mode: str, source: str, ignored: str | None
) -> None:
    choice = choose_mode(cli, ini, environ)
    assert (choice.mode, choice.source, choice.ignored_ini) == (mode, source, ignored)


def test_an_unknown_mode_names_where_it_came_from() -> None:
    with pytest.raises(ValueError, match="OMK_RECORD_MODE must be one of none, once"):
        choose_mode(None, None, {"OMK_RECORD_MODE": "sometimes"})
    with pytest.raises(ValueError, match="ini key omk_record_mode must be one of"):
        choose_mode(None, "sometimes", {})


def test_a_recording_names_its_caller() -> None:
    identity = {"executor": "openai", "endpoint": "http://h:1/v1", "request": {"model": "gpt-4o-mini"}}
    assert caller_of("execute", identity) == ("execute", "openai", "http://h:1/v1", "gpt-4o-mini")
    assert caller_of("judge", {"executor": "echo", "request": {}}) == ("judge", "echo", None, None)
    assert caller_of("fetch", {"url": "https://x"}) is None
