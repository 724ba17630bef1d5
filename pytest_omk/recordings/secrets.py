"""Secret scrubbing of recordings: credential values from the environment, header-like keys.

Every recording file, and the store's warnings and miss explanations, pass through :class:`Redactor`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

REDACTED = "[REDACTED]"
MIN_SECRET_LENGTH = 8
"""Shorter values (``true``, ``1``, a port) would redact ordinary words from outputs."""
SECRET_ENV_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD")
SECRET_ENV_NAMES = frozenset({"OPENAI_API_KEY", "ANTHROPIC_API_KEY"})
SENSITIVE_KEYS = frozenset(
    {"authorization", "proxy-authorization", "x-api-key", "api-key", "cookie", "set-cookie"}
)
"""Header-like mapping keys dropped from stored documents (compared lower-case, ``_`` as ``-``)."""



def secrets_from_env(environ: Mapping[str, str]) -> set[str]:
    """Values of environment variables whose names mark them as credentials."""
    found = set()
    for name, value in environ.items():
        upper = name.upper()
        if upper in SECRET_ENV_NAMES or upper.endswith(SECRET_ENV_SUFFIXES):
            found.add(value)
    return found


class Redactor:
    """Replaces secret values in every string of a JSON-able document and drops auth headers."""

    def __init__(self, secrets: Iterable[str]) -> None:
        # Longest first, so that a secret containing another one is replaced whole.
        usable = {s for s in secrets if len(s) >= MIN_SECRET_LENGTH}
        self._secrets = sorted(usable, key=len, reverse=True)

    def text(self, value: str) -> str:
        """``value`` with every secret replaced by ``[REDACTED]``."""
        for secret in self._secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
        return value

    def data(self, value: Any) -> Any:
        """A scrubbed copy of a JSON-able value (dicts, lists, strings, scalars)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {
                self.text(str(k)): self.data(v)
                for k, v in value.items()
                if str(k).lower().replace("_", "-") not in SENSITIVE_KEYS
            }
        if isinstance(value, list | tuple):
            return [self.data(v) for v in value]
        return value


def environment_snapshot() -> dict[str, str]:
    """A copy of ``os.environ`` that tolerates another thread changing it during the copy."""
    while True:
        try:
            return dict(os.environ)
        except (KeyError, RuntimeError):
            continue
