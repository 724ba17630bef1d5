"""What each model call of an app under test used, read from the answer its model gateway passed on,
and the :class:`Meter` that records it in the call ledger (and asks the budget for a live call).

The gateway keeps an answer as the recordings store keeps it (``json``, ``text`` or ``base64``, see
:mod:`pytest_omk.app.calls`). Its tokens and cost are read as the built-in executors read
theirs (:func:`pytest_omk.execute.openai.usage`, :func:`pytest_omk.execute.anthropic.usage`), from
a JSON body or from a streamed one: OpenAI's last chunk that carries ``usage`` (sent when the app
asks for ``stream_options.include_usage``), Anthropic's ``message_start`` (the prompt's tokens)
updated by each ``message_delta`` (the output tokens so far).

An answer whose usage cannot be read (a stream without it, a body that is not JSON) is **estimated**,
so that a budget fails closed instead of counting nothing: one token per
:data:`BYTES_PER_TOKEN` bytes of the request body (input) and of the answer body (output), priced
like real counts when the model's price is known. A negative, non-integral or absurd count is an
:class:`~pytest_omk.errors.ExecutionError` (the caller settles the estimate and refuses the answer).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_omk.errors import ExecutionError
from pytest_omk.execute import anthropic, openai
from pytest_omk.execute.pricing import PriceBook
from pytest_omk.models.accounting import CallLedger, CallLog, CallRecord

if TYPE_CHECKING:
    from pytest_omk.execute.budget import Budget

BYTES_PER_TOKEN = 4
"""About four bytes of English text or JSON per token for the providers' tokenizers: an estimate
meant to be in the right order of magnitude, not exact."""


@dataclass(frozen=True)
class Metered:
    """One live call's tokens and cost (``None``: no price known), and whether they are estimated."""

    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    estimated: bool = False

    @property
    def tokens(self) -> int:
        """Input and output tokens together."""
        return self.input_tokens + self.output_tokens


def metered(
    identity: Mapping[str, Any], answer: Mapping[str, Any], url: str, prices: PriceBook, sent: int
) -> tuple[Metered, str | None]:
    """What the call ``identity`` answered with ``answer`` used (``sent``: the request body's
    bytes), and why the answer must be refused: an impossible count, the call then estimated."""
    try:
        return read_usage(identity, answer, url, prices, sent), None
    except ExecutionError as exc:
        return estimate("", url, prices, sent, len(_answer_bytes(answer))), str(exc)


def read_usage(
    identity: Mapping[str, Any], answer: Mapping[str, Any], url: str, prices: PriceBook, sent: int
) -> Metered:
    """:func:`metered`'s reading; raises :class:`ExecutionError` on an impossible count."""
    api = identity.get("api")
    body = identity.get("body")
    model = str(body.get("model") or "") if isinstance(body, dict) else ""
    read = anthropic.usage if api == "anthropic" else openai.usage
    data = answer_data(answer, api)
    if data is not None:
        counts = read(data, model, prices, url)
        if counts.input_tokens is not None and counts.output_tokens is not None:
            return Metered(counts.input_tokens, counts.output_tokens, counts.cost)
    return estimate(model, url, prices, sent, len(_answer_bytes(answer)))


