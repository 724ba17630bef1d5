"""The run's spending cap (``--omk-budget-usd``, ``--omk-budget-tokens``): a ledger of live calls
and the admission rule every live call passes before it is sent.

Only live calls count: a replayed call costs nothing and never asks. A call is admitted while the
spend *projected* to its end stays within the cap: what finished calls cost, plus the calls in
flight and this one at the mean cost of the calls so far. Once a call is refused the budget is
spent for the rest of the run (later calls are refused too, even if calls in flight end cheaper
than projected), so the samples left stop cleanly instead of trickling in. Calls in flight always
finish. Plain Python, thread-safe: the call loop admits and settles, the main thread reads totals.

Cost is only known for priced calls (the provider's own price, or the user's). An unpriced call
still counts by its tokens: the token cap sees it, the dollar cap cannot, and the summary says how
many calls and tokens the dollar figure leaves out.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from pytest_omk.models.results import ExecutionResult

from pytest_omk.errors import BudgetExhausted

Role = Literal["model", "judge"]


SKIP_PREFIX = BudgetExhausted.PREFIX
"""Every sample the budget stops is skipped with a reason starting with this."""


@dataclass(frozen=True)
class BudgetLimits:
    """The caps; ``None`` where no cap is set."""

    usd: float | None = None
    tokens: int | None = None

    @property
    def active(self) -> bool:
        """Whether any cap is set."""
        return self.usd is not None or self.tokens is not None

    def share(self, workers: int) -> BudgetLimits:
        """An xdist worker's part of the caps (the run's caps split evenly across workers)."""
        if workers <= 1:
            return self
        return BudgetLimits(
            None if self.usd is None else self.usd / workers,
            None if self.tokens is None else max(1, self.tokens // workers),
        )


@dataclass
class RoleTotals:
    """Live calls of one role (model under test, or judge)."""

    calls: int = 0
    priced_calls: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0
    unpriced_tokens: int = 0
    tokens: int = 0

    def count(self, tokens: int, cost_usd: float | None) -> None:
        """Count one finished live call of ``tokens`` tokens costing ``cost_usd`` (``None``: no price)."""
        self.calls += 1
        self.tokens += tokens
        if cost_usd is None:
            self.unpriced_calls += 1
            self.unpriced_tokens += tokens
        else:
            self.priced_calls += 1
            self.cost_usd += cost_usd

    def merge(self, other: RoleTotals) -> None:
        """Add ``other``'s counts to these."""
        for name in ("calls", "priced_calls", "cost_usd", "unpriced_calls", "unpriced_tokens", "tokens"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def as_dict(self) -> dict[str, float | int]:
        """The JSON form (the report's ``roles`` entries, and what a worker sends)."""
        return {
            "calls": self.calls,
            "pricedCalls": self.priced_calls,
            "costUSD": self.cost_usd,
            "unpricedCalls": self.unpriced_calls,
            "unpricedTokens": self.unpriced_tokens,
            "tokens": self.tokens,
        }

    @classmethod
    def of(cls, data: dict[str, float | int]) -> RoleTotals:
        """Read :meth:`as_dict`'s form back."""
        return cls(
            calls=int(data.get("calls", 0)),
            priced_calls=int(data.get("pricedCalls", 0)),
            cost_usd=float(data.get("costUSD", 0.0)),
            unpriced_calls=int(data.get("unpricedCalls", 0)),
            unpriced_tokens=int(data.get("unpricedTokens", 0)),
            tokens=int(data.get("tokens", 0)),
        )


@dataclass
class Spend:
    """What the live calls of a run (or one xdist worker) cost, per role."""

    roles: dict[str, RoleTotals] = field(
        default_factory=lambda: {"model": RoleTotals(), "judge": RoleTotals()}
    )
    refused: int = 0
    """Live calls the budget refused."""

    def total(self) -> RoleTotals:
        """Every role's calls together."""
        whole = RoleTotals()
        for totals in self.roles.values():
            whole.merge(totals)
        return whole

    def merge(self, other: Spend) -> None:
        """Add what ``other`` spent (another xdist worker's ledger)."""
        for role, totals in other.roles.items():
            self.roles.setdefault(role, RoleTotals()).merge(totals)
        self.refused += other.refused

    def as_dict(self) -> dict[str, object]:
        """The JSON form a worker sends to the controller."""
        return {"roles": {role: t.as_dict() for role, t in self.roles.items()}, "refused": self.refused}

    @classmethod
    def of(cls, data: dict[str, object]) -> Spend:
        """Read :meth:`as_dict`'s form back (unknown parts are ignored)."""
        roles = data.get("roles")
        spend = cls()
        if isinstance(roles, dict):
            spend.roles = {str(role): RoleTotals.of(t) for role, t in roles.items() if isinstance(t, dict)}
        refused = data.get("refused")
        spend.refused = refused if isinstance(refused, int) else 0
        return spend


def merged(parts: Iterable[Spend | None]) -> Spend | None:
    """The sum of the ledgers given (``None`` when there is none: no budget in this run)."""
    present = [part for part in parts if part is not None]
    if not present:
        return None
    total = Spend()
    for part in present:
        total.merge(part)
    return total


class Budget:
    """Admits live calls while the projected spend stays within the limits (see the module doc)."""

    def __init__(self, limits: BudgetLimits, shown: BudgetLimits | None = None) -> None:
        """``limits``: this process's caps; ``shown``: the run's, named in a refusal (an xdist
        worker has its share of them)."""
        self.limits = limits
        self._shown = shown or limits
        self._lock = threading.Lock()
        self._spend = Spend()
        self._in_flight = 0
        self._exhausted: str | None = None

    def narrow(self, limits: BudgetLimits) -> None:
        """Set this process's caps to ``limits`` before its first call (a shard's part of the run's
        caps is known once the items are collected; an app's gateway holds the budget before)."""
        with self._lock:
            self.limits = limits

    def admit(self) -> None:
        """Before a live call is sent: count it in flight, or raise :class:`BudgetExhausted`."""
        with self._lock:
            if self._exhausted is None:
                self._exhausted = self._over()
            if self._exhausted is not None:
                self._spend.refused += 1
                raise BudgetExhausted(self._exhausted)
            self._in_flight += 1

    def settle(self, role: Role, result: ExecutionResult | None) -> None:
        """A call admitted earlier ended (``None``: it failed, and what it cost is not known)."""
        if result is None:
            with self._lock:
                self._in_flight -= 1
        else:
            self.settle_usage(role, (result.inputTokens or 0) + (result.outputTokens or 0), result.costUSD)

    def settle_usage(self, role: Role, tokens: int, cost_usd: float | None) -> None:
        """A call admitted earlier ended with ``tokens`` tokens costing ``cost_usd`` (``None``: no
        price), as far as they are known (an app's call through the gateway: read from the answer)."""
        with self._lock:
            self._in_flight -= 1
            self._spend.roles.setdefault(role, RoleTotals()).count(tokens, cost_usd)

    def spend(self) -> Spend:
        """A copy of what was spent so far."""
        with self._lock:
            copy = Spend()
            copy.merge(self._spend)
            return copy

    @property
    def exhausted(self) -> bool:
        """Whether a call was refused: every later one will be."""
        with self._lock:
            return self._exhausted is not None

    @property
    def _here(self) -> str:
        return "" if self._shown == self.limits else " in this worker, which has its share of the cap"

    def _over(self) -> str | None:
        """Why one more call would pass a cap (``None``: it would not). Called under the lock."""
        total = self._spend.total()
        waiting = self._in_flight + 1  # the calls in flight and this one
        usd = self.limits.usd
        if usd is not None:
            mean = total.cost_usd / total.priced_calls if total.priced_calls else 0.0
            if total.cost_usd >= usd or total.cost_usd + waiting * mean > usd + 1e-12:
                return f"{SKIP_PREFIX}: --omk-budget-usd {self._shown.usd:g} spent (${total.cost_usd:.4f} on {total.calls} live calls{self._here})"
        tokens = self.limits.tokens
        if tokens is not None:
            mean_tokens = total.tokens / total.calls if total.calls else 0.0
            if total.tokens >= tokens or total.tokens + waiting * mean_tokens > tokens:
                return f"{SKIP_PREFIX}: --omk-budget-tokens {self._shown.tokens} spent ({total.tokens} tokens on {total.calls} live calls{self._here})"
        return None
