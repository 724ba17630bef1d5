r"""Translate JavaScript regular expressions to Python's :mod:`re`.

Sample files write ``regex`` patterns in JavaScript syntax (the format's owner runs
``new RegExp(pattern, flags || "i")``). Python's engine differs in ways that silently change
verdicts, so patterns are rewritten token by token:

* ``\d``, ``\w``, ``\b`` are ASCII-only in JavaScript (Unicode in Python); ``\s`` uses the
  JavaScript whitespace set.
* ``.`` excludes ``\r``, U+2028 and U+2029 as well as ``\n`` unless the ``s`` flag is set.
* ``$`` without ``m`` only matches at the very end (Python also matches before a final ``\n``).
* ``(?<name>...)`` and ``\k<name>`` become ``(?P<name>...)`` and ``(?P=name)``.
* ``[^]`` matches anything and ``[]`` matches nothing; an unknown escape such as ``\A`` is the
  literal letter (JavaScript's non-Unicode mode).
* Flags: ``i``, ``m``, ``s`` map to Python flags; ``g`` and ``d`` do not change a test; ``y``
  (sticky) anchors the match at index 0; ``u`` and ``v`` are accepted.

Constructs Python cannot express (variable-length lookbehind, ``\p{...}``) raise
:class:`JsRegexError` so the sample file is rejected at load time instead of misbehaving.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pytest_omk.js.text import JS_WHITESPACE

VALID_FLAGS = frozenset("dgimsuvy")
_WORD = "A-Za-z0-9_"
_WS_CLASS = "".join(f"\\u{ord(c):04x}" for c in JS_WHITESPACE)
_LINE_TERMINATORS = "\\n\\r\\u2028\\u2029"
_SIMPLE_ESCAPES = {"n": "\\n", "r": "\\r", "t": "\\t", "v": "\\x0b", "f": "\\x0c", "0": "\\x00"}
_CLASS_SHORTHAND = {"d": "0-9", "w": _WORD, "s": _WS_CLASS}
_SHORTHAND = {
    "d": "[0-9]",
    "D": "[^0-9]",
    "w": f"[{_WORD}]",
    "W": f"[^{_WORD}]",
    "s": f"[{_WS_CLASS}]",
    "S": f"[^{_WS_CLASS}]",
    "b": f"(?:(?<=[{_WORD}])(?![{_WORD}])|(?<![{_WORD}])(?=[{_WORD}]))",
    "B": f"(?:(?<=[{_WORD}])(?=[{_WORD}])|(?<![{_WORD}])(?![{_WORD}]))",
}


class JsRegexError(ValueError):
    """The pattern or its flags are invalid, or use a construct Python cannot run."""


@dataclass(frozen=True)
class JsRegex:
    """A compiled JavaScript regex with its ``test()`` semantics."""

    source: str
    flags: str
    compiled: re.Pattern[str]
    sticky: bool

    def test(self, text: str) -> bool:
        """Return what JavaScript's ``RegExp.prototype.test`` returns on a fresh regex."""
        if self.sticky:
            return self.compiled.match(text) is not None
        return self.compiled.search(text) is not None


def compile_js_regex(pattern: str, flags: str | None = None) -> JsRegex:
    """Compile ``pattern`` as ``new RegExp(pattern, flags || "i")`` would.

    An absent or empty ``flags`` means ``"i"``; any other flags string replaces it entirely.
    """
    effective = flags or "i"
    bad = [f for f in effective if f not in VALID_FLAGS]
    if bad:
        raise JsRegexError(f"unknown regex flag {bad[0]!r} (allowed: d g i m s u v y)")
    if len(set(effective)) != len(effective):
        raise JsRegexError(f"duplicate regex flag in {effective!r}")
    py_flags = 0
    if "i" in effective:
        py_flags |= re.IGNORECASE
    translated = _translate(pattern, multiline="m" in effective, dotall="s" in effective)
    try:
        compiled = re.compile(translated, py_flags)
    except re.error as exc:
        raise JsRegexError(f"invalid regex {pattern!r}: {exc.msg}") from None
    except RecursionError:
        raise JsRegexError(f"regex {pattern!r} is nested too deeply") from None
    return JsRegex(pattern, effective, compiled, sticky="y" in effective)


