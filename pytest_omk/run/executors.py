"""Turn an executor spec (``--omk-executor`` / ``--omk-judge``) into an :class:`Executor`.

Specs: ``openai``, ``anthropic``, ``agent`` (``agent:openai`` / ``agent:anthropic`` pick its API
directly), ``echo``, ``python:pkg.mod:attr``, ``command:CMD``, or any other string, which is run as
a command line (as upstream does).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pytest_omk.errors import ConfigError
from pytest_omk.execute.base import AdaptedExecutor, AnsweringExecutor, Executor
from pytest_omk.execute.local import CallableExecutor, CommandExecutor, EchoExecutor
from pytest_omk.execute.pricing import PriceBook

if TYPE_CHECKING:
    from pytest_omk.agent.options import AgentOptions


def _openai(timeout: float, env: Mapping[str, str] | None, prices: PriceBook) -> Executor:
    from pytest_omk.execute.openai import OpenAIExecutor

    return OpenAIExecutor(timeout=timeout, env=env, prices=prices)


def _anthropic(timeout: float, env: Mapping[str, str] | None, prices: PriceBook) -> Executor:
    from pytest_omk.execute.anthropic import AnthropicExecutor

    return AnthropicExecutor(timeout=timeout, env=env, prices=prices)


def _echo(timeout: float, env: Mapping[str, str] | None, prices: PriceBook) -> Executor:
    return EchoExecutor()


_BUILTINS: dict[str, Callable[[float, Mapping[str, str] | None, PriceBook], Executor]] = {
    "openai": _openai,
    "anthropic": _anthropic,
    "echo": _echo,
}
_AGENT_SPECS = ("agent", "agent:openai", "agent:anthropic")


def is_agent_spec(spec: str) -> bool:
    """Whether ``spec`` names the built-in agent (the only executor that reads agent options)."""
    return spec.strip() in _AGENT_SPECS


def _agent(spec: str, timeout: float, options: AgentOptions | None) -> Executor:
    # Imported here: the agent package (and the MCP SDK behind it) costs nothing unless used.
    from pytest_omk.agent import AgentExecutor, AgentOptions

    chosen = options or AgentOptions()
    if spec != "agent":
        chosen = replace(chosen, api=spec.removeprefix("agent:"))
    return AgentExecutor(chosen, timeout=timeout)


def resolve_callable(target: str) -> Callable[..., Any]:
    """Import ``pkg.mod:attr`` (``attr`` may be dotted) and return the callable."""
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(f"python executor {target!r} must look like python:package.module:function")
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"cannot import {module_name!r} for the python executor: {exc}") from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ConfigError(f"{module_name!r} has no attribute {attr!r}") from None
    if not callable(obj):
        raise ConfigError(f"python executor {target!r} is not callable")
    return obj  # type: ignore[no-any-return]


def callable_name(obj: Any) -> str:
    """``module:qualname`` of a callable a hook or fixture returned (its executor id's tail)."""
    target = obj if inspect.isfunction(obj) or inspect.ismethod(obj) else type(obj)
    module = getattr(target, "__module__", None) or "?"
    return f"{module}:{getattr(target, '__qualname__', type(obj).__name__)}"


def wrap_callable(obj: Any, name: str) -> Executor:
    """An :class:`Executor` as is, an object that only answers with the optional abilities added,
    or a plain callable wrapped into one."""
    if isinstance(obj, Executor):
        return obj
    if isinstance(obj, AnsweringExecutor):
        return AdaptedExecutor(obj)
    if callable(obj):
        return CallableExecutor(obj, name=name)
    raise ConfigError(f"{name} is neither an executor nor a callable")


def make_executor(
    spec: str,
    *,
    timeout: float,
    capabilities: tuple[str, ...] = (),
    agent: AgentOptions | None = None,
    env: Mapping[str, str] | None = None,
    prices: PriceBook | None = None,
) -> Executor:
    """Build the executor named by ``spec``; raise :class:`ConfigError` when it cannot be.

    ``agent`` configures the ``agent`` executor (``--omk-agent-*``, MCP config, its prices); other
    specs ignore it. ``env``: where the ``openai`` and ``anthropic`` executors read their variables
    (default ``os.environ``; the judge is given the variables as they were before an app's gateway).
    ``prices`` prices the calls of the ``openai`` and ``anthropic`` executors (default: list prices
    at the provider's own endpoint only).
    """
    spec = spec.strip()
    if not spec:
        raise ConfigError("the executor spec is empty")
    if spec in _AGENT_SPECS:
        return _agent(spec, timeout, agent)
    builtin = _BUILTINS.get(spec)
    if builtin is not None:
        return builtin(timeout, env, prices or PriceBook())
    if spec.startswith("python:"):
        target = spec.removeprefix("python:")
        return wrap_callable(resolve_callable(target), target)
    command = spec.removeprefix("command:")
    return CommandExecutor(command, timeout=timeout, supports_mocks="mocks" in capabilities)
