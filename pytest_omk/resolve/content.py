"""What the safe HTTP fetcher accepts as a document, and how HTML becomes text (omk-semantics §4.4)."""

from __future__ import annotations

import re

MAX_BODY_BYTES = 1_048_576
"""Largest response body read, announced or streamed."""

_ACCEPTED_CHARSETS = frozenset({"utf-8", "utf8", "us-ascii"})
_ACCEPTED_TYPES = frozenset({"application/json", "application/xml", "application/yaml", "application/x-yaml"})

_BLOCK_ENDS = frozenset({"p", "div", "li", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article"})
_DROPPED = frozenset({"script", "style"})
# Entities are decoded in this order, once each, as the format's owner does (so "&amp;lt;" ends as
# "<"): the same page gives the same text, and the same digest, here as there.
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


_AMP = "\ue000"
"""Stands for ``&`` while lxml parses, so entities reach the owner's decoding steps as written."""


class _TextTarget:
    """lxml parser target collecting text pieces: tags become a space (a line break for ``<br>``
    and block ends), script and style elements vanish."""

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self._dropping = 0

    def start(self, tag: str, attrib: object) -> None:
        if tag in _DROPPED:
            self._dropping += 1
        elif not self._dropping:
            self.pieces.append("\n" if tag == "br" else " ")

    def end(self, tag: str) -> None:
        if tag in _DROPPED:
            self._dropping = max(0, self._dropping - 1)
        elif not self._dropping:
            self.pieces.append("\n" if tag in _BLOCK_ENDS or tag == "br" else " ")

    def data(self, data: str) -> None:
        if not self._dropping:
            self.pieces.append(data)

    def comment(self, text: str) -> None:
        if not self._dropping:
            self.pieces.append(" ")

    def close(self) -> str:
        return "".join(self.pieces)


def html_to_text(html: str) -> str:
    """Reduce an HTML page to its text: scripts and styles dropped, block ends made line breaks.

    A real HTML parser (libxml2's, through lxml) does the work in time linear in the page's size, so a hostile page cannot stall the run;
    the fetcher calls it off the event loop and within the fetch timeout.
    """
    # lxml is imported with the first page (about 6 ms): a run that fetches no URL never loads it.
    from lxml import etree  # type: ignore[import-untyped]  # (no stubs shipped; one parser call)

    target = _TextTarget()
    parser = etree.HTMLParser(target=target, recover=True, no_network=True, remove_pis=True, huge_tree=False)
    source = html.replace("&", _AMP)
    for start in range(0, len(source), _CHUNK):
        parser.feed(source[start : start + _CHUNK])
    text = str(parser.close() or "").replace(_AMP, "&")
    for entity, char in _ENTITIES:
        text = _replace_folded(text, entity, char)
    text = _BLANKS.sub(" ", text)
    text = _MANY_NEWLINES.sub("\n\n", text)
    return text.strip()


_CHUNK = 64 * 1024


def _replace_folded(text: str, entity: str, char: str) -> str:
    """``text`` with ``entity`` replaced whatever its case (``&NBSP;`` too), in one linear pass."""
    if "&" not in text:
        return text
    return re.sub(re.escape(entity), char, text, flags=re.IGNORECASE)
