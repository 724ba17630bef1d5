"""The grading contract: what a grader receives and how a raw reading becomes a verdict."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_omk.models import AssertionBase, Sample
from pytest_omk.models.results import ExecutionResult, Reading

if TYPE_CHECKING:
    from pytest_omk.js.v8 import JsEngine


@dataclass(frozen=True)
class GradeContext:
    """Everything a grader may look at for one sample."""

    execution: ExecutionResult
    sample: Sample
    base_dir: Path
    """Directory that relative paths in the sample (``custom.fn``) are resolved against."""
    judge_readings: Mapping[int, Reading] = field(default_factory=dict)
    """Readings of judge-scored assertions, keyed by top-level assertion index (pre-computed)."""
    index: int = 0
    """Top-level index of the assertion being graded."""
    custom_timeout: float = 30.0
    js: JsEngine | None = None
    """The process's V8 engine (regex and case rules); the session's, passed in."""
    mask: Callable[[str], str] = str
    """The run's secret masking (the one scrubber's): what a message quotes is masked whole before
    it is cut, so a cut can never leave most of a secret (``"A" * 75 + key``) in the message."""

    def at(self, index: int) -> GradeContext:
        """This context for the top-level assertion at ``index``."""
        if index == self.index:
            return self
        # A copy of the fields with ``index`` changed, as dataclasses.replace makes it, without
        # replace's pass through __init__ (a tenth of grading a sample of simple checks).
        twin = object.__new__(GradeContext)
        twin.__dict__.update(self.__dict__, index=index)
        return twin

    @property
    def output(self) -> str:
        """The model's final answer."""
        return self.execution.output

    def quote(self, text: str, limit: int = 80) -> str:
        """:func:`excerpt` of ``text`` masked whole first (what every message quotes from outputs)."""
        return excerpt(self.mask(text), limit)

    @property
    def engine(self) -> JsEngine:
        """The V8 engine; graders of JavaScript-semantics checks need it."""
        if self.js is None:
            raise TypeError("GradeContext.js is required to grade JavaScript-semantics assertions")
        return self.js


Grader = Callable[[AssertionBase, GradeContext], Reading]
"""Returns the *raw* reading of an assertion; ``not`` is applied by :func:`finish`."""


def finish(assertion: AssertionBase, raw: Reading) -> Reading:
    """Apply ``not: true`` to a valid reading; missing evidence and errors are never inverted."""
    if not assertion.negate or raw.status == "missing" or raw.final:
        return raw
    if raw.status == "pass":
        return Reading.failed(f"not: {raw.message}" if raw.message else "not: the check passed", raw.score)
    return Reading.passed(f"not: {raw.message}" if raw.message else "", raw.score)


def excerpt(text: str, limit: int = 80) -> str:
    """A short single-line quote of ``text`` for failure messages."""
    flat = " ".join(text.split())
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return repr(flat)
