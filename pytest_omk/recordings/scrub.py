"""The one secret scrubber, applied at every sink (docs/security.md, "Secrets").

Recordings, the JSON/HTML/Markdown reports (tool outputs included), JUnit, the terminal, failure
messages and recording keys all pass through :class:`Scrubber`. What counts as a secret:

* the value of every environment variable whose name marks it as a credential
  (:func:`is_secret_name`: ``*_KEY``, ``*_TOKEN``, ``*_SECRET``, ``*PASSWORD``, ``*_PWD``,
  ``*APIKEY``, ``*_PAT``, ``*_CREDENTIALS``, ``*_WEBHOOK_URL``, ...);
* the userinfo of any URL in the environment (``OPENAI_BASE_URL=http://user:PW@host``): the
  password, ``user:password`` and its base64 form (what goes into a ``Basic`` header);
* values handed in explicitly (MCP server env tokens);
* anything shaped like an API key (``sk-...``), whoever produced it;
* mapping keys that name auth headers are dropped from documents altogether.

The environment is read once, on the main thread (:func:`environment_snapshot`), never on a worker
thread while pytest changes ``PYTEST_CURRENT_TEST``. What a sink prints also goes through the one
escaper, :func:`pytest_omk._util.visible.visible` (:meth:`Scrubber.terminal` does both).
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import unquote

from pytest_omk._util.visible import CiInert, visible

REDACTED = "[REDACTED]"
MIN_SECRET_LENGTH = 8
"""Shorter values (``true``, ``1``, a port) would redact ordinary words from outputs."""
SECRET_ENV_SUFFIXES = (
    "_KEY",
    "_TOKEN",
    "_SECRET",
    "PASSWORD",  # PGPASSWORD too
    "_ACCESS_KEY",
    "_ACCESS_KEY_ID",
    "_PASSWD",
    "_PWD",  # MYSQL_PWD (OLDPWD and PWD are directories: no underscore before PWD)
    "APIKEY",
    "_PAT",  # GH_PAT: personal access tokens
    "_CREDENTIALS",
    "_WEBHOOK_URL",  # the URL is the credential (Slack, Teams, Discord)
)
SECRET_ENV_NAMES = frozenset({"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "API_KEY", "TOKEN", "PASSWORD"})
SENSITIVE_KEYS = frozenset(
    {"authorization", "proxy-authorization", "x-api-key", "api-key", "cookie", "set-cookie"}
)
"""Header-like mapping keys dropped from stored documents (compared lower-case, ``_`` as ``-``)."""

KEY_SHAPED = re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_\-*.]{6,}")
"""API-key-shaped tokens (``sk-...``) are masked even when no variable holds them."""
_USERINFO = re.compile(
    r"(?:[a-zA-Z][a-zA-Z0-9+.-]*://(?P<schemed>[^\s,;/?#]*)"  # scheme://user:pass@host
    r"|(?<![^\s,;=])(?P<bare>[^\s,;=/?#:@]+:[^\s,;/?#]*))@"  # user:pass@host:port, no scheme
)
"""The userinfo of every URL-like part of a text: with a scheme (``https://u:p@h``), or without one
when it holds a password (``u:p@proxy:3128``, as proxy variables allow), in lists separated by
commas, semicolons or spaces (``PIP_EXTRA_INDEX_URL``); up to the last ``@`` before the path."""


def environment_snapshot() -> dict[str, str]:
    """A copy of ``os.environ`` that tolerates another thread changing it during the copy."""
    while True:
        try:
            return dict(os.environ)
        except (KeyError, RuntimeError):
            continue


def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name marks its value as a credential."""
    upper = name.upper()
    return upper in SECRET_ENV_NAMES or upper.endswith(SECRET_ENV_SUFFIXES)


def userinfo_secrets(text: str) -> set[str]:
    """The password, ``user:password`` and its base64 form of every URL-like part with userinfo
    in ``text`` (:data:`_USERINFO`: with or without a scheme, anywhere in a list)."""
    found: set[str] = set()
    for match in _USERINFO.finditer(text):
        raw_userinfo = match.group("schemed") if match.group("schemed") is not None else match.group("bare")
        user, colon, password = raw_userinfo.partition(":")
        if password:
            found.add(password)
            found.add(unquote(password))
        if user or colon:
            pair = f"{unquote(user)}:{unquote(password)}"
            found.add(pair)
            found.add(base64.b64encode(pair.encode()).decode())
            found.add(raw_userinfo)
    return found


def secrets_from_env(environ: Mapping[str, str]) -> set[str]:
    """Credential values of ``environ``: secret-named variables and URL userinfo anywhere."""
    found: set[str] = set()
    for name, value in environ.items():
        if is_secret_name(name):
            found.add(value)
        if "@" in value:
            found |= userinfo_secrets(value)
    return found


def strip_userinfo(value: str) -> str:
    """``value`` without the ``user:password@`` of any URL-like part (:data:`_USERINFO`), for an
    environment handed to an untrusted process: ``u:p@proxy:3128`` becomes ``proxy:3128``."""
    return _USERINFO.sub(_host_only, value) if "@" in value else value


def _host_only(match: re.Match[str]) -> str:
    whole = match.group(0)
    # The scheme (if any) stays; the userinfo and its "@" go.
    return whole[: match.start("schemed") - match.start()] if match.group("schemed") is not None else ""


class Scrubber:
    """Replaces secret values in text and in every string of a JSON-able document."""

    def __init__(
        self, secrets: Iterable[str | None] = (), *, key_shaped: bool = False, ci: CiInert | None = None
    ) -> None:
        # Longest first, so that a secret containing another one is replaced whole.
        usable = {s for s in secrets if s and len(s) >= MIN_SECRET_LENGTH}
        self._secrets = sorted(usable, key=len, reverse=True)
        # Key-shaped masking is for messages (errors, failures); outputs keep words like "sk-learn".
        self._key_shaped = key_shaped
        # What the terminal shows under CI cannot be a log command (docs/security.md, "CI outputs").
        self._ci = ci or CiInert()

    @classmethod
    def from_environment(cls, environ: Mapping[str, str], extra: Iterable[str] = ()) -> Scrubber:
        """A scrubber for ``environ``'s credentials (a snapshot taken on the main thread) plus ``extra``,
        whose terminal text is inert for the CI ``environ`` names (:class:`CiInert`)."""
        return cls([*secrets_from_env(environ), *extra], ci=CiInert.from_environment(environ))

    @property
    def secrets(self) -> tuple[str, ...]:
        """The values scrubbed (longest first)."""
        return tuple(self._secrets)

    def text(self, value: str) -> str:
        """``value`` with every secret and API-key-shaped token replaced by ``[REDACTED]``."""
        for secret in self._secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
        return KEY_SHAPED.sub(REDACTED, value) if self._key_shaped and "-" in value else value

    def masked(self, value: str) -> str:
        """``value`` with every secret and API-key-shaped token masked, nothing else changed: what a
        message may quote, masked whole before any cut (a cut secret no longer matches)."""
        text = self.text(value)
        return KEY_SHAPED.sub(REDACTED, text) if "-" in text else text

    def data(self, value: Any) -> Any:
        """A scrubbed copy of a JSON-able value (dicts, lists, strings, scalars); auth keys dropped."""
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

    def terminal(self, value: str) -> str:
        """Scrubbed text safe to print (key-shaped tokens too), unsafe characters made visible, and
        under CI no line able to act as a log command."""
        text = self.text(value)
        shown = visible(KEY_SHAPED.sub(REDACTED, text) if "-" in text else text)
        return self._ci(shown) if self._ci else shown
