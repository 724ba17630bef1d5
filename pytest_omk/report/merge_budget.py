"""One budget across shards, as ``merge`` reports it: the shards' spend summed, the run's cap, and
which shard stopped on budget.

Each shard of a budgeted run had its weighted part of the cap (``collection.shard.budgetUSD``); the
merged report's ``summary.budget`` states the whole run's cap and the spend of all the shards, so it
reads as the one run's. The spend by role is the merged usage block's (``usage.<role>.spent``,
counted again from the records), as in one run. A shard's budget section is input like the rest of
its report: every number is type-checked before it is added.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_omk.errors import ConfigError

_SUMMED = ("spentUSD", "tokens", "refusedCalls", "notRun")


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
    stopped = []
    for path, document, section in sections:
        if section is None:
            continue
        if not isinstance(section, dict):
            raise ConfigError(f"{path}: summary.budget must be an object")
        for key in _SUMMED:
            total[key] += _number(path, f"summary.budget.{key}", section.get(key, 0))
        if section.get("notRun") or section.get("refusedCalls"):
            shard = document.get("config", {}).get("shard")
            stopped.append(f"{shard} ({int(section.get('notRun', 0))} samples not run)")
    total["spentUSD"] = round(total["spentUSD"], 6)
    return total, stopped
