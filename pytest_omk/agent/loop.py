"""The ``agent`` executor: a model in a tool-calling loop over a temporary copy of the sample's cwd.

One :meth:`AgentExecutor.execute` is one whole agent run: ask the model, run the tools it calls,
send the results back, and repeat until it answers without calling a tool or the turn bound is
reached. From the pipeline's point of view this is a single model call, recorded and replayed as
one :class:`ExecutionResult` whose trace (``turns``, ``toolCalls``, ``mockStats``) replays too,
without any tool running again.

Each tool call goes through, in order: the catalogue (a tool that is not offered, because it does
not exist or ``allowedTools`` leaves it out, is refused), the mocks (a hit answers instead of the
tool; a strict miss is refused), then the tool itself. Every call lands in the trace under its
canonical name, with its input, output and success, whatever happened to it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from pytest_omk.agent.allowed import check_allowed_entries, is_allowed
from pytest_omk.agent.isolation import source_directory, working_copy
from pytest_omk.agent.mcp_tools import McpTools, load_mcp_servers
from pytest_omk.agent.mocks import MockBook, V8Lower
from pytest_omk.agent.options import AgentOptions
from pytest_omk.agent.providers import CallRequest, Messages, ModelTurn, Provider, ToolReply, make_provider
from pytest_omk.agent.sandbox import Sandbox
from pytest_omk.agent.tools import BUILTIN_NAMES, BUILTIN_SPECS, BuiltinTools, ToolResult, ToolSpec
from pytest_omk.execute.base import Endpoint, ExecutorDefaults
from pytest_omk.models.results import ExecutionResult, ToolCall, Turn
from pytest_omk.models.run import ExecutionRequest
from pytest_omk.models.tool_names import canonical_tool_name, same_tool
from pytest_omk.recordings.scrub import Scrubber, environment_snapshot

STOP_MAX_TURNS = "max_turns"
MAX_TOOL_CALLS_PER_TURN = 64
"""Tool calls run from one model answer; the rest are answered with :data:`TOO_MANY_CALLS`."""
TOO_MANY_CALLS = f"[omk-agent] not run: more than {MAX_TOOL_CALLS_PER_TURN} tool calls in one turn"
NOT_RUN = "[omk-agent] not run: the turn limit (--omk-agent-max-turns) was reached"
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_-]")
_WORKDIR_NOTE = (
    "You are working in the directory {root}. Relative paths in tool arguments are taken from there."
)


def _offered_name(name: str) -> str:
    # Provider APIs accept only [A-Za-z0-9_-]{1,64} as tool names.
    return _UNSAFE_NAME.sub("_", name)[:64] or "tool"


def _mock_only_spec(name: str) -> ToolSpec:
    return ToolSpec(
        _offered_name(name), f"The {name} tool.", {"type": "object", "additionalProperties": True}
    )


def _sum(values: Sequence[float | None]) -> float | None:
    """The total, or ``None`` when any part is unknown (a partial sum would understate it)."""
    if not values or any(v is None for v in values):
        return None
    return sum(v for v in values if v is not None)


class AgentExecutor(ExecutorDefaults):
    """``--omk-executor agent``: see the module docstring and docs/agents.md."""

    supports_mocks = True

    def __init__(
        self,
        options: AgentOptions | None = None,
        *,
        timeout: float = 120.0,
        env: Mapping[str, str] | None = None,
        provider: Provider | None = None,
    ) -> None:
        """``timeout`` bounds each provider call; tools are bounded by ``options.tool_timeout``."""
        self.options = options or AgentOptions()
        self._timeout = timeout
        self.provider = provider or make_provider(
            self.options.api, timeout, env=env, prices=self.options.prices, max_tokens=self.options.max_tokens
        )
        config = self.options.mcp_config_path()
        servers = load_mcp_servers(config) if config is not None else []
        self.mcp = McpTools(servers, timeout=self.options.tool_timeout)
        # Read on the thread that builds the executor (pytest's main thread), never per call.
        self._environ = environment_snapshot()
        self.scrubber = Scrubber.from_environment({**self._environ, **(env or {})}, self.mcp.secrets)
        self.mcp.mask = self.scrubber.text
        self.sandbox = Sandbox.detect()
        self._lower = V8Lower()  # the mocks' input_contains lower-case as JavaScript does

    @property
    def id(self) -> str:
        """``agent:<api>``: part of the recording key, so the two APIs never share recordings."""
        return f"agent:{self.provider.api}"

    @property
    def api_endpoint(self) -> Endpoint | None:
        """The provider's endpoint (its URL is part of the recording key), if it has one."""
        return self.provider.api_endpoint

    @property
    def secrets(self) -> tuple[str, ...]:
        """The MCP servers' tokens (their ``env`` values): no sink may show them."""
        return tuple(self.mcp.secrets)

    @property
    def time_budget(self) -> float:
        """Upper bound of one whole agent run: every turn may wait for the model and for a tool."""
        return self.options.max_turns * (self._timeout + self.options.tool_timeout)

    def __repr__(self) -> str:
        return f"AgentExecutor(api={self.provider.api!r}, max_turns={self.options.max_turns})"

    async def execute(self, request: ExecutionRequest) -> ExecutionResult:
        """Run the agent for ``request`` in a fresh working copy, removed afterwards."""
        check_allowed_entries(request.allowed_tools)
        book = MockBook(
            request.mocks, lower=self._lower, strict=request.mocks_strict, base_dir=request.mock_base_dir
        )
        mcp_specs = await self.mcp.specs()
        async with working_copy(source_directory(request)) as root:
            builtins = BuiltinTools(
                root,
                timeout=self.options.tool_timeout,
                environ=self._environ,
                sandbox=self.sandbox,
                env_names=self.options.env,
                mask=self.scrubber.text,
            )
            catalogue = [*BUILTIN_SPECS, *mcp_specs]
            known = [spec.name for spec in catalogue]
            # A mocked tool the agent does not have is offered anyway, so the mock can answer it.
            mock_only = {
                _offered_name(n): n for n in book.declared_tools() if not any(same_tool(n, k) for k in known)
            }
            catalogue += [_mock_only_spec(n) for n in mock_only.values()]
            offered = [
                spec
                for spec in catalogue
                if is_allowed(mock_only.get(spec.name, spec.name), request.allowed_tools)
            ]
            run = _Run(self, request, book, builtins, offered, {spec.name for spec in catalogue}, mock_only)
            system = "\n\n".join(filter(None, [request.system, _WORKDIR_NOTE.format(root=root)]))
            return await run.go(system)

    async def aclose(self) -> None:
        """Close the provider's connections, stop the MCP servers and the V8 engine."""
        try:
            await self.provider.aclose()
        finally:
            self._lower.close()
            await self.mcp.aclose()


