"""The run's spending cap (``--omk-budget-usd``, ``--omk-budget-tokens``): the admission rule every
live call passes before it is sent, a check over the run's call ledger
(:class:`~pytest_omk.models.accounting.CallLedger`, where every call is recorded once).

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
from dataclasses import dataclass

from pytest_omk._util.money import money
from pytest_omk.errors import BudgetExhausted
from pytest_omk.models.accounting import CallLedger, Usage

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


class Budget:
    """Admits live calls while the projected spend stays within the limits (see the module doc)."""

    def __init__(self, limits: BudgetLimits, ledger: CallLedger, shown: BudgetLimits | None = None) -> None:
        """``limits``: this process's caps; ``ledger``: where this process's calls are recorded
        (what was spent is read there); ``shown``: the run's caps, named in a refusal (an xdist
        worker has its share of them)."""
        self.limits = limits
        self.ledger = ledger
        self._shown = shown or limits
        self._lock = threading.Lock()
        self._in_flight = 0
        self._exhausted: str | None = None
        self.refused = 0
        """Live calls the budget refused."""

    def narrow(self, limits: BudgetLimits) -> None:
        """Set this process's caps to ``limits`` before its first call (a shard's part of the run's
        caps is known once the items are collected; an app's gateway holds the budget before)."""
        with self._lock:
            self.limits = limits

    def admit(self) -> None:
        """Before a live call is sent: count it in flight, or raise :class:`BudgetExhausted`."""
        with self._lock:
            if self._exhausted is None:
                self._exhausted = self._over(self.ledger.total())
            if self._exhausted is not None:
                self.refused += 1
                raise BudgetExhausted(self._exhausted)
            self._in_flight += 1

    def settle(self) -> None:
        """A call admitted earlier ended; what it used is in the ledger already (noted first)."""
        with self._lock:
            self._in_flight -= 1

    @property
    def exhausted(self) -> bool:
        """Whether a call was refused: every later one will be."""
        with self._lock:
            return self._exhausted is not None

    @property
    def _here(self) -> str:
        return "" if self._shown == self.limits else " in this worker, which has its share of the cap"

    def _over(self, spent: Usage) -> str | None:
        """Why one more call would pass a cap (``None``: it would not). Called under the lock."""
        waiting = self._in_flight + 1  # the calls in flight and this one
        calls = spent.answered_live
        usd = self.limits.usd
        if usd is not None:
            cost = spent.live_cost_usd
            mean = cost / spent.live_priced if spent.live_priced else 0.0
            if cost >= usd or cost + waiting * mean > usd + 1e-12:
                return f"{SKIP_PREFIX}: --omk-budget-usd {self._shown.usd:g} spent ({money(cost)} on {calls} live calls{self._here})"
        tokens = self.limits.tokens
        if tokens is not None:
            used = spent.live_tokens
            mean_tokens = used / calls if calls else 0.0
            if used >= tokens or used + waiting * mean_tokens > tokens:
                return f"{SKIP_PREFIX}: --omk-budget-tokens {self._shown.tokens} spent ({used} tokens on {calls} live calls{self._here})"
        return None
