"""The agent's Bash environment is an allow-list (``agent/environment.py``)."""

from __future__ import annotations

import pytest

from pytest_omk.agent.environment import shell_environment


def test_only_the_allow_list_and_the_locale_pass() -> None:
    environ = {
        "PATH": "/bin", "HOME": "/h", "USER": "u", "LOGNAME": "u", "SHELL": "/bin/bash", "TERM": "xterm",
        "TZ": "UTC", "LANG": "C.UTF-8", "LANGUAGE": "en", "LC_ALL": "C.UTF-8", "LC_CTYPE": "C.UTF-8",
        "GITHUB_TOKEN": "t", "PGPASSWORD": "p", "JAVA_HOME": "/opt/jdk", "VIRTUAL_ENV": "/v", "TMPDIR": "/x",
    }  # fmt: skip
    env = shell_environment(environ)
    assert sorted(env) == sorted(
        k for k in environ if k not in {"GITHUB_TOKEN", "PGPASSWORD", "JAVA_HOME", "VIRTUAL_ENV", "TMPDIR"}
    )


def test_names_the_user_allows_pass_with_url_user_info_removed() -> None:
    environ = {"JAVA_HOME": "/opt/jdk", "PROXY": "http://u:pw-123456789@proxy:3128", "OTHER": "x"}
    assert shell_environment(environ, ["JAVA_HOME", "PROXY", "MISSING"]) == {
        "JAVA_HOME": "/opt/jdk",
        "PROXY": "http://proxy:3128",
    }


@pytest.mark.parametrize(
    ("value", "passed"),
    [
        ("user:pw@proxy:3128", "proxy:3128"),
        ("http://a:p1@h1/x,https://b:p2@h2/y", "http://h1/x,https://h2/y"),
        ("https://u:p@ss@host:1/path@x", "https://host:1/path@x"),  # up to the last @ of the authority
        ("u:p@a.example b:q@c.example;d:r@e.example", "a.example c.example;e.example"),
        ("me@example.com", "me@example.com"),  # an address without a password is kept
        ("git@github.com:org/repo.git", "git@github.com:org/repo.git"),
        ("https://pypi.org/simple", "https://pypi.org/simple"),
    ],
)
def test_userinfo_leaves_every_url_form(value: str, passed: str) -> None:
    assert shell_environment({"X": value}, ["X"]) == {"X": passed}


def test_the_locale_is_its_real_names_only() -> None:
    given = {"LC_ALL": "C", "LC_PAPER": "a4", "LC_DEPLOY_TOKEN": "t", "LC_X": "y", "LANG": "C"}
    assert shell_environment(given) == {"LC_ALL": "C", "LC_PAPER": "a4", "LANG": "C"}
