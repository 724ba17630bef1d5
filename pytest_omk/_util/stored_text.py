"""The cap on text stored in reports and recordings (grading always reads the whole text).

A model may answer with megabytes; two 8 MiB outputs used to cost 16 MiB each of JSON report, HTML
page, pytest-html page and recordings. Every string a report record or a recording stores is kept
up to :data:`STORED_TEXT_BYTES` of UTF-8 and the rest is replaced by one line saying that it was cut
and how long the text was (:func:`cap_text`). The assertions of the run that received the output
read all of it; a replay reads what the recording kept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

STORED_TEXT_BYTES = 1024 * 1024
"""Most UTF-8 bytes of one stored string (1 MiB)."""


def cap_text(text: str, limit: int = STORED_TEXT_BYTES, mask: Callable[[str], str] | None = None) -> str:
    """``text``, or its first ``limit`` bytes (whole characters) and a line saying it was cut.

    ``mask`` (the run's secret masking) is applied to the whole text before a cut: a secret that
    spans the cut would otherwise keep its first part, which no later scrubbing recognises.
    """
    if len(text) <= limit // 4:  # no character takes more than 4 bytes
        return text
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    if mask is not None:
        text = mask(text)
        data = text.encode("utf-8", "surrogatepass")
        if len(data) <= limit:
            return text
    end = limit
    while end > 0 and data[end] & 0xC0 == 0x80:  # a character spans the cut: keep none of it
        end -= 1
    return (
        data[:end].decode("utf-8", "surrogatepass")
        + f"\n[pytest-omk: cut here; the text has {len(data):,} bytes, the first {end:,} are stored]"
    )


def cap_strings(value: Any, limit: int = STORED_TEXT_BYTES, mask: Callable[[str], str] | None = None) -> Any:
    """A copy of a JSON-able value with every string passed through :func:`cap_text`."""
    if isinstance(value, str):
        return cap_text(value, limit, mask)
    if isinstance(value, dict):
        return {key: cap_strings(item, limit, mask) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [cap_strings(item, limit, mask) for item in value]
    return value
