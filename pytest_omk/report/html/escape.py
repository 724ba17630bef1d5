"""Text into HTML: everything a model, a tool or a sample file wrote is hostile markup.

Every string that reaches the page goes through :func:`text` (element content and attribute values
alike), so ``<script>``, ``</table>`` or a quote cannot leave the element it is shown in, and
control characters become visible symbols instead of vanishing or breaking the parser.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

# C0 controls (except tab and newline) as Unicode's control pictures (U+2400-U+241F), DEL as U+2421,
# C1 controls as a visible \x escape: a reader sees that the model emitted them.
_CONTROLS: dict[int, str] = {
    **{code: chr(0x2400 + code) for code in range(32) if code not in (9, 10)},
    0x7F: "\u2421",
    **{code: f"\\x{code:02x}" for code in range(0x80, 0xA0)},
}


def text(value: Any) -> str:
    """``value`` as escaped HTML text, safe in element content and in quoted attributes."""
    shown = str(value).translate(_CONTROLS)
    # A lone surrogate (possible in a JSON string) cannot be written as UTF-8: show U+FFFD.
    shown = shown.encode("utf-8", "replace").decode("utf-8") if not shown.isascii() else shown
    return escape(shown, quote=True)


def json_text(value: Any, limit: int = 2000) -> str:
    """A JSON value (a tool call's input, a mock's stats) as escaped, size-capped text."""
    dumped = json.dumps(value, ensure_ascii=False, sort_keys=True)
    if len(dumped) > limit:
        dumped = dumped[: limit - 1] + "…"
    return text(dumped)