def estimate(model: str, url: str, prices: PriceBook, sent: int, received: int) -> Metered:
    """The estimated usage of a call of ``sent`` request bytes answered with ``received`` bytes."""
    input_tokens = -(-sent // BYTES_PER_TOKEN)
    output_tokens = -(-received // BYTES_PER_TOKEN)
    cost = prices.cost(model, None, url=url, input_tokens=input_tokens, output_tokens=output_tokens)
    return Metered(input_tokens, output_tokens, cost, estimated=True)


def answer_data(answer: Mapping[str, Any], api: object) -> dict[str, Any] | None:
    """The answer's JSON body, or a streamed answer's usage in the same shape; ``None``: neither."""
    data = answer.get("json")
    if isinstance(data, dict):
        return data
    text = answer.get("text")
    if not isinstance(text, str) or "event-stream" not in str(answer.get("contentType") or ""):
        return None
    return _anthropic_stream(text) if api == "anthropic" else _openai_stream(text)


def _events(text: str) -> Iterator[dict[str, Any]]:
    """The JSON objects of a server-sent event stream's ``data:`` lines (others are skipped)."""
    for line in text.splitlines():
        if not line.startswith("data:"):
            continue
        try:
            event = json.loads(line[5:].strip())
        except ValueError:
            continue  # "[DONE]", or a line cut short
        if isinstance(event, dict):
            yield event


def _openai_stream(text: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for event in _events(text):
        if isinstance(event.get("model"), str):
            found["model"] = event["model"]
        if isinstance(event.get("usage"), dict):
            found["usage"] = event["usage"]  # the last one wins: the final chunk's totals
    return found


def _anthropic_stream(text: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    usage: dict[str, Any] = {}
    for event in _events(text):
        kind = event.get("type")
        if kind == "message_start" and isinstance(message := event.get("message"), dict):
            if isinstance(message.get("model"), str):
                found["model"] = message["model"]
            usage.update(_known(message.get("usage")))
        elif kind == "message_delta":
            usage.update(_known(event.get("usage")))  # cumulative counts: the last delta has the totals
    if usage:
        found["usage"] = usage
    return found


def _known(counts: object) -> dict[str, Any]:
    return {k: v for k, v in counts.items() if v is not None} if isinstance(counts, dict) else {}


def _answer_bytes(answer: Mapping[str, Any]) -> bytes:
    if "json" in answer:
        return json.dumps(answer["json"]).encode("utf-8")
    for key in ("text", "base64"):
        if isinstance(answer.get(key), str):
            return str(answer[key]).encode("utf-8")
    return b""


class Meter:
    """Records each model call of an app under test in the call ledger (in its sample's log when
    the call's run has one) and, for a live call, asks the run's budget first."""

    def __init__(self, ledger: CallLedger, budget: Budget | None, prices: PriceBook) -> None:
        self.ledger = ledger
        self.budget = budget
        self.prices = prices

    def replayed(
        self, identity: Mapping[str, Any], answer: Mapping[str, Any], url: str, log: CallLog | None
    ) -> None:
        """A call answered from its recording: counted at its recorded usage (unknown if unreadable)."""
        try:
            used: Metered | None = read_usage(identity, answer, url, self.prices, 0)
        except ExecutionError:
            used = None
        if used is not None and used.estimated:
            used = None  # an estimate is for what is spent now; a replay spends nothing
        self._note(log, _record(identity, used, replayed=True))

    async def live(
        self,
        identity: Mapping[str, Any],
        url: str,
        sent: int,
        forward: Callable[[], Awaitable[dict[str, Any]]],
        log: CallLog | None,
    ) -> tuple[dict[str, Any], str | None]:
        """Forward a live call (admitted by the budget first) and record what it used; the answer
        and, when its counts are impossible, why it must be refused (the call still counts)."""
        if self.budget is not None:
            self.budget.admit()
        try:
            answer = await forward()
        except BaseException:
            self._note(log, _record(identity, None, failed=True))
            if self.budget is not None:
                self.budget.settle()
            raise
        used, refused = metered(identity, answer, url, self.prices, sent)
        self._note(log, _record(identity, used))
        if self.budget is not None:
            self.budget.settle()
        return answer, refused

    def _note(self, log: CallLog | None, record: CallRecord) -> None:
        if log is not None:
            log.add(record)
        else:
            self.ledger.note(record)


def _record(
    identity: Mapping[str, Any], used: Metered | None, *, replayed: bool = False, failed: bool = False
) -> CallRecord:
    body = identity.get("body")
    model = str(body.get("model") or "") if isinstance(body, dict) else ""
    if used is None:
        return CallRecord("model", model, replayed=replayed, failed=failed)
    return CallRecord(
        "model", model, replayed=replayed, input_tokens=used.input_tokens, output_tokens=used.output_tokens,
        cost_usd=used.cost_usd, estimated=used.estimated,
    )  # fmt: skip
