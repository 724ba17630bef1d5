"""The Content-Security-Policy of every page pytest-omk writes: nothing but its own inline parts.

``default-src 'none'`` forbids every load (scripts, styles, images, fonts, frames, connections),
``form-action`` and ``base-uri`` forbid sending a form or re-pointing links;
the page's one inline style and, when it has one, its one inline script are allowed by their
SHA-256 hashes, and images only as ``data:`` URLs. Text that escaped escaping could neither run nor
load anything.
"""

from __future__ import annotations

import base64
import hashlib


def csp_hash(source: str) -> str:
    """The CSP source expression allowing exactly ``source`` (``'sha256-…'``)."""
    digest = hashlib.sha256(source.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def content_security_policy(style: str, script: str | None = None) -> str:
    """The policy allowing the inline ``style`` and ``script`` (none when ``None``) and nothing else."""
    scripts = f"; script-src {csp_hash(script)}" if script is not None else ""
    # default-src does not cover form-action and base-uri: without them a form or a <base> that
    # escaped escaping could still send what a reader types, or re-point links, elsewhere.
    return (
        f"default-src 'none'; style-src {csp_hash(style)}{scripts}; img-src data:; "
        "form-action 'none'; base-uri 'none'"
    )
