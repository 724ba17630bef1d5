"""Plain text made inert for Markdown: table cells, list items and fenced blocks.

GitHub sanitises HTML, but a ``|`` or a newline would still break a table row and markup would still
render; every piece of text from models and sample files goes through here.
"""

from __future__ import annotations

import re

# Characters with inline meaning; those that only matter at the start of a line (``#``, ``-``, ``+``)
# never start one here, since every piece of foreign text sits after a fixed prefix.
_SPECIAL = re.compile(r"([\\`*_\[\]<>|~])")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")
_CONTROL_KEEP_NEWLINES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_BACKTICKS = re.compile(r"`+")


def cell(value: object) -> str:
    """Plain text as one line of inert Markdown (table cells, list items)."""
    flat = _CONTROL.sub(" ", str(value)).strip()
    return _SPECIAL.sub(r"\\\1", flat.replace("&", "&amp;"))


def fenced(body: str, info: str = "") -> list[str]:
    """``body`` in a fenced code block that nothing inside it can close (its fence is longer than
    any run of backticks in the body); control characters other than newline and tab are dropped."""
    clean = _CONTROL_KEEP_NEWLINES.sub("", body)
    longest = max((len(run) for run in _BACKTICKS.findall(clean)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + info, *clean.split("\n"), fence]
