r"""Regular expressions JavaScript certainly compiles, recognized without V8 (no pytest here).

Loading a sample file asks, for each ``regex`` assertion, whether ``new RegExp(pattern, flags)``
compiles, and V8 answers. Starting V8 to answer costs about 0.1 s (its library, asyncio, a
context), the largest part of collecting a small file: most patterns are plain (``\bfoo\b``,
``^\d{3}-\d{4}$``, ``(yes|no)``), so they are recognized here and V8 is asked only about the
others. The grammar is a small part of what every JavaScript engine accepts without the ``u`` and
``v`` flags; the recognizer only ever says "certainly compiles". Anything outside it (lookarounds,
named groups, backreferences, ``\x``/``\u``/``\c``/``\p`` escapes, a brace that is not a
quantifier, the ``u`` or ``v`` flag, characters past U+D7FF, nesting deeper than
:data:`MAX_DEPTH`) goes to V8, which also writes every error message. A property test checks
against V8 that whatever is accepted here compiles there.
"""

from __future__ import annotations

from pytest_omk.js.regex import VALID_FLAGS

PLAIN_FLAGS = VALID_FLAGS - {"u", "v"}
"""Flags that leave the pattern syntax as without flags (``u`` and ``v`` make it stricter)."""
MAX_DEPTH = 32
"""Deeper group nesting is left to V8 (the recognizer recurses once per group)."""

_SYNTAX = frozenset("^$\\.*+?()[]{}|")
_CLASS_ESCAPES = frozenset("dDwWsS")
_CONTROL_ESCAPES = {"n": 10, "r": 13, "t": 9, "f": 12, "v": 11}
_ESCAPED_LITERALS = _SYNTAX | {"/", "-"}
_QUANTIFIERS = frozenset("*+?{")
_LAST_PLAIN = 0xD7FF  # beyond: surrogates and astral characters, which non-u patterns split in two


class _Refused(Exception):
    """Outside the recognized grammar (not necessarily invalid: V8 decides)."""


def certainly_compiles(pattern: str, flags: str) -> bool:
    """Whether ``new RegExp(pattern, flags)`` certainly compiles (``False``: ask V8)."""
    if not set(flags) <= PLAIN_FLAGS or len(set(flags)) != len(flags):
        return False
    if any(ord(char) > _LAST_PLAIN for char in pattern):
        return False
    try:
        end = _Parser(pattern).disjunction(0, 0)
    except _Refused:
        return False
    return end == len(pattern)


class _Parser:
    def __init__(self, pattern: str) -> None:
        self.p = pattern

    def peek(self, i: int) -> str:
        return self.p[i] if i < len(self.p) else ""

    def disjunction(self, i: int, depth: int) -> int:
        """Alternatives separated by ``|`` from ``i``; the index of the ``)`` or end after them."""
        while True:
            i = self.alternative(i, depth)
            if self.peek(i) != "|":
                return i
            i += 1

    def alternative(self, i: int, depth: int) -> int:
        while i < len(self.p) and self.p[i] not in "|)":
            i, quantifiable = self.atom(i, depth)
            if self.peek(i) in _QUANTIFIERS:
                if not quantifiable:
                    raise _Refused  # ^* and \b+ are "nothing to repeat" in JavaScript
                i = self.quantifier(i)
        return i

    def atom(self, i: int, depth: int) -> tuple[int, bool]:
        """One atom at ``i``: the index after it, and whether a quantifier may follow it."""
        char = self.p[i]
        if char in "^$":
            return i + 1, False
        if char == ".":
            return i + 1, True
        if char == "\\":
            escaped = self.peek(i + 1)
            if escaped in ("b", "B"):
                return i + 2, False  # word boundaries: assertions, not quantifiable
            _escape_value(escaped)
            return i + 2, True
        if char == "[":
            return self.char_class(i + 1), True
        if char == "(":
            if depth >= MAX_DEPTH:
                raise _Refused
            if self.peek(i + 1) == "?":
                if self.peek(i + 2) != ":":
                    raise _Refused  # lookarounds and named groups: left to V8
                i += 2
            end = self.disjunction(i + 1, depth + 1)
            if self.peek(end) != ")":
                raise _Refused
            return end + 1, True
        if char in _SYNTAX:  # * + ? { } ] with nothing to repeat, or a stray brace
            raise _Refused
        return i + 1, True

    def quantifier(self, i: int) -> int:
        if self.p[i] == "{":
            close = self.p.find("}", i)
            if close < 0:
                raise _Refused
            low, _, high = self.p[i + 1 : close].partition(",")
            if not _small_number(low) or (high and not _small_number(high)):
                raise _Refused
            if high and int(high) < int(low):
                raise _Refused  # "numbers out of order"
            i = close + 1
        else:
            i += 1
        return i + 1 if self.peek(i) == "?" else i

    def char_class(self, i: int) -> int:
        """A class from after its ``[``; the index after its ``]``."""
        if self.peek(i) == "^":
            i += 1
        if self.peek(i) == "]":
            raise _Refused  # [] and [^]: valid, but rare enough to leave to V8
        while True:
            if i >= len(self.p):
                raise _Refused
            if self.p[i] == "]":
                return i + 1
            i, low = self.class_atom(i)
            if self.peek(i) == "-" and self.peek(i + 1) not in ("]", ""):
                i, high = self.class_atom(i + 1)
                if low is None or high is None or high < low:
                    raise _Refused  # a class escape in a range, or "range out of order"

    def class_atom(self, i: int) -> tuple[int, int | None]:
        r"""One class atom at ``i``: the index after it and its code point (``None``: ``\d`` and kin)."""
        char = self.p[i]
        if char != "\\":
            return i + 1, ord(char)
        escaped = self.peek(i + 1)
        if escaped == "b":
            return i + 2, 8  # backspace, inside a class
        return i + 2, _escape_value(escaped)


def _escape_value(escaped: str) -> int | None:
    r"""The code point of the one-character escape ``\<escaped>`` (``None``: ``\d`` and kin);
    :class:`_Refused` for any other (and for a pattern ending in a backslash, ``escaped == ""``)."""
    if escaped in _CLASS_ESCAPES:
        return None
    if escaped in _CONTROL_ESCAPES:
        return _CONTROL_ESCAPES[escaped]
    if escaped in _ESCAPED_LITERALS:
        return ord(escaped)
    raise _Refused


def _small_number(digits: str) -> bool:
    return 0 < len(digits) <= 9 and digits.isascii() and digits.isdigit()
