"""Who called a model, what the call used and what it cost: one record per model call.

Every model call of a run (the model under test's and the judge's) is answered through the one
call path, which notes it here as a :class:`CallRecord`: the role that made it, whether it was live
or replayed (or failed with no answer), its tokens and its cost (``None``: the executor reported
none, which is "unknown", never 0). The records of one sample attempt are kept in its
:class:`CallLog`, which also passes each to the process's :class:`RunLedger`.

Readers: the per-sample record and the report totals (:meth:`CallLog.usage`, :class:`Usage`), and
whatever limits what a run may spend (:meth:`RunLedger.spent`). Plain Python, thread-safe: calls are
noted on the call loop's thread and read from pytest's.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # loaded with the plugin: no pydantic model yet
    from pytest_omk.models.results import ExecutionResult

Role = Literal["model", "judge"]
ROLES: tuple[Role, ...] = ("model", "judge")
"""``model``: the model under test (the executor); ``judge``: the LLM judge."""


def role_of(purpose: str) -> Role:
    """The role of a call made for ``purpose`` (the request's ``execute`` or ``judge``)."""
    return "judge" if purpose == "judge" else "model"


@dataclass(frozen=True)
class CallRecord:
    """One model call: who made it, how it was answered, what it used."""

    role: Role
    replayed: bool = False
    """Answered from a recording (nothing was spent now; tokens and cost are the recorded ones)."""
    failed: bool = False
    """A live call that ended without an answer (after its retries): tokens and cost unknown."""
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    """``None``: the executor reported no cost."""
    app_calls: tuple[int, int] | None = None
    """An app under test's answer: the ``(live, replayed)`` model calls it made while it answered,
    counted instead of the app's own run (it always runs); tokens and cost are what it reported."""
    latency_ms: float | None = None
    """How long the answer took: measured when live, as recorded when replayed (``--omk-store-durations``)."""

    @property
    def live(self) -> bool:
        """Whether the call reached the model now (answered or failed)."""
        return not self.replayed

    def counts(self) -> tuple[int, int]:
        """The model calls this record stands for: ``(live, replayed)``."""
        if self.app_calls is not None:
            return self.app_calls
        return (0, 1) if self.replayed else (1, 0)

    @classmethod
    def answered(cls, role: Role, result: ExecutionResult) -> CallRecord:
        """The record of a call answered with ``result``."""
        app = result.appCalls
        return cls(
            role,
            replayed=bool(result.replayed),
            input_tokens=result.inputTokens,
            output_tokens=result.outputTokens,
            cost_usd=result.costUSD,
            app_calls=None if app is None else (app.live, app.replayed),
            latency_ms=result.latencyMs,
        )


@dataclass
class Usage:
    """The calls of one role, summed (a sample's, or a whole run's)."""

    calls: int = 0
    live: int = 0
    replayed: int = 0
    failed: int = 0
    input_tokens: int | None = None
    output_tokens: int | None = None
    costs: list[float] = field(default_factory=list)
    """The reported costs, in call order (summed left to right when shown, as the reference sums)."""
    cost_unknown: int = 0
    """Answered calls whose executor reported no cost."""

    def add(self, record: CallRecord) -> None:
        """Count ``record``."""
        live, replayed = record.counts()
        self.calls += live + replayed
        self.replayed += replayed
        self.live += live
        self.failed += record.failed
        self.input_tokens = _plus(self.input_tokens, record.input_tokens)
        self.output_tokens = _plus(self.output_tokens, record.output_tokens)
        if record.cost_usd is not None:
            self.costs.append(record.cost_usd)
        elif not record.failed and live + replayed:
            self.cost_unknown += 1

    @classmethod
    def of(cls, records: Iterable[CallRecord]) -> Usage:
        """The usage of ``records``."""
        usage = cls()
        for record in records:
            usage.add(record)
        return usage

    def cost_usd(self) -> float | None:
        """The summed reported cost, ``None`` when no call reported one."""
        if not self.costs:
            return None
        total = 0.0
        for cost in self.costs:
            total += cost
        return total


def _plus(total: int | None, value: int | None) -> int | None:
    if value is None:
        return total
    return value if total is None else total + value


class RunLedger:
    """Every call this process noted, summed by role: what the run has used so far."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._usage = {role: Usage() for role in ROLES}
        self._live_cost = dict.fromkeys(ROLES, 0.0)

    def add(self, record: CallRecord) -> None:
        """Count one call."""
        with self._lock:
            self._usage[record.role].add(record)
            if record.live and record.cost_usd is not None:
                self._live_cost[record.role] += record.cost_usd

    def spent(self, role: Role | None = None) -> float:
        """USD spent on live calls so far (replays cost nothing now): one role's, or all."""
        with self._lock:
            return self._live_cost[role] if role is not None else sum(self._live_cost.values())

    def usage(self, role: Role) -> Usage:
        """A copy of one role's totals."""
        with self._lock:
            usage = self._usage[role]
            return Usage(
                usage.calls, usage.live, usage.replayed, usage.failed, usage.input_tokens, usage.output_tokens,
                list(usage.costs), usage.cost_unknown,
            )  # fmt: skip


class CallLog:
    """The calls of one sample attempt (every ``--omk-repeat`` round of it), in the order noted."""

    def __init__(self, ledger: RunLedger | None = None) -> None:
        self._ledger = ledger
        self._lock = threading.Lock()
        self._records: list[CallRecord] = []

    def add(self, record: CallRecord) -> None:
        """Note one call (and count it in the run's ledger)."""
        with self._lock:
            self._records.append(record)
        if self._ledger is not None:
            self._ledger.add(record)

    @property
    def records(self) -> tuple[CallRecord, ...]:
        """The calls noted so far."""
        with self._lock:
            return tuple(self._records)

    def usage(self) -> dict[Role, Usage]:
        """The sample's calls summed by role."""
        records = self.records
        return {role: Usage.of(r for r in records if r.role == role) for role in ROLES}
