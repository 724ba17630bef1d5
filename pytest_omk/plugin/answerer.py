"""Who answers the samples, and where that choice came from: the run's header and reports say it.

Four places can name what answers: ``--omk-executor`` on the command line, an ``omk_app`` fixture
in a ``conftest.py``, the ``pytest_omk_make_executor`` hook, and ``omk_executor`` in the ini file.
They rank in that order. The command line wins so that the same samples can be pointed at a raw
model without editing the conftest; a conftest's app beats the ini file, whose value is then a
one-line notice. The choice is made without calling the hook or setting up the fixture.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pytest_omk.plugin.compat import conftest_fixture
from pytest_omk.run.answerer import FIXTURE, HOOK, Answerer

__all__ = ["FIXTURE", "HOOK", "Answerer", "answerer_key", "choose"]

answerer_key = pytest.StashKey[Answerer]()


def choose(config: pytest.Config) -> Answerer:
    """Rank what is configured (nothing is called or set up)."""
    cli = config.getoption("omk_executor", default=None) or None
    ini = str(config.getini("omk_executor") or "").strip() or None
    impls = config.pluginmanager.hook.pytest_omk_make_executor.get_hookimpls()
    hook_at = _shown(config, getattr(impls[-1].plugin, "__file__", None)) if impls else None
    fixture_file = conftest_fixture(config, FIXTURE)
    fixture_at = _shown(config, str(fixture_file)) if fixture_file else None
    found = Answerer(None, ini_spec=ini, hook_at=hook_at, fixture_at=fixture_at)
    if cli:
        return replace(found, source="command line", spec=cli.strip())
    if fixture_at:
        return replace(found, source="fixture")
    if hook_at:
        return replace(found, source="hook")
    return replace(found, source="ini", spec=ini) if ini else found


def _shown(config: pytest.Config, file: str | None) -> str:
    if not file:
        return "a plugin"
    path = Path(file).resolve()
    root = Path(config.rootpath).resolve()
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
