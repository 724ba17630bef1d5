"""Shared fixtures for pytest-omk's own tests."""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# pytester's in-process runs drop every module first imported inside them. httpx loads httpcore,
# h11 and anyio lazily at its first client; were that inside a run, later tests in this process
# would import second copies, and httpx's exception mapping (keyed by the first copies' classes)
# would stop recognising connection errors. Load them once, up front, for every test module.
for _name in ("anyio", "h11", "httpcore._async.http11", "httpcore._backends.anyio", "mcp.client.stdio"):
    importlib.import_module(_name)


def _find_shared() -> Path | None:
    env = os.environ.get("OMK_SHARED_DIR")
    candidates = [Path(env)] if env else []
    candidates += [REPO.parent / "shared", REPO / "shared"]
    return next((c for c in candidates if (c / "upstream-samples").is_dir()), None)


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The project's shared reference folder (``../shared`` beside the checkout)."""
    found = _find_shared()
    if found is None:
        pytest.fail("the shared reference folder (../shared/upstream-samples) is missing; set OMK_SHARED_DIR")
    return found


@pytest.fixture(scope="session")
def upstream_samples(shared_dir: Path) -> Path:
    """``shared/upstream-samples``: real sample files from the format's owner."""
    return shared_dir / "upstream-samples"
