"""``--omk-repeat auto``: each run of a sample is graded as it ends, and the sample stops repeating
once the stopping rule has decided (``pytest_omk.grade.sequential``; docs/comparisons.md,
"Adaptive repeats").

The launcher asks this feature for a grader when it starts a sample
(:attr:`pytest_omk.run.launcher.Launcher.grading`); the item is graded in full, every run of it,
in its call phase as any repeated sample is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from pytest_omk.grade.sequential import StopRule

if TYPE_CHECKING:
    from pytest_omk.config.settings import Settings
    from pytest_omk.js.v8 import JsEngine
    from pytest_omk.models.run import SamplePlan, SampleRun
    from pytest_omk.run.launcher import Launcher


class AutoRepeat:
    """The stopping rule of ``--omk-repeat auto`` and the grader of one run, per sample."""

    def __init__(self, settings: Settings, js: Callable[[], JsEngine]) -> None:
        self.rule = StopRule(settings.repeat, settings.min_pass_rate)
        self._settings = settings
        self._js = js

    def passed(self, plan: SamplePlan) -> Callable[[SampleRun], bool]:
        """Whether one of ``plan``'s runs passed (asked on the main thread as the sample starts,
        where the JavaScript engine is made on first use; called off the loop after each run)."""
        # Lazy: grading imports the format's models (pydantic), no part of start-up.
        from pytest_omk.grade.verdict import run_passed

        sample, base_dir, settings, js = plan.sample, plan.base_dir, self._settings, self._js()
        return lambda run: run_passed(sample, base_dir, run, settings, js)


def attach(launcher: Launcher, settings: Settings, js: Callable[[], JsEngine]) -> None:
    """Under ``--omk-repeat auto``, the launcher repeats each sample until its grades decide."""
    if settings.repeat_auto:
        launcher.grading = AutoRepeat(settings, js)
