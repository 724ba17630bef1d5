r"""JavaScript string semantics that grading depends on.

The format's owner grades with JavaScript: lengths count UTF-16 code units, ``String(x)`` and
``JSON.stringify`` have their own spellings of numbers and objects, and ``/\s/`` is a different
whitespace set from Python's. Each helper here reproduces one such behaviour so a verdict computed
in Python equals the one upstream computes.
"""

from __future__ import annotations

import math
import re
import sys
from array import array
from decimal import Decimal
from typing import Any

# JavaScript's WhiteSpace + LineTerminator set (ECMA-262 §12.2, §12.3), used by trim() and /\s/.
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)

_JS_SPACE_RUN = re.compile("[" + re.escape(JS_WHITESPACE) + "]+")
# What ROUGE/BLEU count as tokens: ASCII letter/digit runs, or single CJK ideographs U+4E00-U+9FA5.
_NGRAM_TOKEN = re.compile("[a-z0-9]+|[\u4e00-\u9fa5]")
# Characters JSON.stringify escapes: quote, backslash, C0 controls and lone surrogates.
_JSON_ESCAPE = re.compile(
    '["\\\\\x00-\x1f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]'
)
_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_UTF16 = "utf-16-le" if sys.byteorder == "little" else "utf-16-be"
_MAX_ARRAY_INDEX = 2**32 - 2
_MAX_EXACT_INT = 2**53


def js_trim(text: str) -> str:
    """Trim ``text`` exactly as JavaScript's ``String.prototype.trim`` does."""
    return text.strip(JS_WHITESPACE)


def utf16_len(text: str) -> int:
    """``text.length`` in JavaScript: the number of UTF-16 code units (an emoji counts 2)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def utf16_units(text: str) -> array[int]:
    """The UTF-16 code units of ``text``, as JavaScript indexes them."""
    units = array("H")
    units.frombytes(text.encode(_UTF16, "surrogatepass"))
    return units


def js_words(text: str) -> list[str]:
    r"""``text.split(/\s+/).filter(Boolean)``: words separated by JavaScript whitespace."""
    return [word for word in _JS_SPACE_RUN.split(text) if word]


def ngram_tokens(lowered: str) -> list[str]:
    """The ROUGE/BLEU tokens of a text already lower-cased by V8's ``toLowerCase``
    (:meth:`pytest_omk.js.v8.JsEngine.lower`): the ``/[a-z0-9]+|[一-龥]/g`` matches."""
    return _NGRAM_TOKEN.findall(lowered)


def js_truthy(value: Any) -> bool:
    """JavaScript truthiness of a JSON value: ``null``, ``false``, ``0``, ``NaN`` and ``""`` are falsy."""
    if value is None or value is False:
        return False
    if isinstance(value, int | float):
        return not (value == 0 or value != value)
    if isinstance(value, str):
        return value != ""
    return True


def js_number(value: float) -> str:
    """``Number.prototype.toString()``: ``1.0`` → ``1``, ``1e21`` → ``1e+21``, ``1e-7`` → ``1e-7``."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) <= _MAX_EXACT_INT:
        return str(value)
    value = float(value)
    if value.is_integer() and abs(value) <= _MAX_EXACT_INT:
        # A whole number below 2**53: every integer there is a float, so its shortest round-trip
        # digits are all of its digits (``-0`` prints as ``0`` in JavaScript too).
        return str(int(value))
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"
    if value < 0:
        return "-" + js_number(-value)
    # repr() gives the shortest digits that round-trip, which is what ECMA-262 asks for too; only
    # the placement of the decimal point and the exponent spelling differ.
    _, digit_tuple, exponent = Decimal(repr(value)).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    exponent = int(exponent) + len(digit_tuple) - len(digits)
    k = len(digits)
    n = exponent + k  # value = 0.<digits> * 10**n
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    e = n - 1
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"


def js_string(value: Any) -> str:
    """``String(value)`` for a JSON value (an object becomes ``[object Object]``, as in JavaScript)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return js_number(value)
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple):
        # Array.prototype.toString joins with commas, writing null/undefined elements as "".
        return ",".join("" if item is None else js_string(item) for item in value)
    return "[object Object]"


def _quote(text: str) -> str:
    def escape(match: re.Match[str]) -> str:
        ch = match.group(0)
        return _SHORT_ESCAPES.get(ch) or f"\\u{ord(ch):04x}"

    return '"' + _JSON_ESCAPE.sub(escape, text) + '"'


def _is_array_index(key: str) -> bool:
    return key.isascii() and key.isdigit() and (key == "0" or key[0] != "0") and int(key) <= _MAX_ARRAY_INDEX


def _ordered_keys(obj: dict[Any, Any]) -> list[str]:
    # JavaScript objects list integer-like keys first, ascending, then the rest in insertion order.
    keys = [str(key) for key in obj]
    indices = sorted((k for k in keys if _is_array_index(k)), key=int)
    return indices + [k for k in keys if not _is_array_index(k)]


def js_json_stringify(value: Any) -> str:
    """``JSON.stringify(value)`` for JSON data: compact, raw non-ASCII, JavaScript numbers."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return js_number(value) if math.isfinite(value) else "null"
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, list | tuple):
        return "[" + ",".join(js_json_stringify(item) for item in value) + "]"
    if isinstance(value, dict):
        by_text = {str(key): item for key, item in value.items()}
        return (
            "{" + ",".join(f"{_quote(k)}:{js_json_stringify(by_text[k])}" for k in _ordered_keys(value)) + "}"
        )
    return _quote(str(value))


def levenshtein_utf16(a: str, b: str) -> int:
    """Edit distance (insert, delete, substitute: cost 1 each) between the UTF-16 units of ``a``, ``b``.

    Uses the bit-parallel algorithm of Myers (in Hyyrö's formulation for whole strings), with a
    Python integer as the bit vector, so long outputs stay fast.
    """
    pattern, text = utf16_units(a), utf16_units(b)
    m = len(pattern)
    if m == 0:
        return len(text)
    match_masks: dict[int, int] = {}
    for i, unit in enumerate(pattern):
        match_masks[unit] = match_masks.get(unit, 0) | (1 << i)
    full = (1 << m) - 1
    top = 1 << (m - 1)
    plus, minus, distance = full, 0, m
    for unit in text:
        eq = match_masks.get(unit, 0)
        xv = eq | minus
        xh = (((eq & plus) + plus) ^ plus) | eq
        h_plus = minus | ~(xh | plus)
        h_minus = plus & xh
        if h_plus & top:
            distance += 1
        elif h_minus & top:
            distance -= 1
        h_plus = (h_plus << 1) | 1
        h_minus <<= 1
        plus = (h_minus | ~(xv | h_plus)) & full
        minus = h_plus & xv & full
    return distance
