"""The report's ``config`` section accepts what a run can write into it."""

from __future__ import annotations

from pytest_omk.models.report_document import ReportConfig
from pytest_omk.recordings.modes import RECORD_MODES


def test_every_record_mode_is_a_valid_report_config() -> None:
    for mode in RECORD_MODES:
        assert ReportConfig.model_validate({"recordMode": mode}).recordMode == mode
