"""The ``multiprocess`` marker's check (tests/support/multiprocess.py): what counts, and that it bites."""

from __future__ import annotations

import pytest

from tests.conftest import REPO
from tests.support.multiprocess import is_child_pytest, starts_workers


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("-n", "2"), True),
        (("-n2",), True),
        (("-n=auto",), True),
        (("--numprocesses", "4"), True),
        (("--numprocesses=2",), True),
        (("-n", "0"), False),
        (("-n0",), False),
        (("-q", "--omk-concurrency", "2"), False),
        (("--omk-shard=1/2",), False),
        ((), False),
    ],
)
def test_what_asks_for_workers(args: tuple[str, ...], expected: bool) -> None:
    assert starts_workers(args) is expected


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["/usr/bin/python3", "-m", "pytest", "-q"], True),
        (["/venv/bin/pytest", "tests"], True),
        (["/venv/bin/python", "-mpytest", "--basetemp=x"], True),
        (["python", "-m", "pytest_omk", "merge"], False),
        (["python", "-c", "import resource, pytest\nsys.exit(pytest.main(sys.argv[1:]))", "-q"], True),
        (["python", "-c", "print('pytest.main is not called here')"], False),
        (["node", "runner.mjs"], False),
        ("pytest -q", False),
    ],
)
def test_what_is_a_child_pytest(argv: object, expected: bool) -> None:
    assert is_child_pytest(argv) is expected


@pytest.mark.multiprocess
def test_an_unmarked_test_that_starts_a_child_pytest_fails(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    pytester.makeconftest('pytest_plugins = ["tests.support.multiprocess"]')
    pytester.makepyfile(
        """
        import subprocess, sys
        import pytest

        def test_unmarked():
            subprocess.run([sys.executable, "-m", "pytest", "--version"], capture_output=True)

        @pytest.mark.multiprocess
        def test_marked():
            subprocess.run([sys.executable, "-m", "pytest", "--version"], capture_output=True)

        def test_other_processes():
            subprocess.run([sys.executable, "-c", "pass"])
        """
    )
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines(
        ["*ERROR at teardown of test_unmarked*", "this test starts a child pytest (subprocess): mark it*"]
    )
