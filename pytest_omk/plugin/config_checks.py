"""What is checked as pytest configures: before any file is collected and before xdist starts a worker.

A mistake found here is one usage error (exit 4) on the controller, so with or without ``-n`` the
user sees the same line and no worker starts:

- a plugin option written with a space whose value is an existing path (``--omk-baseline
  /elsewhere/b.json``): pytest chooses its rootdir and ini file before it knows the plugin's
  options, takes the value for a test path and may read another ini file, or none. When that
  changed what pytest chose, the run stops and shows the ``=`` form, which pytest never misreads;
- an ``omk_*`` ini key the plugin does not have (a typo would otherwise leave the option unset
  behind pytest's generic warning), with "did you mean"; ``omk-judge`` or ``OMK_JUDGE`` too, the
  spellings of a flag or a variable written where an ini key goes;
- a ``--omk-system`` file that does not exist.
"""

from __future__ import annotations

import difflib
import itertools
import os
import shlex
from collections.abc import Iterable
from pathlib import Path

import pytest

from pytest_omk.config.settings import Settings
from pytest_omk.plugin.compat import ini_keys, setup_with_every_option


def check_command_line(config: pytest.Config, flags: Iterable[str]) -> None:
    """Stop when a space-form value of one of ``flags`` made pytest choose another rootdir or ini file."""
    if hasattr(config, "workerinput"):
        return  # the controller checked the command line
    try:
        args = [*shlex.split(os.environ.get("PYTEST_ADDOPTS", "")), *map(str, config.invocation_params.args)]
    except ValueError:
        return  # pytest reports a malformed PYTEST_ADDOPTS itself
    spaced = _spaced_paths(args, set(flags), Path(config.invocation_params.dir))
    if not spaced:
        return  # the common case: nothing pytest can have taken for a test path
    chosen = setup_with_every_option(config, args)
    if chosen is None or chosen == (config.rootpath, config.inipath):
        return
    flag, value = spaced[0]
    rootdir, inipath = chosen
    raise pytest.UsageError(
        f"omk: {flag} {value}: pytest read this path as a test path (it reads its command line "
        f"before the plugin's options), so it chose {_setup(config.rootpath, config.inipath)} instead "
        f"of {_setup(rootdir, inipath)}; write {flag}={value}"
    )


def _spaced_paths(args: list[str], flags: set[str], cwd: Path) -> list[tuple[str, str]]:
    """``(flag, value)`` for each ``flag value`` pair whose value names an existing path."""
    found = []
    for flag, value in itertools.pairwise(args):
        if flag in flags and not value.startswith("-") and (cwd / value).exists():
            found.append((flag, value))
    return found


def _setup(rootdir: Path, inipath: Path | None) -> str:
    return f"rootdir {rootdir} with {inipath}" if inipath else f"rootdir {rootdir} without an ini file"


def check_ini_keys(config: pytest.Config, known: Iterable[str]) -> None:
    """Refuse an ``omk_*`` ini key that is none of ``known``, suggesting the closest one."""
    names = sorted(set(known))
    unknown = sorted(
        key for key in ini_keys(config) if _ini_spelling(key).startswith("omk_") and key not in names
    )
    if not unknown:
        return
    key = unknown[0]
    close = difflib.get_close_matches(_ini_spelling(key), names, n=1, cutoff=0.6)
    where = config.inipath.name if config.inipath is not None else "-o"
    hint = f"did you mean {close[0]}?" if close else "pytest --help lists the omk_* ini keys"
    raise pytest.UsageError(f"omk: unknown ini key {key} ({where}); {hint}")


def _ini_spelling(key: str) -> str:
    """``key`` as an ini key is spelt: ``omk-judge`` and ``OMK_JUDGE`` are both ``omk_judge``."""
    return key.lower().replace("-", "_")


def check_system_prompt(config: pytest.Config, settings: Settings) -> None:
    """A ``--omk-system`` file must exist where the run will look for it."""
    if not settings.system:
        return
    candidates = [Path(config.invocation_params.dir) / settings.system, settings.rootdir / settings.system]
    if any(candidate.is_file() for candidate in candidates):
        return
    option = "--omk-system" if config.getoption("omk_system", default=None) else "ini key omk_system"
    looked = " or ".join(dict.fromkeys(str(candidate.parent) for candidate in candidates))
    raise pytest.UsageError(f"omk: {option} {settings.system}: no such file (looked in {looked})")
