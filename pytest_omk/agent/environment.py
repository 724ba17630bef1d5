"""The environment the agent's ``Bash`` runs with: an allow-list, never the user's environment.

Whatever ``Bash`` can read goes back to the model provider (``env``, ``echo $X``), and from the
tool trace to the reports and the recordings. A deny-list of secret-looking names let through
every credential named otherwise (``PGPASSWORD``, ``MYSQL_PWD``, ``GH_PAT``, ``SERVICE_APIKEY``,
``SLACK_WEBHOOK_URL``, ``GOOGLE_CREDENTIALS``), so the command receives only what tools need
(:data:`ALLOWED`, :data:`ALLOWED_PREFIXES`), the names the user adds with ``--omk-agent-env``, and
the sandbox's own variables (``PWD``, the process marker; ``HOME`` is the private ``/tmp`` when the
command runs as ``nobody``). A URL's user info is removed from every value passed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pytest_omk.recordings.scrub import strip_userinfo

ALLOWED = frozenset({"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "TZ", "LANG", "LANGUAGE"})
"""Variables every ``Bash`` command receives from the user's environment (when set)."""
ALLOWED_PREFIXES = ("LC_",)
"""The locale's categories (``LC_ALL``, ``LC_CTYPE``...)."""


def shell_environment(environ: Mapping[str, str], extra: Iterable[str] = ()) -> dict[str, str]:
    """The part of ``environ`` a ``Bash`` command receives: :data:`ALLOWED`, the locale, and the
    ``extra`` names the user allowed (``--omk-agent-env``), URL user info removed."""
    wanted = ALLOWED | set(extra)
    return {
        name: strip_userinfo(value) if "@" in value and "://" in value else value
        for name, value in environ.items()
        if name in wanted or name.startswith(ALLOWED_PREFIXES)
    }