class _Run:
    """The state of one agent run: the conversation and the trace being built."""

    def __init__(
        self,
        executor: AgentExecutor,
        request: ExecutionRequest,
        book: MockBook,
        builtins: BuiltinTools,
        offered: list[ToolSpec],
        existing: set[str],
        mock_only: dict[str, str],
    ) -> None:
        self.executor, self.request, self.book, self.builtins = executor, request, book, builtins
        self.offered = offered
        self.offered_names = {spec.name for spec in offered}
        self.existing = existing
        self.mock_only = mock_only
        """Offered name → name declared by the mock, for tools that exist only as mocks."""
        self.turns: list[Turn] = [Turn(role="user", content=request.prompt)]
        self.calls: list[ToolCall] = []
        self.answers: list[ModelTurn] = []

    async def go(self, system: str) -> ExecutionResult:
        provider = self.executor.provider
        model = self.request.model or provider.default_model
        messages: Messages = provider.start(system, self.request.prompt)
        max_turns = self.executor.options.max_turns
        stop: str | None = None
        for index in range(max_turns):
            answer = await provider.complete(messages, self.offered, model, system)
            self.answers.append(answer)
            messages.append(answer.message)
            if not answer.calls:
                stop = answer.stop_reason or "end_turn"
                self.turns.append(Turn(role="assistant", content=answer.text))
                break
            if index == max_turns - 1:
                # The answer asked for tools nobody will read the results of: recorded, not run.
                cancelled = [self._record(c, ToolResult.failed(NOT_RUN, "cancelled")) for c in answer.calls]
                self.turns.append(Turn(role="assistant", content=answer.text, toolCalls=cancelled))
                stop = STOP_MAX_TURNS
                break
            replies = [await self._call(call) for call in answer.calls[:MAX_TOOL_CALLS_PER_TURN]]
            replies += [self._refuse(call) for call in answer.calls[MAX_TOOL_CALLS_PER_TURN:]]
            traced = self.calls[-len(replies) :]
            self.turns.append(Turn(role="assistant", content=answer.text, toolCalls=traced))
            self.turns += [Turn(role="tool", content=reply.output) for reply in replies]
            provider.add_results(messages, replies)
        return self._result(stop)

    async def _call(self, call: CallRequest) -> ToolReply:
        name = self._resolve(call.name)
        result = await self._outcome(call, name)
        # Whatever a tool printed (a mock's file, an MCP answer, Bash) loses the run's secrets
        # before the model, the trace and every report see it.
        output = self.executor.scrubber.text(self.executor.mcp.scrub(result.output))
        result = ToolResult(output, result.success, result.status)
        self._record(call, result)
        return ToolReply(call, result.output, is_error=not result.success)

    def _refuse(self, call: CallRequest) -> ToolReply:
        self._record(call, ToolResult.failed(TOO_MANY_CALLS, "cancelled"))
        return ToolReply(call, TOO_MANY_CALLS, is_error=True)

    def _resolve(self, name: str) -> str:
        """The catalogue name the model meant: exact, else the same canonical tool (``bash`` for
        ``Bash``); unknown names are returned unchanged."""
        if name in self.offered_names or name in self.existing:
            return name
        for known in [*self.offered_names, *self.existing]:
            if same_tool(known, name):
                return known
        return name

    async def _outcome(self, call: CallRequest, name: str) -> ToolResult:
        if name not in self.offered_names:
            if name in self.existing:
                allowed = ", ".join(self.request.allowed_tools or []) or "(none)"
                return ToolResult.failed(
                    f"[omk-agent] {name} is not allowed for this sample (allowedTools: {allowed})"
                )
            return ToolResult.failed(f"[omk-agent] there is no tool named {name!r}")
        if call.error is not None:
            return ToolResult.failed(f"[omk-agent] {name}: {call.error}")
        decision = self.book.intercept(self.mock_only.get(name, name), call.arguments)
        if decision.action == "hit":
            return ToolResult.failed(decision.output) if decision.error else ToolResult(decision.output)
        if decision.action == "deny":
            return ToolResult.failed(decision.output)
        if name in BUILTIN_NAMES:
            return await self.builtins.run(name, call.arguments)
        if self.executor.mcp.serves(name):
            return await self.executor.mcp.call(name, call.arguments)
        return ToolResult.failed(f"[omk-agent] {name} exists only as a mock, and no mock matched this call")

    def _record(self, call: CallRequest, result: ToolResult) -> ToolCall:
        """Add ``call`` to the trace under its canonical name (a mock-only tool: as the mock wrote it)."""
        name = self._resolve(call.name)
        traced = ToolCall(
            tool=canonical_tool_name(self.mock_only.get(name, name)) or "unknown",
            input=call.arguments,
            output=result.output,
            success=result.success,
            status=result.status,
        )
        self.calls.append(traced)
        return traced

    def _result(self, stop: str | None) -> ExecutionResult:
        texts = [a.text for a in self.answers if a.text.strip()]
        inputs: list[float | None] = [a.input_tokens for a in self.answers]
        outputs: list[float | None] = [a.output_tokens for a in self.answers]
        input_total, output_total = _sum(inputs), _sum(outputs)
        return ExecutionResult(
            output=texts[-1] if texts else "",
            inputTokens=None if input_total is None else int(input_total),
            outputTokens=None if output_total is None else int(output_total),
            costUSD=_rounded(_sum([a.cost for a in self.answers])),
            durationApiMs=round(sum(a.elapsed_ms for a in self.answers), 3),
            numTurns=len(self.answers),
            stopReason=stop,
            toolCalls=self.calls,
            turns=self.turns,
            mockStats=self.book.stats(),
        )


def _rounded(cost: float | None) -> float | None:
    # Float noise from summing many small costs (0.1 + 0.2) is not information.
    return None if cost is None else round(cost, 10)


__all__ = ["AgentExecutor", "AgentOptions", "is_allowed"]
