"""The LLM judge: templates, trace summary, reply parsing, judge selection and the judge itself."""

from __future__ import annotations

from pytest_omk.judge.judge import LLMJudge, LLMJudgeOutcome, sample_sd
from pytest_omk.judge.parse import JudgeReply, parse_assertion_reply, parse_rubric_reply
from pytest_omk.judge.select import describe_selection, same_model_warning, select_judge
from pytest_omk.judge.templates import TEMPLATES, JudgeTemplate, neutralise, template_ids
from pytest_omk.judge.trace_summary import summarize_execution, summarize_trace

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
