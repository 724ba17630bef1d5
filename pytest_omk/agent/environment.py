"""The environment the agent's ``Bash`` runs with: an allow-list, never the user's environment.

Whatever ``Bash`` can read goes back to the model provider (``env``, ``echo $X``), and from the
tool trace to the reports and the recordings. A deny-list of secret-looking names let through
every credential named otherwise (``PGPASSWORD``, ``MYSQL_PWD``, ``GH_PAT``, ``SERVICE_APIKEY``,
``SLACK_WEBHOOK_URL``, ``GOOGLE_CREDENTIALS``), so the command receives only what tools need
(:data:`ALLOWED`, :data:`LOCALE`), the names the user adds with ``--omk-agent-env``, and
the sandbox's own variables (``PWD``, the process marker; ``HOME`` is the private ``/tmp`` when the
command runs as ``nobody``). The locale is its real variables only, never a prefix
(``LC_DEPLOY_TOKEN`` is no locale category). A URL's user info is removed from every URL-like part
of every value passed: with or without a scheme (``HTTPS_PROXY=user:pw@proxy:3128``), and each
entry of a list (``PIP_EXTRA_INDEX_URL``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pytest_omk.recordings.scrub import strip_userinfo

ALLOWED = frozenset({"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "TZ", "LANG", "LANGUAGE"})
"""Variables every ``Bash`` command receives from the user's environment (when set)."""
LOCALE = frozenset(
    {
        "LC_ALL",
        "LC_ADDRESS",
        "LC_COLLATE",
        "LC_CTYPE",
        "LC_IDENTIFICATION",
        "LC_MEASUREMENT",
        "LC_MESSAGES",
        "LC_MONETARY",
        "LC_NAME",
        "LC_NUMERIC",
        "LC_PAPER",
        "LC_TELEPHONE",
        "LC_TIME",
    }
)
"""The locale's categories (POSIX and glibc's), by name: any other ``LC_*`` is someone's variable."""


def shell_environment(environ: Mapping[str, str], extra: Iterable[str] = ()) -> dict[str, str]:
    """The part of ``environ`` a ``Bash`` command receives: :data:`ALLOWED`, the locale, and the
    ``extra`` names the user allowed (``--omk-agent-env``), URL user info removed."""
    wanted = ALLOWED | LOCALE | set(extra)
    return {name: strip_userinfo(value) for name, value in environ.items() if name in wanted}
