"""Where ``--omk-shard`` cuts: from the collection's own order, whatever a plugin reorders after.

pytest-randomly (and any plugin like it) reshuffles the items in ``pytest_collection_modifyitems``
with a new seed in every CI job; a block cut from the shuffled list would run some samples in two
shards and others in none, every job green. So the items are numbered as pytest collects them
(``pytest_itemcollected``, before any plugin can reorder), the block is cut from that stable
order, and each shard then runs its own items in whatever order the plugins chose. An item that
was never collected (a plugin made it up while reordering) has no stable place: that is a usage
error naming the plugins that reorder.

``--omk-shard-by durations`` cuts the stable order into blocks of equal recorded latency (the
``.test_durations`` file of ``--omk-durations``) instead of equal counts; the blocks stay
contiguous, so ``merge`` still rebuilds one run's order by concatenating the shards.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_omk._util.money import money
from pytest_omk.config.durations import read_durations, weights_for
from pytest_omk.config.settings import Settings
from pytest_omk.config.shard import Shard, weighted_bounds
from pytest_omk.errors import ConfigError
from pytest_omk.execute.budget import Budget, BudgetLimits
from pytest_omk.plugin.safety import header_lines

_OWN = ("_pytest.", "pytest_omk.", "pytest ")


@dataclass(frozen=True)
class Cut:
    """This shard's block: its share of the weight, and what the weights came from."""

    shard: Shard
    by: str
    items: int
    weight: float
    total: float
    weighed: int
    """Items whose weight the durations file gave (the others took the mean)."""
    source: str | None
    durations: str | None
    """``sha256:…`` of the durations file read (every shard of one split read the same bytes)."""

    @property
    def share(self) -> float:
        """This shard's part of the whole weight (of a budget split across the shards)."""
        return self.weight / self.total if self.total > 0 else 1 / self.shard.count

    def limits(self, limits: BudgetLimits) -> BudgetLimits:
        """This shard's part of the run's caps: in proportion to its weight, so the N shards
        together spend at most the one cap (a shard with nothing to run gets nothing)."""
        share = self.share
        return BudgetLimits(
            None if limits.usd is None else limits.usd * share,
            None if limits.tokens is None else max(1, int(limits.tokens * share)),
        )

    def as_dict(self, limits: BudgetLimits) -> dict[str, Any]:
        """The report's ``collection.shard``."""
        part = self.limits(limits)
        budget = {
            **({} if part.usd is None else {"budgetUSD": round(part.usd, 9)}),
            **({} if part.tokens is None else {"budgetTokens": part.tokens}),
        }
        return {
            "shard": str(self.shard),
            "by": self.by,
            "items": self.items,
            "weight": round(self.weight, 6),
            "totalWeight": round(self.total, 6),
            "weighed": self.weighed,
            "source": self.source,
            "durations": self.durations,
            **budget,
        }


