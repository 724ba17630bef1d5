"""What the safe HTTP fetcher accepts as a document, and how HTML becomes text (omk-semantics §4.4)."""

from __future__ import annotations

import re

MAX_BODY_BYTES = 1_048_576
"""Largest response body read, announced or streamed."""

_ACCEPTED_CHARSETS = frozenset({"utf-8", "utf8", "us-ascii"})
_ACCEPTED_TYPES = frozenset({"application/json", "application/xml", "application/yaml", "application/x-yaml"})

# The order of these steps is the format owner's, so the same page gives the same text (and the
# same digest) here as there.
_SCRIPT = re.compile(r"<script\b[^>]*>.*?</script\s*>", re.IGNORECASE | re.DOTALL)
_STYLE = re.compile(r"<style\b[^>]*>.*?</style\s*>", re.IGNORECASE | re.DOTALL)
_BREAK = re.compile(r"<br\s*/?\s*>", re.IGNORECASE)
_BLOCK_END = re.compile(r"</(?:p|div|li|h[1-6]|section|article)\s*>", re.IGNORECASE)
_TAG = re.compile(r"<[^>]+>")
_ENTITIES = (
    ("&nbsp;", " "),
    ("&amp;", "&"),
    ("&lt;", "<"),
    ("&gt;", ">"),
    ("&quot;", '"'),
    ("&#39;", "'"),
    ("&#x27;", "'"),
)
_BLANKS = re.compile(r"[ \t]+")
_MANY_NEWLINES = re.compile(r"\n{3,}")


class FetchError(Exception):
    """A URL was not fetched (or its answer refused); the message is the reason."""


def check_content_type(value: str | None) -> str:
    """The media type of an acceptable ``Content-Type`` header; :class:`FetchError` otherwise."""
    if value is None or not value.strip():
        raise FetchError("the response has no Content-Type")
    media_type, *params = (part.strip() for part in value.split(";"))
    media_type = media_type.lower()
    for param in params:
        name, _, raw = param.partition("=")
        if name.strip().lower() == "charset":
            charset = raw.strip().strip('"').lower()
            if charset not in _ACCEPTED_CHARSETS:
                raise FetchError(f"charset {charset!r} is not accepted (only utf-8 or us-ascii)")
    if not _accepted_media(media_type):
        raise FetchError(f"media type {media_type!r} is not a text document")
    return media_type


def _accepted_media(media_type: str) -> bool:
    if media_type.startswith("text/") and len(media_type) > len("text/"):
        return True
    if media_type in _ACCEPTED_TYPES:
        return True
    return media_type.startswith("application/") and media_type.endswith(("+json", "+xml"))


def html_to_text(html: str) -> str:
    """Reduce an HTML page to its text: scripts and styles dropped, block ends made line breaks."""
    text = _SCRIPT.sub("", html)
    text = _STYLE.sub("", text)
    text = _BREAK.sub("\n", text)
    text = _BLOCK_END.sub("\n", text)
    text = _TAG.sub(" ", text)
    for entity, char in _ENTITIES:
        text = re.sub(re.escape(entity), char, text, flags=re.IGNORECASE)
    text = _BLANKS.sub(" ", text)
    text = _MANY_NEWLINES.sub("\n\n", text)
    return text.strip()
