"""The LLM judge: templates, trace summary, reply parsing, judge selection and the judge itself.

The judge itself (and the call machinery it needs) loads on first use, so that importing
``pytest_omk.judge.select`` at plugin start-up stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_omk._lazy import lazy_exports
from pytest_omk.judge.select import describe_selection, same_model_warning, select_judge

if TYPE_CHECKING:
    from pytest_omk.judge.judge import LLMJudge, LLMJudgeOutcome, sample_sd
    from pytest_omk.judge.parse import JudgeReply, parse_assertion_reply, parse_rubric_reply
    from pytest_omk.judge.templates import TEMPLATES, JudgeTemplate, neutralise, template_ids
    from pytest_omk.judge.trace_summary import summarize_execution, summarize_trace

_LAZY = {
    "LLMJudge": "judge",
    "LLMJudgeOutcome": "judge",
    "sample_sd": "judge",
    "JudgeReply": "parse",
    "parse_assertion_reply": "parse",
    "parse_rubric_reply": "parse",
    "TEMPLATES": "templates",
    "JudgeTemplate": "templates",
    "neutralise": "templates",
    "template_ids": "templates",
    "summarize_execution": "trace_summary",
    "summarize_trace": "trace_summary",
}


__getattr__ = lazy_exports(__name__, _LAZY)


__all__ = [
    "TEMPLATES",
    "JudgeReply",
    "JudgeTemplate",
    "LLMJudge",
    "LLMJudgeOutcome",
    "describe_selection",
    "neutralise",
    "parse_assertion_reply",
    "parse_rubric_reply",
    "same_model_warning",
    "sample_sd",
    "select_judge",
    "summarize_execution",
    "summarize_trace",
    "template_ids",
]
