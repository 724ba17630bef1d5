"""One budget across shards, as ``merge`` reports it: the shards' spend summed by role, the run's
cap, and which shard stopped on budget.

Each shard of a budgeted run had its weighted part of the cap (``collection.shard.budgetUSD``); the
merged report's ``summary.budget`` states the whole run's cap and the spend of all the shards, so it
reads as the one run's. A shard's budget section is input like the rest of its report: every number
is type-checked before it is added.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_omk.errors import ConfigError

_SUMMED = ("spentUSD", "tokens", "unpricedCalls", "unpricedTokens", "refusedCalls", "notRun")
_ROLE_SUMMED = ("calls", "pricedCalls", "costUSD", "unpricedCalls", "unpricedTokens", "tokens")


def _number(path: Path, where: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ConfigError(f"{path}: {where} must be a number that is not negative, not {str(value)[:40]!r}")
    return value


def merged_budget(
    reports: Sequence[tuple[Path, Mapping[str, Any]]],
) -> tuple[dict[str, Any] | None, list[str]]:
    """The merged ``summary.budget`` (``None``: no shard had a budget) and the shards that stopped
    on it (``"2/4 (3 samples not run)"``), in shard order."""
    sections = [(path, doc, doc.get("summary", {}).get("budget")) for path, doc in reports]
    if all(section is None for _, _, section in sections):
        return None, []
    config = reports[0][1].get("config", {})
    total: dict[str, Any] = {"limitUSD": config.get("budgetUSD"), "limitTokens": config.get("budgetTokens")}
    total.update(dict.fromkeys(_SUMMED, 0))
    roles: dict[str, dict[str, Any]] = {}
    stopped = []
    for path, document, section in sections:
        if section is None:
            continue
        if not isinstance(section, dict):
            raise ConfigError(f"{path}: summary.budget must be an object")
        for key in _SUMMED:
            total[key] += _number(path, f"summary.budget.{key}", section.get(key, 0))
        for role, part in (section.get("roles") or {}).items():
            if not isinstance(part, dict):
                raise ConfigError(f"{path}: summary.budget.roles.{str(role)[:40]} must be an object")
            into = roles.setdefault(str(role), dict.fromkeys(_ROLE_SUMMED, 0))
            for key in _ROLE_SUMMED:
                into[key] += _number(path, f"summary.budget.roles.{role}.{key}", part.get(key, 0))
        if section.get("notRun") or section.get("refusedCalls"):
            shard = document.get("config", {}).get("shard")
            stopped.append(f"{shard} ({int(section.get('notRun', 0))} samples not run)")
    total["spentUSD"] = round(total["spentUSD"], 6)
    for part in roles.values():
        part["costUSD"] = round(part["costUSD"], 6)
    total["roles"] = roles
    return total, stopped
