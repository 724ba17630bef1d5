r"""Text into HTML: everything a model, a tool or a sample file wrote is hostile markup.

Every string that reaches the page goes through :func:`text` (element content and attribute values
alike), so ``<script>``, ``</table>`` or a quote cannot leave the element it is shown in, and
control, bidi and invisible format characters are shown as escapes (``\x1b``, ``\u202e``: the one
escaper of every sink, :func:`pytest_omk._util.visible.visible`) instead of acting on the page.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from pytest_omk._util.visible import visible


def text(value: Any) -> str:
    """``value`` as escaped HTML text, safe in element content and in quoted attributes."""
    shown = visible(str(value))
    # A lone surrogate (possible in a JSON string) cannot be written as UTF-8: show U+FFFD.
    shown = shown.encode("utf-8", "replace").decode("utf-8") if not shown.isascii() else shown
    return escape(shown, quote=True)


def json_text(value: Any, limit: int = 2000) -> str:
    """A JSON value (a tool call's input, a mock's stats) as escaped, size-capped text."""
    dumped = json.dumps(value, ensure_ascii=False, sort_keys=True)
    if len(dumped) > limit:
        dumped = dumped[: limit - 1] + "…"
    return text(dumped)
