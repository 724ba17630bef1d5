"""Who answers the samples, and where that choice came from: the run's header and reports say it.

Four places can name what answers: ``--omk-executor`` on the command line, an ``omk_app`` fixture
in a ``conftest.py``, the ``pytest_omk_make_executor`` hook, and ``omk_executor`` in the ini file.
They rank in that order. The command line wins so that the same samples can be pointed at a raw
model without editing the conftest; a conftest's app beats the ini file, whose value is then a
one-line notice. The choice is made without calling the hook or setting up the fixture.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import pytest

from pytest_omk.execute.names import is_own_code
from pytest_omk.plugin.compat import conftest_fixture

Source = Literal["command line", "ini", "hook", "fixture"]
HOOK = "pytest_omk_make_executor"
FIXTURE = "omk_app"
answerer_key = pytest.StashKey["Answerer"]()


@dataclass(frozen=True)
class Answerer:
    """What answers the samples (``source``; ``spec`` for the command line and the ini file) and
    what else was configured but is not used."""

    source: Source | None
    spec: str | None = None
    ini_spec: str | None = None
    hook_at: str | None = None
    """Where the hook is implemented (``conftest.py``), when it is."""
    fixture_at: str | None = None
    """Where the ``omk_app`` fixture is defined, when it is."""

    @property
    def own_code(self) -> bool:
        """Whether what answers is the project's own code (an app under test), not a built-in model."""
        if self.source in ("hook", "fixture"):
            return True
        return self.spec is not None and is_own_code(self.spec)

    @property
    def note(self) -> str | None:
        """What was configured besides and is not used, as one clause (``None``: nothing)."""
        unused = []
        if self.fixture_at and self.source in ("command line",):
            unused.append(f"the {FIXTURE} fixture in {self.fixture_at} is not used")
        if self.hook_at and self.source in ("command line", "fixture"):
            unused.append(f"the {HOOK} hook in {self.hook_at} is not used")
        if self.ini_spec and self.source in ("hook", "fixture"):
            unused.append(f"omk_executor = {self.ini_spec} in the ini file is not used")
        return "; ".join(unused) or None

    def header(self, record_mode: str, app_record: str) -> list[str]:
        """The run header's lines (none when nothing answers)."""
        if self.source is None:
            return []
        note = self.note
        if self.source in ("command line", "ini"):
            where = "the command line" if self.source == "command line" else "the ini file"
            lines = [f"omk: executor {self.spec} (from {where}" + (f"; {note})" if note else ")")]
        else:
            where = (
                f"the {HOOK} hook in {self.hook_at}"
                if self.source == "hook"
                else f"the {FIXTURE} fixture in {self.fixture_at}"
            )
            lines = [f"omk: executor from {where}" + (f" ({note})" if note else "")]
        if self.own_code:
            lines.append(app_line(record_mode, app_record))
        return lines

    def fallback(self) -> Answerer:
        """When the hook returned ``None``: the ini file's executor answers, if there is one."""
        if self.ini_spec:
            return replace(self, source="ini", spec=self.ini_spec)
        return replace(self, source=None, spec=None)

    def report(self, executor: str | None) -> dict[str, Any]:
        """The JSON report's ``config`` keys: the executor that answered (``executor``: the id a
        hook's or fixture's app answered with), its source, the notice."""
        # The spec as given when one was (the report always said so); else the id that answered.
        return {"executor": self.spec or executor, "executorSource": self.source, "executorNote": self.note}


def app_line(record_mode: str, app_record: str) -> str:
    """What is live and what is recorded for an app under test."""
    calls = {
        "none": "replay from the recordings only",
        "off": "go to the provider, and nothing is recorded",
        "all": "are made live and recorded",
        "rewrite": "are made live and recorded",
    }.get(record_mode, "are replayed, or made live and recorded")
    whole = "; its whole answers are recorded too, keyed by its digest" if app_record == "answers" else ""
    return (
        f"omk: the app answers every sample live; its model calls {calls} (record mode {record_mode}){whole}"
    )


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
