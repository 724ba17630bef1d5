"""``JSON.parse`` for any nesting depth: an iterative parser used where Python's recursive one stops.

V8's ``JSON.parse`` is not recursive, so a document nested 3,000 (or 100,000) levels deep parses;
Python's ``json`` raises ``RecursionError`` at about 1,000. This parser keeps an explicit stack,
uses ``json``'s own string scanner (same escapes, same refusal of control characters) and
accepts exactly JSON: only space, tab, CR and LF as whitespace, no ``NaN``/``Infinity``.
"""

from __future__ import annotations

import re
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_LITERALS = {"true": True, "false": False, "null": None}


class JsonSyntaxError(ValueError):
    """The text is not JSON; the message says where."""


def parse_deep(text: str) -> Any:
    """The value of ``text`` as ``JSON.parse`` reads it, without recursion."""
    value, end = _Parser(text).run()
    end = _WS.match(text, end).end()  # type: ignore[union-attr]
    if end != len(text):
        raise JsonSyntaxError(f"unexpected text after the JSON value at position {end}")
    return value


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        # Open containers: (container, pending key of an object or None).
        self.stack: list[tuple[list[Any] | dict[str, Any], str | None]] = []

    def _skip(self, at: int) -> int:
        return _WS.match(self.text, at).end()  # type: ignore[union-attr]

    def _fail(self, what: str, at: int) -> JsonSyntaxError:
        return JsonSyntaxError(f"{what} at position {at}")

    def run(self) -> tuple[Any, int]:
        at = self._skip(0)
        while True:
            value, at, opened = self._value(at)
            if opened:
                continue
            while True:
                if not self.stack:
                    return value, at
                value, at, more = self._place(value, at)
                if more:
                    break

    def _value(self, at: int) -> tuple[Any, int, bool]:
        """Read a scalar (``opened`` False) or open a container (``opened`` True)."""
        text, char = self.text, self.text[at : at + 1]
        if char in ("[", "{"):
            container: list[Any] | dict[str, Any] = [] if char == "[" else {}
            at = self._skip(at + 1)
            close = "]" if char == "[" else "}"
            if text[at : at + 1] == close:
                return container, at + 1, False
            self.stack.append((container, None))
            if char == "{":
                at = self._key(at)
            return None, at, True
        if char == '"':
            value, end = scanstring(text, at + 1, True)
            return value, self._skip(end), False
        number = _NUMBER.match(text, at)
        if number:
            raw = number.group()
            value = float(raw) if any(c in raw for c in ".eE") else int(raw)
            return value, self._skip(number.end()), False
        for word, literal in _LITERALS.items():
            if text.startswith(word, at):
                return literal, self._skip(at + len(word)), False
        raise self._fail("expected a JSON value", at)

    def _key(self, at: int) -> int:
        if self.text[at : at + 1] != '"':
            raise self._fail("expected a property name", at)
        key, end = scanstring(self.text, at + 1, True)
        end = self._skip(end)
        if self.text[end : end + 1] != ":":
            raise self._fail("expected ':'", end)
        container, _ = self.stack[-1]
        self.stack[-1] = (container, key)
        return self._skip(end + 1)

    def _place(self, value: Any, at: int) -> tuple[Any, int, bool]:
        """Put ``value`` into the innermost container; ``more`` when another element follows."""
        container, key = self.stack[-1]
        if isinstance(container, dict):
            container[key] = value  # type: ignore[index]
        else:
            container.append(value)
        close = "}" if isinstance(container, dict) else "]"
        char = self.text[at : at + 1]
        if char == ",":
            at = self._skip(at + 1)
            if isinstance(container, dict):
                at = self._key(at)
            return None, at, True
        if char == close:
            self.stack.pop()
            return container, self._skip(at + 1), False
        raise self._fail(f"expected ',' or '{close}'", at)
