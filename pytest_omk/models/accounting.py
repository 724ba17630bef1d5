"""The call ledger: who called which model, what each call used and what it cost, recorded once.

Every model call of a run (the model under test's, the judge's, and each call an app under test
makes through the model gateway) is noted here once, as a :class:`CallRecord`: the role that made
it, the model, whether it was live or replayed (or failed with no answer), its tokens and its cost
(``None``: unknown, never 0), and whether its usage was estimated. A call made for a sample is noted
through that sample's :class:`CallLog`, which keeps the sample's records and passes each to the
process's :class:`CallLedger`; a call no sample can be named for goes to the ledger directly.

:class:`Usage` is the one sum of calls: it adds up (``+``), per role, per model, per sample or for
the run. Its readers: the per-sample record (:meth:`CallLog.usage`), the run's budget, which admits
a live call by reading :meth:`CallLedger.total`, and the status line's cost. Plain Python,
thread-safe: calls are noted on the call loop's and the gateway's threads and read from pytest's.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # loaded with the plugin: no pydantic model yet
    from pytest_omk.models.results import ExecutionResult

Role = Literal["model", "judge"]
ROLES: tuple[Role, ...] = ("model", "judge")
"""``model``: the model under test (the executor, or an app's model calls); ``judge``: the LLM judge."""


def role_of(purpose: str) -> Role:
    """The role of a call made for ``purpose`` (the request's ``execute`` or ``judge``)."""
    return "judge" if purpose == "judge" else "model"


@dataclass(frozen=True)
class CallRecord:
    """One model call: who made it, how it was answered, what it used."""

    role: Role
    model: str = ""
    """The model asked (or the executor's id when it names none)."""
    replayed: bool = False
    """Answered from a recording (nothing was spent now; tokens and cost are the recorded ones)."""
    failed: bool = False
    """A live call that ended without an answer (after its retries): tokens and cost unknown."""
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    """``None``: no cost is known."""
    estimated: bool = False
    """A live answer that did not say what it used: the tokens (and cost) are an estimate."""
    reported: bool = False
    """Not a call: what an app under test said it used, when none of its model calls went through
    the gateway (it reaches its model another way). Counts tokens and cost, no call, no spend."""
    latency_ms: float | None = None
    """How long the answer took: measured when live, as recorded when replayed (``--omk-store-durations``)."""

    @classmethod
    def answered(cls, role: Role, model: str, result: ExecutionResult) -> CallRecord:
        """The record of a call answered with ``result``."""
        return cls(
            role,
            model,
            replayed=bool(result.replayed),
            input_tokens=result.inputTokens,
            output_tokens=result.outputTokens,
            cost_usd=result.costUSD,
            latency_ms=result.latencyMs,
        )


@dataclass(frozen=True)
class Usage:
    """Calls summed (a sample's, a role's, a model's, the run's): ``a + b`` adds two sums."""

    calls: int = 0
    live: int = 0
    replayed: int = 0
    failed: int = 0
    input_tokens: int | None = None
    output_tokens: int | None = None
    costs: tuple[float, ...] = ()
    """The known costs, in call order (summed left to right when shown, as the reference sums)."""
    cost_unknown: int = 0
    """Answered calls with no known cost."""
    live_tokens: int = 0
    """Tokens of the answered live calls (estimates included): what a token cap counts."""
    live_cost_usd: float = 0.0
    """Cost of the priced live calls: what a dollar cap counts (replays cost nothing now)."""
    live_priced: int = 0
    """Answered live calls with a known cost."""
    unpriced_tokens: int = 0
    """Tokens of the answered live calls with no known cost (the dollar figure leaves them out)."""
    estimated: int = 0
    """Live calls whose usage was estimated."""

    @classmethod
    def of(cls, records: Iterable[CallRecord]) -> Usage:
        """The usage of ``records``."""
        total = cls()
        for record in records:
            total = total + cls.of_call(record)
        return total

    @classmethod
    def of_call(cls, record: CallRecord) -> Usage:
        """One call's usage."""
        cost = record.cost_usd
        if record.reported:
            costs = () if cost is None else (cost,)
            return cls(input_tokens=record.input_tokens, output_tokens=record.output_tokens, costs=costs)
        answered_live = not record.replayed and not record.failed
        tokens = (record.input_tokens or 0) + (record.output_tokens or 0)
        return cls(
            calls=1,
            live=int(not record.replayed),
            replayed=int(record.replayed),
            failed=int(record.failed),
            input_tokens=record.input_tokens,
            output_tokens=record.output_tokens,
            costs=() if cost is None else (cost,),
            cost_unknown=int(cost is None and not record.failed),
            live_tokens=tokens if answered_live else 0,
            live_cost_usd=cost if answered_live and cost is not None else 0.0,
            live_priced=int(answered_live and cost is not None),
            unpriced_tokens=tokens if answered_live and cost is None else 0,
            estimated=int(answered_live and record.estimated),
        )

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.calls + other.calls, self.live + other.live, self.replayed + other.replayed,
            self.failed + other.failed, _plus(self.input_tokens, other.input_tokens),
            _plus(self.output_tokens, other.output_tokens), self.costs + other.costs,
            self.cost_unknown + other.cost_unknown, self.live_tokens + other.live_tokens,
            self.live_cost_usd + other.live_cost_usd, self.live_priced + other.live_priced,
            self.unpriced_tokens + other.unpriced_tokens, self.estimated + other.estimated,
        )  # fmt: skip

    @property
    def answered_live(self) -> int:
        """Live calls that came back with an answer."""
        return self.live - self.failed

    def cost_usd(self) -> float | None:
        """The summed known cost, ``None`` when no call had one."""
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


