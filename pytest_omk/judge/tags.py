"""Defusing the judge prompt's data tags inside user text, look-alikes included.

The judge's prompt wraps each piece of user-controlled text in ``<omk:NAME>…</omk:NAME>``. A model
output that spells ``</omk:output>`` could close its section and append instructions of its own,
so every tag opener inside user text is defused (``<`` becomes ``&lt;``, :func:`neutralise`).

A spelling counts as a tag when a reader would take it for one: the text is read as its NFKC form
with Unicode's default-ignorable characters and combining marks left out, so a zero-width space,
a soft hyphen or a word joiner inside the tag, and full-width ``＜``, ``／``, ``ｏｍｋ``, ``：``, are
seen as what they look like. The defused character is the one in the original text; the rest of
the text is passed on unchanged (normalising all of it would change what the judge reads).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from pytest_omk._util.visible import DEFAULT_IGNORABLE

_DELIMITER = re.compile(r"<(?=\s*/?\s*omk\s*:)", re.IGNORECASE)
"""An omk tag opener in plain ASCII text: ``<omk:``, ``</OMK :``, ``< / omk:``..."""
_OPENERS = re.compile("[<\ufe64\uff1c]")
"""Every character whose NFKC form is ``<`` (checked over all of Unicode when this was written)."""
_SKIPPED = frozenset({"Mn", "Me", "Cf"})
"""Combining marks and format characters, read as nothing (they draw on or between letters)."""


def neutralise(text: str) -> str:
    """``text`` with every omk tag opener, however spelled, defused (``<`` → ``&lt;``)."""
    if text.isascii():  # NFKC leaves ASCII as it is, and it holds no ignorable character
        return _DELIMITER.sub("&lt;", text)
    cuts = [match.start() for match in _OPENERS.finditer(text) if _tag_follows(text, match.end())]
    if not cuts:
        return text
    parts, last = [], 0
    for at in cuts:
        parts += [text[last:at], "&lt;"]
        last = at + 1
    parts.append(text[last:])
    return "".join(parts)


def _tag_follows(text: str, start: int) -> bool:
    """Whether ``text`` from ``start`` reads ``[spaces][/][spaces]omk[spaces]:`` (any case).

    It reads only as far as the first character that cannot continue a tag: over the whole text
    the work stays linear (a run of spaces ends at the next ``<`` at the latest).
    """
    read = _as_read(text, start)
    char = _after_spaces(read)
    if char == "/":
        char = _after_spaces(read)
    for letter in "omk":
        if char is None or char.casefold() != letter:
            return False
        char = next(read, None)
    if char is not None and char.isspace():
        char = _after_spaces(read)
    return char == ":"


def _after_spaces(read: Iterator[str]) -> str | None:
    for char in read:
        if not char.isspace():
            return char
    return None


def _as_read(text: str, start: int) -> Iterator[str]:
    """The characters of ``text`` from ``start`` as a reader takes them (see the module docstring)."""
    for index in range(start, len(text)):
        char = text[index]
        if char.isascii():
            yield char
        elif not DEFAULT_IGNORABLE.match(char) and unicodedata.category(char) not in _SKIPPED:
            yield from unicodedata.normalize("NFKC", char)
