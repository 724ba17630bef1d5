"""The cap on stored text (``_util/stored_text.py``)."""

from __future__ import annotations

from pytest_omk._util.stored_text import STORED_TEXT_BYTES, cap_strings, cap_text


def test_text_under_the_cap_is_kept_as_it_is() -> None:
    text = "é" * (STORED_TEXT_BYTES // 2)  # 2 bytes each: exactly the cap
    assert cap_text(text) is text


def test_longer_text_keeps_whole_characters_and_says_it_was_cut() -> None:
    text = "a" + "€" * STORED_TEXT_BYTES  # 3 bytes each: the cap falls inside a character
    capped = cap_text(text)
    kept, note = capped.rsplit("\n", 1)
    assert text.startswith(kept) and len(kept.encode()) <= STORED_TEXT_BYTES
    assert len(kept.encode()) > STORED_TEXT_BYTES - 3
    assert (
        note
        == f"[pytest-omk: cut here; the text has {len(text.encode()):,} bytes, the first {len(kept.encode()):,} are stored]"
    )


def test_a_lone_surrogate_does_not_break_the_cut() -> None:
    capped = cap_text("\ud800" + "x" * 100, limit=50)
    assert capped.startswith("\ud800" + "x" * 47) and "cut here" in capped


def test_every_string_of_a_document_is_capped() -> None:
    long = "y" * (STORED_TEXT_BYTES + 1)
    capped = cap_strings({"a": [long, 3, None], "b": {"c": long}, "d": "short"})
    assert capped["d"] == "short" and capped["a"][1:] == [3, None]
    assert capped["a"][0] == capped["b"]["c"] == cap_text(long)
