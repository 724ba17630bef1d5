"""Plain text made inert for Markdown: table cells, list items and fenced blocks.

GitHub sanitises HTML, but a ``|`` or a newline would still break a table row and markup would still
render; every piece of text from models and sample files goes through here.
"""

from __future__ import annotations

import re

from pytest_omk._util.visible import visible

# Characters with inline meaning; those that only matter at the start of a line (``#``, ``-``, ``+``)
# never start one here, since every piece of foreign text sits after a fixed prefix.
_SPECIAL = re.compile(r"([\\`*_\[\]<>|~])")
_LINE_BREAKS = re.compile(r"(?:\r?\n|\t)+")
_BACKTICKS = re.compile(r"`+")
MENTION_BREAK = "@&#8288;"
"""``@`` as :func:`cell` writes it: followed by an invisible word joiner, so no mention is made."""


def cell(value: object) -> str:
    """Plain text as one line of inert Markdown (table cells, list items)."""
    # Line breaks and tabs fold into the one line; every other unsafe character is made visible
    # (a bidi override would otherwise reorder the row as GitHub shows it).
    flat = visible(_LINE_BREAKS.sub(" ", str(value)).strip())
    # A word joiner (written as an entity) after every "@": GitHub then links no "@team" mention,
    # which would notify people from a report's text; the reader still sees "@team".
    return _SPECIAL.sub(r"\\\1", flat.replace("&", "&amp;")).replace("@", MENTION_BREAK)


def fenced(body: str, info: str = "") -> list[str]:
    r"""``body`` in a fenced code block that nothing inside it can close (its fence is longer than
    any run of backticks in the body); control, bidi and invisible characters other than newline and
    tab are made visible (``\x1b``, ``\u202e``)."""
    clean = visible(body.replace("\r\n", "\n"))
    longest = max((len(run) for run in _BACKTICKS.findall(clean)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + info, *clean.split("\n"), fence]
