"""Who answers the samples and where that choice came from (the pytest layer makes the choice:
:mod:`pytest_omk.plugin.answerer`); the run header and the reports say it.

The four places that can name what answers (``--omk-executor``, an ``omk_app`` fixture, the
``pytest_omk_make_executor`` hook, ``omk_executor`` in the ini file) rank in that order.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from pytest_omk.execute.names import is_own_code

Source = Literal["command line", "ini", "hook", "fixture"]
HOOK = "pytest_omk_make_executor"
FIXTURE = "omk_app"


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