class CallLedger:
    """Every call this process noted, summed by model and role: what the run has used so far."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._usage: dict[tuple[str, Role], Usage] = {}

    def note(self, record: CallRecord) -> None:
        """Record one call (the one place a call is counted)."""
        key = (record.model, record.role)
        with self._lock:
            self._usage[key] = self._usage.get(key, Usage()) + Usage.of_call(record)

    def usage(self, role: Role | None = None) -> Usage:
        """One role's calls summed, or every call's."""
        with self._lock:
            parts = [usage for (_, of), usage in self._usage.items() if role is None or of == role]
        return sum(parts, Usage())

    def total(self) -> Usage:
        """Every call's usage (what a budget reads)."""
        return self.usage()

    def by_model(self) -> dict[tuple[str, Role], Usage]:
        """The calls summed by model and role."""
        with self._lock:
            return dict(self._usage)


class CallLog:
    """The calls of one sample attempt (every ``--omk-repeat`` round of it), in the order noted."""

    def __init__(self, ledger: CallLedger | None = None) -> None:
        self._ledger = ledger
        self._lock = threading.Lock()
        self._records: list[CallRecord] = []
        self._in_flight = 0
        self._busy = 0.0
        self._busy_since = 0.0

    def call_sent(self) -> None:
        """A live call of the sample was sent (its first attempt got a call slot)."""
        with self._lock:
            if self._in_flight == 0:
                self._busy_since = time.monotonic()
            self._in_flight += 1

    def call_ended(self) -> None:
        """A live call of the sample that was sent has ended: answered, failed or cut off."""
        with self._lock:
            self._in_flight -= 1
            if self._in_flight == 0:
                self._busy += time.monotonic() - self._busy_since

    def busy(self) -> float:
        """Seconds during which at least one of the sample's live calls was sent and not ended: the
        sample's own time (a replayed call takes none, nor does waiting for a call slot)."""
        with self._lock:
            now = time.monotonic() if self._in_flight else self._busy_since
            return self._busy + (now - self._busy_since)

    def add(self, record: CallRecord) -> None:
        """Note one call made for the sample (it is recorded in the run's ledger)."""
        with self._lock:
            self._records.append(record)
        if self._ledger is not None:
            self._ledger.note(record)

    @property
    def records(self) -> tuple[CallRecord, ...]:
        """The calls noted so far."""
        with self._lock:
            return tuple(self._records)

    def usage(self) -> dict[Role, Usage]:
        """The sample's calls summed by role."""
        records = self.records
        return {role: Usage.of(r for r in records if r.role == role) for role in ROLES}