def _translate(pattern: str, *, multiline: bool, dotall: bool) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            if i + 1 >= n:
                raise JsRegexError(f"invalid regex {pattern!r}: \\ at end of pattern")
            piece, i = _escape(pattern, i + 1, in_class=False)
            out.append(piece)
            continue
        if ch == "[":
            piece, i = _char_class(pattern, i)
            out.append(piece)
            continue
        if ch == "(":
            piece, i = _group_open(pattern, i)
            out.append(piece)
            continue
        if ch == ".":
            out.append("[\\s\\S]" if dotall else f"[^{_LINE_TERMINATORS}]")
        elif ch == "$":
            out.append(f"(?=[{_LINE_TERMINATORS}]|\\Z)" if multiline else "\\Z")
        elif ch == "^":
            out.append(f"(?:\\A|(?<=[{_LINE_TERMINATORS}]))" if multiline else "\\A")
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def _group_open(pattern: str, i: int) -> tuple[str, int]:
    rest = pattern[i + 1 :]
    if not rest.startswith("?"):
        return "(", i + 1
    for prefix in ("?:", "?=", "?!", "?<=", "?<!"):
        if rest.startswith(prefix):
            return "(" + prefix, i + 1 + len(prefix)
    match = re.match(r"\?<([A-Za-z_$][A-Za-z0-9_$]*)>", rest)
    if match:
        return f"(?P<{_group_name(match.group(1))}>", i + 1 + match.end()
    raise JsRegexError(f"invalid regex {pattern!r}: invalid group at offset {i}")


def _group_name(name: str) -> str:
    # '$' is legal in JavaScript group names but not in Python's.
    return name.replace("$", "_dollar_")


def _escape(pattern: str, j: int, *, in_class: bool) -> tuple[str, int]:
    """Translate the escape whose letter is at ``pattern[j]``; return (text, next index)."""
    c = pattern[j]
    if c in _SIMPLE_ESCAPES and not (c == "0" and j + 1 < len(pattern) and pattern[j + 1].isdigit()):
        return _SIMPLE_ESCAPES[c], j + 1
    if in_class and c in _CLASS_SHORTHAND:
        return _CLASS_SHORTHAND[c], j + 1
    if in_class and c == "b":
        return "\\x08", j + 1
    if in_class and c in "DWS":
        return {"D": "\\D", "W": "\\W", "S": "\\S"}[c], j + 1  # approximation: Python's Unicode sets
    if not in_class and c in _SHORTHAND:
        return _SHORTHAND[c], j + 1
    if c.isdigit():
        k = j
        while k < len(pattern) and pattern[k].isdigit():
            k += 1
        return "\\" + pattern[j:k], k
    if c == "k" and pattern.startswith("<", j + 1):
        end = pattern.find(">", j + 2)
        if end < 0:
            raise JsRegexError(f"invalid regex {pattern!r}: unterminated \\k<name>")
        return f"(?P={_group_name(pattern[j + 2 : end])})", end + 1
    if c == "x" and re.match(r"[0-9A-Fa-f]{2}", pattern[j + 1 : j + 3]):
        return "\\x" + pattern[j + 1 : j + 3], j + 3
    if c == "u":
        m4 = re.match(r"[0-9A-Fa-f]{4}", pattern[j + 1 : j + 5])
        if m4:
            return "\\u" + m4.group(0), j + 5
        mb = re.match(r"\{([0-9A-Fa-f]{1,6})\}", pattern[j + 1 :])
        if mb:
            return f"\\U{int(mb.group(1), 16):08x}", j + 1 + mb.end()
        return "u", j + 1
    if c == "c" and j + 1 < len(pattern) and pattern[j + 1].isalpha():
        return f"\\x{ord(pattern[j + 1]) % 32:02x}", j + 2
    if c in "pP" and pattern.startswith("{", j + 1):
        raise JsRegexError(f"Unicode property escapes (\\{c}{{...}}) are not supported: {pattern!r}")
    if c.isalnum():
        return c, j + 1  # identity escape: JavaScript treats \A, \Z, \e ... as the letter
    return re.escape(c), j + 1


def _char_class(pattern: str, i: int) -> tuple[str, int]:
    j = i + 1
    negate = j < len(pattern) and pattern[j] == "^"
    if negate:
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        # JavaScript: [] never matches, [^] matches any character.
        return ("[\\s\\S]" if negate else "(?!)"), j + 1
    parts: list[str] = []
    while j < len(pattern) and pattern[j] != "]":
        ch = pattern[j]
        if ch == "\\":
            if j + 1 >= len(pattern):
                break
            piece, j = _escape(pattern, j + 1, in_class=True)
            parts.append(piece)
            continue
        # Python warns on and may reinterpret '[', '&&', '--', '||' inside classes.
        parts.append("\\" + ch if ch in "[&~|" else ch)
        j += 1
    if j >= len(pattern):
        raise JsRegexError(f"invalid regex {pattern!r}: unterminated character class")
    return "[" + ("^" if negate else "") + "".join(parts) + "]", j + 1
