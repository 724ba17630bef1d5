"""The agent's Bash environment is an allow-list (``agent/environment.py``)."""

from __future__ import annotations

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