class ShardCut:
    """The plugin object (``omk-shard-cut``): numbers the items as collected, then cuts this shard."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._place: dict[int, int] = {}
        self.cut: Cut | None = None

    def pytest_itemcollected(self, item: pytest.Item) -> None:
        """Number the item in collection order (before any plugin reorders the list)."""
        self._place.setdefault(id(item), len(self._place))

    def stable(self, config: pytest.Config, items: list[pytest.Item]) -> list[pytest.Item]:
        """``items`` in collection order; a usage error when one was never collected."""
        unknown = [item.nodeid for item in items if id(item) not in self._place]
        if unknown:
            raise pytest.UsageError(
                f"omk: --omk-shard cannot cut a stable order: {unknown[0]} was added after collection "
                f"by a plugin that reorders or makes items ({', '.join(reordering_plugins(config))}); "
                "disable it for sharded runs (-p no:NAME)"
            )
        return sorted(items, key=lambda item: self._place[id(item)])

    def collection_order(self, items: list[pytest.Item]) -> list[pytest.Item]:
        """``items`` as collected, whatever a plugin reordered (the score table's order); an item
        never numbered (added by a plugin) keeps its place after the numbered ones."""
        last = len(self._place)
        return sorted(items, key=lambda item: self._place.get(id(item), last))

    def apply(self, config: pytest.Config, items: list[pytest.Item], stable: list[pytest.Item]) -> None:
        """Keep only this shard's block of ``stable`` in ``items`` (in the order ``items`` has)."""
        shard = self.settings.shard
        if shard is None:
            return
        weights, weighed, durations = self._weights(stable)
        if self.settings.shard_by == "durations":
            start, stop = weighted_bounds(weights, shard.count)[shard.index - 1]
        else:
            start, stop = shard.bounds(len(stable))
        chosen = {id(item) for item in stable[start:stop]}
        self.cut = Cut(
            shard, self.settings.shard_by, stop - start, sum(weights[start:stop]), sum(weights),
            weighed, self.settings.shard_source, durations,
        )  # fmt: skip
        _narrow_built_budget(config, self.settings)
        deselected = [item for item in items if id(item) not in chosen]
        if deselected:
            config.hook.pytest_deselected(items=deselected)
            items[:] = [item for item in items if id(item) in chosen]

    def _weights(self, stable: list[pytest.Item]) -> tuple[list[float], int, str | None]:
        if self.settings.shard_by != "durations" or not self.settings.durations:
            return [1.0] * len(stable), 0, None
        path = Path(self.settings.durations)
        try:
            durations = read_durations(path)
        except ConfigError as exc:
            raise pytest.UsageError(f"omk: {exc}") from None
        if durations is None:
            raise pytest.UsageError(
                f"omk: --omk-shard-by durations: no durations file at {path} (write one with a replay "
                "run's --omk-store-durations, or give --omk-durations PATH)"
            )
        weights, weighed = weights_for([item.nodeid for item in stable], durations)
        # Of what was read (not the file again): the weights the split used, in a stable spelling.
        digest = hashlib.sha256(json.dumps(durations, sort_keys=True).encode()).hexdigest()
        return weights, weighed, f"sha256:{digest}"

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        """Which shard this job runs, and where K/N came from (``--omk-shard auto``)."""
        shard = self.settings.shard
        if shard is None:
            return []
        source = f" from {self.settings.shard_source}" if self.settings.shard_source else ""
        return header_lines(config, [f"omk: shard {shard}{source}, cut by {self.settings.shard_by}"])

    def pytest_report_collectionfinish(self, config: pytest.Config) -> list[str]:
        """Say which shard this is, where K/N came from and this shard's share of the weight."""
        cut = self.cut
        if cut is None:
            return []
        source = f" from {cut.source}" if cut.source else ""  # the header is not shown under -q
        line = f"omk: shard {cut.shard}{source}: {cut.items} items by {cut.by}"
        if cut.by == "durations":
            line += (
                f", {cut.weight:.1f}s of {cut.total:.1f}s recorded ({cut.share:.1%}; "
                f"{cut.weighed} items weighed, the others at the mean)"
            )
        lines = [line]
        run = BudgetLimits(self.settings.budget_usd, self.settings.budget_tokens)
        if run.active:
            part = cut.limits(run)
            caps = [
                *([] if part.usd is None else [f"{money(part.usd)} of {money(run.usd)}"]),
                *([] if part.tokens is None else [f"{part.tokens} of {run.tokens} tokens"]),
            ]
            lines.append(
                f"omk: budget of shard {cut.shard}: {' and '.join(caps)} ({cut.share:.1%} of the weight)"
            )
        return header_lines(config, lines)


def shard_limits(config: pytest.Config, settings: Settings) -> BudgetLimits:
    """The caps of this process's shard (the run's when not sharded); asked when the budget is built."""
    limits = BudgetLimits(settings.budget_usd, settings.budget_tokens)
    plugin = config.pluginmanager.get_plugin("omk-shard-cut")
    cut = plugin.cut if isinstance(plugin, ShardCut) else None
    return limits if cut is None else cut.limits(limits)


def reordering_plugins(config: pytest.Config) -> list[str]:
    """The plugins (not pytest's nor this one's) that implement ``pytest_collection_modifyitems``."""
    names = []
    for impl in config.hook.pytest_collection_modifyitems.get_hookimpls():
        module = getattr(impl.plugin, "__name__", type(impl.plugin).__module__)
        if not str(module).startswith(_OWN) and impl.plugin_name not in names:
            names.append(impl.plugin_name)
    return names or ["none found"]


def _narrow_built_budget(config: pytest.Config, settings: Settings) -> None:
    """A budget built before the cut (an app's gateway takes it while the first file is collected)
    gets this shard's part now, before any call (an xdist worker's share of it, as when built)."""
    calls = getattr(config.pluginmanager.get_plugin("omk-session"), "calls", None)
    budget = vars(calls).get("budget") if calls is not None else None  # built (a cached property)?
    if isinstance(budget, Budget):
        workers = int(getattr(config, "workerinput", {}).get("workercount", 1))
        budget.narrow(shard_limits(config, settings).share(workers))
