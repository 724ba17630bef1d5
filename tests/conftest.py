"""Shared fixtures for pytest-omk's own tests."""

from __future__ import annotations

import importlib
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import settings

from tests.support.dist_cache import keep_distribution_metadata

REPO = Path(__file__).resolve().parents[1]

# pytester's in-process runs drop every module first imported inside them. httpx loads httpcore,
# h11 and anyio lazily at its first client; were that inside a run, later tests in this process
# would import second copies, and httpx's exception mapping (keyed by the first copies' classes)
# would stop recognising connection errors. Load them once, up front, for every test module.
# The grader table is keyed by assertion class: a run that imported it afresh next to assertion
# classes kept from outside would find no grader ("no grader for assertion type ...").
_PRELOADED = (
    "anyio",
    "h11",
    "httpcore._async.http11",
    "httpcore._backends.anyio",
    "mcp.client.stdio",
    "pytest_omk.grade.registry",
)
for _name in _PRELOADED:
    importlib.import_module(_name)


def _preload_package() -> None:
    """Import every module of pytest_omk once, here, rather than in each in-process run.

    pytester drops what a run imported when it ends, so a module first imported inside runs was
    imported, assertion-rewritten and compiled again by every such run (about fifty of them per
    run, most of a small run's time). Loaded here, the runs share them: the package keeps no
    module-level state, so nothing carries from one run into the next. Modules of an extra that is
    not installed stay out (their runs import them and fail as a user's would).
    """
    import pkgutil

    import pytest_omk

    for module in pkgutil.walk_packages(pytest_omk.__path__, "pytest_omk."):
        if module.name.endswith("__main__"):
            continue
        try:
            importlib.import_module(module.name)
        except ImportError:
            continue


_preload_package()
keep_distribution_metadata()  # every in-process run asks for the plugins' metadata again


SHARED_MISSING = (
    "the reference project's sample corpus is not here (set OMK_SHARED_DIR, or put shared/ beside the "
    "checkout); the suite's own files in tests/data cover every rule without it"
)
"""The one skip reason of every test that reads ``shared/upstream-samples``."""


def _find_shared() -> Path | None:
    env = os.environ.get("OMK_SHARED_DIR")
    candidates = [Path(env)] if env else []
    candidates += [REPO.parent / "shared", REPO / "shared"]
    return next((c for c in candidates if (c / "upstream-samples").is_dir()), None)


def _ci() -> bool:
    return bool(os.environ.get("CI"))


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The shared reference folder (``../shared`` beside the checkout, or ``OMK_SHARED_DIR``).

    Absent, the tests that need it are skipped with one reason; ``.ci/run`` sets
    ``OMK_REQUIRE_SHARED=1`` so that there, where the folder exists, a missing one fails instead.
    """
    found = _find_shared()
    if found is None:
        if os.environ.get("OMK_REQUIRE_SHARED") == "1":
            pytest.fail(f"OMK_REQUIRE_SHARED=1 but {SHARED_MISSING.split(';')[0]}")
        pytest.skip(SHARED_MISSING)
    return found


@pytest.fixture(scope="session")
def upstream_samples(shared_dir: Path) -> Path:
    """``shared/upstream-samples``: real sample files from the format's owner."""
    return shared_dir / "upstream-samples"


@pytest.fixture(scope="session")
def node() -> str:
    """The path of ``node``: skipped locally when it is missing, a failure in CI (``CI`` set)."""
    found = shutil.which("node")
    if found is None:
        message = "node (Node.js) is not on PATH: the JavaScript custom-assertion tests need it"
        if _ci():
            pytest.fail(f"{message} (CI is set, so this is a failure, not a skip)")
        pytest.skip(message)
    return found


# Property tests: random in development (new examples each run), reproducible in CI.
settings.register_profile("dev", deadline=None)
settings.register_profile("ci", derandomize=True, database=None, deadline=None, print_blob=True)
settings.load_profile("ci" if _ci() else "dev")
