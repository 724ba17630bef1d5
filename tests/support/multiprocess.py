"""The ``multiprocess`` marker, checked: a test that starts pytest-xdist workers or a child pytest says so.

Such tests are the suite's slow tail (each one starts interpreters of its own on a 2-core machine):
``pytest -m "not multiprocess"`` is the quick loop while working, and a new one wants a reason
(CONTRIBUTING.md). CI's lowest-bounds run selects by another marker, ``floor``. A marker
that can silently go missing would be worth little, so every unmarked test is watched for the two
ways of starting such processes, pytester's runs and ``subprocess``, and fails at teardown naming
what it started.
"""

from __future__ import annotations

import itertools
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import PurePath
from typing import Any

import pytest

MARKER = "multiprocess"
HINT = f"mark it @pytest.mark.{MARKER} (it starts processes of its own; see tests/support/multiprocess.py)"


def starts_workers(args: Sequence[object]) -> bool:
    """Whether pytest arguments ask pytest-xdist for workers (``-n 2``, ``-n=auto``, ``--numprocesses``)."""
    words = [str(a) for a in args]
    for i, word in enumerate(words):
        if word in ("-n", "--numprocesses"):
            value = words[i + 1] if i + 1 < len(words) else ""
        elif word.startswith("--numprocesses="):
            value = word.partition("=")[2]
        elif word.startswith("-n") and word[2:].lstrip("=") and not word.startswith("--"):
            value = word[2:].lstrip("=")
        else:
            continue
        if value not in ("0", ""):
            return True
    return False


def is_child_pytest(argv: object) -> bool:
    """Whether a ``subprocess`` argument list runs pytest (``python -m pytest``, a ``pytest`` script)."""
    if isinstance(argv, (str, bytes)) or not isinstance(argv, Sequence):
        return False
    words = [str(a) for a in argv]
    if any(a == "-m" and b == "pytest" for a, b in itertools.pairwise(words)):
        return True
    if "-mpytest" in words:  # pytester's own spelling
        return True
    # ``python -c "...; pytest.main(...)"``: a child pytest under limits set first (descriptors,
    # memory) is started this way.
    if any(a == "-c" and "pytest.main(" in b for a, b in itertools.pairwise(words)):
        return True
    return bool(words) and PurePath(words[0]).name in ("pytest", "py.test")


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker (``--strict-markers`` is on)."""
    config.addinivalue_line("markers", f"{MARKER}: starts pytest-xdist workers or a child pytest (checked)")


@pytest.fixture(autouse=True)
def _multiprocess_marker_is_true(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    if request.node.get_closest_marker(MARKER) is not None:
        yield
        return
    started: list[str] = []
    inline_run = pytest.Pytester.inline_run
    run_subprocess = pytest.Pytester.runpytest_subprocess
    popen_init = subprocess.Popen.__init__

    def watched_inline_run(self: pytest.Pytester, *args: Any, **kwargs: Any) -> Any:
        if starts_workers(args):
            started.append("pytest-xdist workers (pytester run with -n)")
        return inline_run(self, *args, **kwargs)

    def watched_subprocess(self: pytest.Pytester, *args: Any, **kwargs: Any) -> Any:
        started.append("a child pytest (pytester.runpytest_subprocess)")
        return run_subprocess(self, *args, **kwargs)

    def watched_popen(self: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> None:
        if is_child_pytest(args):
            started.append("a child pytest (subprocess)")
        popen_init(self, args, *rest, **kwargs)

    monkeypatch.setattr(pytest.Pytester, "inline_run", watched_inline_run)
    monkeypatch.setattr(pytest.Pytester, "runpytest_subprocess", watched_subprocess)
    monkeypatch.setattr(subprocess.Popen, "__init__", watched_popen)
    yield
    if started:
        pytest.fail(f"this test starts {started[0]}: {HINT}", pytrace=False)
