"""Helpers shared by the project's own tests; their fixtures are the plugin :mod:`.fixtures`."""

from tests.support.commands import FAKE_COMMAND, FakeCommand, judge_reply, omk_command, omk_main
from tests.support.documents import (
    NO_EXECUTOR,
    SCHEMA_VERSION,
    executor_arg,
    judged_sample,
    sample,
    sample_set,
    write_sample_set,
    write_samples,
)
from tests.support.executors import point_openai_at
from tests.support.fixtures import OmkRun
from tests.support.reports import (
    REPO,
    REPORT_SCHEMA,
    JUnitCase,
    JUnitReport,
    load_report,
    parse_junit,
    report_samples,
)
from tests.support.runner import QUIET_PLUGINS, printed, run_pytest

__all__ = [
    "FAKE_COMMAND",
    "NO_EXECUTOR",
    "QUIET_PLUGINS",
    "REPO",
    "REPORT_SCHEMA",
    "SCHEMA_VERSION",
    "FakeCommand",
    "JUnitCase",
    "JUnitReport",
    "OmkRun",
    "executor_arg",
    "judge_reply",
    "judged_sample",
    "load_report",
    "omk_command",
    "omk_main",
    "parse_junit",
    "point_openai_at",
    "printed",
    "report_samples",
    "run_pytest",
    "sample",
    "sample_set",
    "write_sample_set",
    "write_samples",
]
