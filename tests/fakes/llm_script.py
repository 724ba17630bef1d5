"""What the fake model server answers: replies, rules that pick them, and faults to inject.

A script can be built in Python or loaded from JSON (for the standalone server)::

    {
      "default": "fallback reply",
      "latency": 0.0,
      "rules": [
        {"match": "capital of France", "reply": "Paris"},
        {"match": "flaky", "replies": [{"fault": "server_error"}, "ok"]},
        {"system": "You are a judge", "reply": {"text": "{\\"score\\": 4}", "usage": [10, 5]}},
        {"match": "weather", "reply": {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]}},
        {"prompt": "weather", "tool_result": "sunny", "reply": "It is sunny in Oslo."}
      ],
      "faults": [
        {"kind": "rate_limit", "retry_after": "1", "first": 2},
        {"kind": "garbage", "probability": 0.1, "seed": 7}
      ]
    }

A reply is a string (text), a reply object (``text``, ``tool_calls``, ``usage`` as
``[input, output]``, ``finish_reason``, ``model``, ``latency``) or a fault object (``fault`` plus
the :class:`Fault` fields). A rule's ``replies`` are consumed in order; the last one then repeats.

For agent (tool-calling) conversations two more conditions help: ``prompt`` is a substring of the
*first* user message (the task, whatever turn the conversation is at; with the Anthropic API the
last user message holds tool results instead), and ``tool_result`` a substring of the tool results
sent since the model's last answer (so a rule can react to what a tool returned).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

FaultKind = Literal[
    "rate_limit", "server_error", "unavailable", "status", "hang", "garbage", "drop", "slow_body"
]
FAULT_KINDS: tuple[str, ...] = get_args(FaultKind)
Api = Literal["openai", "anthropic"]


@dataclass(frozen=True)
class ToolCallSpec:
    """One tool call the fake model makes (OpenAI ``tool_calls`` / Anthropic ``tool_use``)."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True)
class Reply:
    """A successful answer. ``usage`` overrides the word-count token estimate."""

    text: str | None = ""
    tool_calls: tuple[ToolCallSpec, ...] = ()
    usage: tuple[int, int] | None = None
    finish_reason: str | None = None
    model: str | None = None
    latency: float = 0.0


@dataclass(frozen=True)
class Fault:
    """A failure to act out instead of answering.

    - ``rate_limit``: 429 with ``Retry-After: retry_after`` (seconds or an HTTP-date string).
    - ``server_error`` / ``unavailable``: 500 / 503 (``retry_after`` sent when given).
    - ``status``: any ``status`` with ``message`` as the provider's error message.
    - ``hang``: say nothing for ``seconds`` (default 30, cut short when the server stops), then close.
    - ``garbage``: 200 with a body that is not JSON.
    - ``drop``: headers and half a body, then the connection is closed.
    - ``slow_body``: the right reply, sent in small chunks ``seconds`` apart.
    """

    kind: FaultKind
    status: int | None = None
    message: str | None = None
    retry_after: str | None = None
    seconds: float | None = None

    def http_status(self) -> int:
        """The status code this fault answers with (when it answers at all)."""
        defaults = {"rate_limit": 429, "server_error": 500, "unavailable": 503, "status": 400}
        return self.status or defaults.get(self.kind, 200)


Answer = Reply | Fault


