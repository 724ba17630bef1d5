"""Check a sample file's root ``requires`` block: tools, files, environment, preflight commands."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from pytest_omk.models import Requires

PREFLIGHT_TIMEOUT = 10.0


def unmet_requirements(requires: Requires | None, base_dir: Path) -> list[str]:
    """One line per unmet requirement (empty when everything is there)."""
    if requires is None:
        return []
    problems: list[str] = []
    for tool in requires.tools or []:
        if shutil.which(tool) is None:
            problems.append(f"tool {tool!r} not found on PATH")
    for name in requires.files or []:
        if not (base_dir / name).exists():
            problems.append(f"file {name!r} not found (relative to {base_dir})")
    for var in requires.env or []:
        if not os.environ.get(var):
            problems.append(f"environment variable {var} is not set")
    for command in requires.preflight or []:
        problem = _preflight(command, base_dir)
        if problem:
            problems.append(problem)
    return problems


def _preflight(command: str, cwd: Path) -> str | None:
    try:
        done = subprocess.run(
            command,
            shell=True,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=PREFLIGHT_TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return f"preflight {command!r} timed out after {PREFLIGHT_TIMEOUT:g}s"
    except OSError as exc:
        return f"preflight {command!r} could not run: {exc.strerror}"
    if done.returncode != 0:
        first = (done.stderr or done.stdout).strip().splitlines()
        detail = f": {first[0][:200]}" if first else ""
        return f"preflight {command!r} exited with code {done.returncode}{detail}"
    return None
