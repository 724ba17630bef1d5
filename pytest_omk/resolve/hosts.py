"""WHATWG host parsing for special-scheme URLs (pure functions).

A host is percent-decoded, converted to ASCII (Python's IDNA 2003 codec where the standard says
UTS #46), lower-cased and checked for forbidden characters; a domain whose last label is a number
is an IPv4 address in any of the standard's spellings (``2130706433``, ``0x7f.1``,
``017700000001``), which matters for the address checks: each spelling must be caught as the
address it means.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import unquote_to_bytes

_FORBIDDEN_HOST = frozenset("\x00\t\n\r #/:<>?@[\\]^|%\x7f") | {chr(c) for c in range(0x20)}


def parse_host(text: str) -> str | None:
    """The WHATWG serialization of a special-scheme host, or ``None`` when it is invalid."""
    if text.startswith("["):
        if not text.endswith("]") or "%" in text:
            return None  # zone identifiers are not part of URLs
        try:
            return f"[{ipaddress.IPv6Address(text[1:-1]).compressed}]"
        except ValueError:
            return None
    try:
        decoded = unquote_to_bytes(text).decode("utf-8")
        domain = decoded if decoded.isascii() else decoded.encode("idna").decode("ascii")
    except UnicodeError:
        return None
    domain = domain.lower()
    if not domain or any(c in _FORBIDDEN_HOST for c in domain):
        return None
    if _ends_in_number(domain):
        return parse_ipv4(domain)
    return domain


def _ends_in_number(domain: str) -> bool:
    parts = domain.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    last = parts[-1]
    return (last != "" and last.isdigit()) or _ipv4_number(last) is not None


def _ipv4_number(part: str) -> int | None:
    if part == "":
        return None
    radix = 10
    if part[:2] in ("0x", "0X"):
        part, radix = part[2:], 16
    elif len(part) > 1 and part.startswith("0"):
        part, radix = part[1:], 8
    if part == "":
        return 0
    digits = "0123456789abcdef"[:radix]
    if not all(c in digits for c in part.lower()):
        return None
    return int(part, radix)


def parse_ipv4(domain: str) -> str | None:
    """Dotted form of a WHATWG IPv4 host (``0x7f.1`` → ``127.0.0.1``), ``None`` when invalid."""
    parts = domain.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    if len(parts) > 4:
        return None
    numbers = [_ipv4_number(p) for p in parts]
    if any(n is None for n in numbers):
        return None
    values = [n for n in numbers if n is not None]
    if any(n > 255 for n in values[:-1]) or values[-1] >= 256 ** (5 - len(values)):
        return None
    address = values[-1]
    for i, n in enumerate(values[:-1]):
        address += n * 256 ** (3 - i)
    return str(ipaddress.IPv4Address(address))