@dataclass
class Rule:
    """Answer with ``replies`` (in order, the last repeating) when every given condition holds."""

    replies: list[Answer]
    match: str | None = None
    """Substring of the last user message."""
    system: str | None = None
    """Substring of the system prompt."""
    api: Api | None = None
    predicate: Callable[[Any], bool] | None = None
    """Any test on the :class:`~tests.fakes.fake_llm.RecordedRequest` (Python scripts only)."""
    latency: float | None = None
    used: int = 0
    prompt: str | None = None
    """Substring of the first user message (the task of an agent conversation)."""
    tool_result: str | None = None
    """Substring of the tool results sent since the model's last answer."""

    def matches(self, api: Api, user: str, system: str, request: Any) -> bool:
        """Whether this rule applies to a request."""
        return (
            (self.match is None or self.match in user)
            and (self.prompt is None or self.prompt in getattr(request, "prompt", ""))
            and (self.tool_result is None or self.tool_result in getattr(request, "tool_result", ""))
            and (self.system is None or self.system in system)
            and (self.api is None or self.api == api)
            and (self.predicate is None or bool(self.predicate(request)))
        )

    def peek(self) -> Answer:
        """The reply :meth:`next_answer` would give, without using it up."""
        return self.replies[min(self.used, len(self.replies) - 1)]

    def next_answer(self) -> Answer:
        """The next reply in order (the last one once the list is used up)."""
        answer = self.peek()
        self.used += 1
        return answer


@dataclass
class FaultTrigger:
    """When an injected fault fires: the first ``first`` matching calls, every call, or at random."""

    fault: Fault
    first: int | None = None
    every: bool = False
    probability: float = 0.0
    seed: int | None = 0
    match: str | None = None
    api: Api | None = None
    unless: str | None = None
    """Calls whose user text contains this are never faulted by this trigger."""
    seen: int = 0
    rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    def fires(self, api: Api, user: str) -> bool:
        """Count the call and decide (``first`` is counted over matching calls only)."""
        if (self.match is not None and self.match not in user) or (self.api is not None and self.api != api):
            return False
        if self.unless is not None and self.unless in user:
            return False
        self.seen += 1
        if self.every or (self.first is not None and self.seen <= self.first):
            return True
        return self.probability > 0 and self.rng.random() < self.probability


def to_answer(spec: str | Mapping[str, Any] | Answer) -> Answer:
    """A reply or fault from its script form (a string is reply text)."""
    if isinstance(spec, Reply | Fault):
        return spec
    if isinstance(spec, str):
        return Reply(text=spec)
    data = dict(spec)
    if "fault" in data:
        kind = data.pop("fault")
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {kind!r}; expected one of {', '.join(FAULT_KINDS)}")
        return to_fault({"kind": kind, **data})
    calls = tuple(
        c if isinstance(c, ToolCallSpec) else ToolCallSpec(c["name"], c.get("arguments", {}), c.get("id"))
        for c in data.pop("tool_calls", ())
    )
    usage = data.pop("usage", None)
    return Reply(tool_calls=calls, usage=tuple(usage) if usage is not None else None, **data)


def to_fault(spec: Mapping[str, Any] | Fault) -> Fault:
    """A fault from its script form; a numeric ``retry_after`` becomes the header's text."""
    if isinstance(spec, Fault):
        return spec
    data = dict(spec)
    if data.get("kind") not in FAULT_KINDS:
        raise ValueError(f"unknown fault kind {data.get('kind')!r}; expected one of {', '.join(FAULT_KINDS)}")
    if data.get("retry_after") is not None:
        data["retry_after"] = str(data["retry_after"])
    return Fault(**data)


def to_rule(spec: Mapping[str, Any]) -> Rule:
    """A rule from its script form: ``reply`` or ``replies`` plus conditions."""
    data = dict(spec)
    if "reply" in data:
        replies: Sequence[Any] = [data.pop("reply")]
    else:
        replies = data.pop("replies", None) or []
    if not replies:
        raise ValueError(f"a rule needs a reply or replies: {spec!r}")
    return Rule(replies=[to_answer(r) for r in replies], **data)


def to_trigger(spec: Mapping[str, Any]) -> FaultTrigger:
    """An injected fault from its script form: fault fields plus ``first``/``every``/``probability``."""
    data = dict(spec)
    when = {k: data.pop(k) for k in ("first", "every", "probability", "seed", "match", "api") if k in data}
    if "fault" in data:
        data["kind"] = data.pop("fault")
    return FaultTrigger(to_fault(data), **when)
