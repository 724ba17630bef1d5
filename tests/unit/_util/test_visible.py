"""The one escaper: what it makes visible, what it keeps, and the lossless JSON form."""

from __future__ import annotations

import io
import json
import re
import unicodedata

import pytest

from pytest_omk._util.visible import (
    DEFAULT_IGNORABLE,
    UNSAFE,
    CiInert,
    JsonVisibleWriter,
    json_visible,
    visible,
    workflow_inert,
)


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b]0;title\x07", "\\x1b]0;title\\x07"),
        ("\x9b31m", "\\x9b31m"),
        ("back\x08space\rreturn", "back\\x08space\\x0dreturn"),
        ("\u202e~ fr- mr", "\\u202e~ fr- mr"),
        ("\u2066isolate\u2069", "\\u2066isolate\\u2069"),
        ("zero\u200bwidth\ufeff", "zero\\u200bwidth\\ufeff"),
        ("soft\u00adhyphen", "soft\\xadhyphen"),
        ("tag \U000e0041\U000e007f", "tag \\U000e0041\\U000e007f"),
        ("line\u2028separator", "line\\u2028separator"),
    ],
)
def test_control_bidi_and_invisible_characters_are_made_visible(raw: str, shown: str) -> None:
    assert visible(raw) == shown


@pytest.mark.parametrize(
    "kept",
    [
        "plain text",
        "tab\tand\nnewline",
        "emoji 👨\u200d👩\u200d👧 ❤\ufe0f",
        "ZWNJ in Persian: می\u200cخواهم",
        "日本語",
    ],
)
def test_ordinary_text_is_kept(kept: str) -> None:
    assert visible(kept) == kept


def test_every_format_character_but_the_joiners_is_unsafe() -> None:
    joiners = {"\u200c", "\u200d"}
    shaping = {
        "\u0600",
        "\u0601",
        "\u0602",
        "\u0603",
        "\u0604",
        "\u0605",
        "\u06dd",
        "\u070f",
        "\u0890",
        "\u0891",
    }
    shaping |= {"\u08e2", "\U000110bd", "\U000110cd"}  # visible marks spanning digits
    missed = [
        f"U+{cp:04X}"
        for cp in range(0x110000)
        if unicodedata.category(chr(cp)) in ("Cc", "Cf", "Zl", "Zp")
        and chr(cp) not in "\t\n"
        and chr(cp) not in joiners | shaping
        and not UNSAFE.match(chr(cp))
    ]
    assert missed == []


def test_the_default_ignorable_set_holds_what_a_renderer_draws_as_nothing() -> None:
    for char in "\u00ad\u200b\u200c\u200d\u2060\ufeff\u180e\U000e0041\ufe0f":
        assert DEFAULT_IGNORABLE.match(char), f"U+{ord(char):04X}"
    assert not DEFAULT_IGNORABLE.match("a")


def test_json_visible_keeps_the_document_and_hides_nothing() -> None:
    document = {"output": "\u202e~ fr- mr \x9b31m \x7f \U000e0041 ok", "n": 1}
    dumped = json_visible(json.dumps(document, ensure_ascii=False))
    assert json.loads(dumped) == document
    assert not UNSAFE.search(dumped)
    assert "\\u202e" in dumped and "\\udb40\\udc41" in dumped


def test_the_json_writer_escapes_what_json_dump_streams() -> None:
    handle = io.StringIO()
    writer = JsonVisibleWriter(handle)
    json.dump({"a": "\u2066x\u2069", "b": ["\u202e" * 10] * 20_000}, writer, ensure_ascii=False)
    writer.flush()
    assert json.loads(handle.getvalue()) == {"a": "\u2066x\u2069", "b": ["\u202e" * 10] * 20_000}
    assert handle.getvalue().startswith('{"a": "\\u2066x\\u2069"') and "\u202e" not in handle.getvalue()


@pytest.mark.parametrize(
    ("raw", "inert"),
    [
        ("::error::x", r"\x3a:error::x"),
        ("  ::warning::indented", r"  \x3a:warning::indented"),
        ("ok\n\t::add-mask::v", "ok\n\t" + r"\x3a:add-mask::v"),
        ("a\r::stop-commands::T", "a\r" + r"\x3a:stop-commands::T"),
        ("\u00a0::set-output", "\u00a0" + r"\x3a:set-output"),
        ("x ##[error]y ###[z]", r"x #\x23[error]y ##\x23[z]"),
        ("a::b and c :: d", "a::b and c :: d"),  # not at a line's start: inert already
    ],
)
def test_workflow_commands_are_neutralised_and_still_read(raw: str, inert: str) -> None:
    shown = workflow_inert(raw)
    assert shown == inert
    assert "##[" not in shown
    assert not any(line.lstrip().startswith("::") for line in re.split(r"[\r\n]", shown))


def test_ci_inert_follows_the_environment() -> None:
    text = "::error::x\nsection_start:1:name"
    assert CiInert.from_environment({})(text) == text
    assert not CiInert.from_environment({"GITHUB_ACTIONS": "false"})
    assert (
        CiInert.from_environment({"GITHUB_ACTIONS": "true"})(text) == "\\x3a:error::x\nsection_start:1:name"
    )
    assert CiInert.from_environment({"GITLAB_CI": "true"})(text) == "::error::x\nsection\\x5fstart:1:name"
