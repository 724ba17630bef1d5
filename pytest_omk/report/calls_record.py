"""The calls part of a sample's record: every model call made for it, by role, as JSON values.

Filled in setup from the sample's call log (:mod:`pytest_omk.models.accounting`), whether the sample
then passes, fails or errors: a sample that ends in an error made its calls all the same. No
pydantic here: the session imports this with the plugin.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_omk.models.accounting import ROLES, CallLog, Role, Usage

_NO_CALLS: dict[str, Any] = {
    "calls": 0, "live": 0, "replayed": 0, "failed": 0,
    "inputTokens": None, "outputTokens": None, "costUSD": None, "costUnknown": 0,
}  # fmt: skip
"""A role's ``usage`` before any call (key for key what :func:`usage_record` writes)."""


def usage_record(usage: Mapping[Role, Usage]) -> dict[str, dict[str, Any]]:
    """A sample's ``usage`` (every call it made, by role), as :class:`CallUsage` writes it."""
    return {role: role_record(part) for role, part in usage.items()}


def role_record(part: Usage) -> dict[str, Any]:
    """One role's calls (``spent`` only when it made live calls)."""
    record: dict[str, Any] = {
        "calls": part.calls,
        "live": part.live,
        "replayed": part.replayed,
        "failed": part.failed,
        "inputTokens": part.input_tokens,
        "outputTokens": part.output_tokens,
        "costUSD": part.cost_usd(),
        "costUnknown": part.cost_unknown,
    }
    if part.live:
        record["spent"] = {
            "costUSD": part.live_cost_usd,
            "pricedCalls": part.live_priced,
            "unpricedCalls": part.answered_live - part.live_priced,
            "tokens": part.live_tokens,
            "unpricedTokens": part.unpriced_tokens,
            "estimatedCalls": part.estimated,
        }
    return record


def model_calls(usage: Mapping[Role, Usage]) -> dict[str, int]:
    """Live and replayed model calls (executor and judge, failed live calls included)."""
    return {
        "live": sum(part.live for part in usage.values()),
        "replayed": sum(part.replayed for part in usage.values()),
    }


def no_calls() -> dict[str, dict[str, Any]]:
    """A record's ``usage`` before any call (a fresh dict per record)."""
    return {role: dict(_NO_CALLS) for role in ROLES}


def record_calls(record: dict[str, Any], log: CallLog | None) -> None:
    """Put the calls ``log`` noted into ``record`` (its ``usage`` and ``modelCalls``)."""
    if log is None:
        return
    usage = log.usage()
    record["usage"] = usage_record(usage)
    record["modelCalls"] = model_calls(usage)
