"""The reference implementation, installed once with npm into a cache folder kept between runs."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REFERENCE = "oh-my-knowledge@0.54.0"


def _cache_root() -> Path:
    explicit = os.environ.get("OMK_PARITY_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pytest-omk-parity"


def _unavailable(message: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{message} (CI is set, so the parity test must run: this is a failure, not a skip)")
    pytest.skip(message)


@pytest.fixture(scope="session")
def reference_package(node: str) -> Path:
    """The installed ``oh-my-knowledge`` package directory (npm install on first use, then cached)."""
    npm = shutil.which("npm")
    if npm is None:
        _unavailable("npm is not on PATH: the parity test installs the reference with it")
    folder = _cache_root() / REFERENCE.replace("@", "-")
    package = folder / "node_modules" / "oh-my-knowledge"
    if not (package / "dist" / "grading" / "assertions.js").is_file():
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "package.json").write_text('{"private": true}\n', encoding="utf-8")
        done = subprocess.run(
            [
                str(npm),
                "install",
                "--no-audit",
                "--no-fund",
                "--ignore-scripts",
                "--loglevel=error",
                REFERENCE,
            ],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if done.returncode != 0:
            _unavailable(f"npm install {REFERENCE} failed: {done.stderr.strip()[-400:]}")
    return package
