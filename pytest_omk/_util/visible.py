r"""The one escaper of every sink: characters that act instead of showing are made visible.

A model output, a judge's reason or a recording's file name may hold terminal escapes (``ESC``,
the C1 ``CSI``), ``BEL``, backspaces and carriage returns, bidi overrides (``U+202E`` makes
``~ fr- mr`` read ``rm -rf ~``) and invisible format characters (zero-width spaces, tag
characters). Every sink (the terminal and the warnings summary, JUnit, pytest-html, the HTML and
Markdown reports) shows them as ``\x1b``, ``\u202e``, ``\U000e0041`` through :func:`visible`;
the JSON files (report and recordings) keep the exact text and write these characters as JSON
escapes instead (:func:`json_visible`), which is lossless.

Kept as they are: tab and newline; the zero-width joiner and non-joiner and the variation
selectors, which shape scripts and emoji and cannot reorder or hide text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TextIO

_UNSAFE_CLASS = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 but tab and newline, DEL, C1
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f"  # soft hyphen, fillers, ALM, Mongolian
    "\u200b\u200e\u200f\u202a-\u202e\u2028\u2029\u2060-\u206f"  # zero-width space, bidi, separators
    "\u3164\ufeff\uffa0\ufff0-\ufffb"  # Hangul filler, BOM, specials, interlinear annotation
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"  # format controls
    "\U000e0000-\U000e00ff\U000e01f0-\U000e0fff"  # tag characters (text hidden from readers)
)
UNSAFE = re.compile(f"[{_UNSAFE_CLASS}]")
"""Every character :func:`visible` escapes."""

DEFAULT_IGNORABLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f"
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff]"
)
"""Unicode's Default_Ignorable_Code_Point set (DerivedCoreProperties 15.1): characters a renderer
draws as nothing, so a reader never sees them between the letters of a word."""


def visible(text: str) -> str:
    """``text`` with every :data:`UNSAFE` character written as a Python-style escape."""
    return UNSAFE.sub(_escape, text) if UNSAFE.search(text) else text


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def json_visible(dumped: str) -> str:
    r"""JSON text with every :data:`UNSAFE` character written as a ``\u`` escape (same value).

    Such characters can only occur inside JSON strings (the syntax itself is ASCII), where an
    escape decodes to the very same character: the document is unchanged, its file is safe to
    ``cat`` or to read in a diff.
    """
    return UNSAFE.sub(_json_escape, dumped)


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


class JsonVisibleWriter:
    """A text handle that passes what ``json.dump`` writes through :func:`json_visible`.

    ``json.dump`` writes token by token; the text is escaped in blocks of :data:`BLOCK` characters
    instead (call :meth:`flush` at the end).
    """

    BLOCK = 64 * 1024

    def __init__(self, handle: TextIO) -> None:
        self._handle = handle
        self._pending: list[str] = []
        self._size = 0

    def write(self, text: str) -> int:
        """Take ``text``; returns its length (as ``TextIO.write`` callers expect)."""
        self._pending.append(text)
        self._size += len(text)
        if self._size >= self.BLOCK:
            self.flush()
        return len(text)

    def flush(self) -> None:
        """Write what was taken, escaped."""
        if self._pending:
            self._handle.write(json_visible("".join(self._pending)))
            self._pending, self._size = [], 0


# --- CI logs -------------------------------------------------------------------------------------

_WORKFLOW_COMMAND = re.compile(r"(?m)(?:^|(?<=\r))([^\S\r\n]*)::")
"""GitHub's runner executes a line that starts with ``::`` after leading white space (it splits
lines at CR too)."""
_LEGACY_COMMAND = "##["
"""GitHub's older form, honoured anywhere in a line (``##[error]…``, ``##[set-env …]``)."""
_GITLAB_SECTION = re.compile(r"section_(start|end):")
"""GitLab's collapsible-section markers (``\\e[0Ksection_start:<time>:<name>\\r\\e[0K``)."""


@dataclass(frozen=True)
class CiInert:
    r"""Makes foreign text unable to act as a CI log command, in a form a reader still reads.

    Under GitHub Actions a line starting with ``::`` (after white space) is a workflow command
    (``::add-mask::``, ``::error file=…::``, ``::stop-commands::TOKEN``, which silences every later
    command, the plugin's annotations included), and ``##[`` acts anywhere in a line: such a line's
    first colon is written ``\x3a`` and the ``#`` before ``[`` as ``\x23``, the escaper's own
    notation. Under GitLab CI, ``section_start:``/``section_end:`` become ``section\x5fstart:``
    (their ESC and CR are escaped by :func:`visible` already). Off outside CI: text is unchanged.
    """

    github: bool = False
    gitlab: bool = False

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> CiInert:
        """On for the CI the environment says the run is in (``GITHUB_ACTIONS``, ``GITLAB_CI``)."""
        return cls(
            github=environ.get("GITHUB_ACTIONS", "").lower() == "true",
            gitlab=environ.get("GITLAB_CI", "").lower() == "true",
        )

    def __bool__(self) -> bool:
        return self.github or self.gitlab

    def __call__(self, text: str) -> str:
        """``text`` with no workflow command or section marker left in it."""
        if self.github:
            text = workflow_inert(text)
        if self.gitlab and "section_" in text:
            text = _GITLAB_SECTION.sub(r"section\\x5f\1:", text)
        return text


def workflow_inert(text: str) -> str:
    r"""``text`` with no line starting with ``::`` and no ``##[`` (see :class:`CiInert`)."""
    if "::" in text:
        text = _WORKFLOW_COMMAND.sub(r"\1\\x3a:", text)
    return text.replace(_LEGACY_COMMAND, "#\\x23[") if _LEGACY_COMMAND in text else text
