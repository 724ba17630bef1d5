"""The agent executor's settings (``--omk-agent-*`` and the MCP config) as one value."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from pytest_omk.agent.providers import AGENT_APIS
from pytest_omk.errors import ConfigError
from pytest_omk.execute.pricing import Price, PriceBook
from pytest_omk.resolve.mcp_servers import find_mcp_config

DEFAULT_MAX_TURNS = 20
DEFAULT_TOOL_TIMEOUT = 60.0


class AgentSettings(Protocol):
    """The fields of :class:`pytest_omk.config.settings.Settings` the agent reads (no pytest import here)."""

    @property
    def rootdir(self) -> Path:
        """Pytest's rootdir."""
        ...

    @property
    def agent_api(self) -> str:
        """``--omk-agent-api``."""
        ...

    @property
    def agent_max_turns(self) -> int:
        """``--omk-agent-max-turns``."""
        ...

    @property
    def agent_tool_timeout(self) -> float:
        """``--omk-agent-tool-timeout``."""
        ...

    @property
    def agent_env(self) -> tuple[str, ...]:
        """``--omk-agent-env``."""
        ...

    @property
    def mcp_config(self) -> str | None:
        """``--omk-mcp-config``."""
        ...

    @property
    def max_tokens(self) -> int | None:
        """``--omk-max-tokens``."""
        ...

    @property
    def prices(self) -> Mapping[str, Price]:
        """The ini key ``omk_prices``."""
        ...


@dataclass(frozen=True)
class AgentOptions:
    """How the agent runs: provider API, turn bound, per-tool timeout, MCP config file."""

    api: str = "openai"
    max_turns: int = DEFAULT_MAX_TURNS
    tool_timeout: float = DEFAULT_TOOL_TIMEOUT
    mcp_config: str | Path | None = None
    """The MCP config file whose stdio servers' tools are offered (relative to ``rootdir``)."""
    rootdir: Path | None = None
    """Where a relative ``mcp_config`` is found and ``.mcp.json`` is looked for (``None``: no lookup)."""
    prices: PriceBook = field(default_factory=PriceBook)
    """What the provider's calls cost (``omk_prices`` and the list prices)."""
    max_tokens: int | None = None
    """``--omk-max-tokens``: the most tokens of each answer of the provider (``None``: its default)."""
    env: tuple[str, ...] = ()
    """Variables ``Bash`` receives beyond its allow-list (``--omk-agent-env``, see :mod:`.environment`)."""

    def __post_init__(self) -> None:
        if self.api not in AGENT_APIS:
            raise ConfigError(f"--omk-agent-api must be one of {', '.join(AGENT_APIS)}, got {self.api!r}")
        if self.max_turns < 1:
            raise ConfigError(f"--omk-agent-max-turns must be >= 1, got {self.max_turns}")
        if self.tool_timeout <= 0:
            raise ConfigError(f"--omk-agent-tool-timeout must be > 0, got {self.tool_timeout}")

    @classmethod
    def from_settings(cls, settings: AgentSettings) -> AgentOptions:
        """Options from the run's settings (the MCP config file is looked up only when an agent
        executor is built, so other executors never read it), its prices included."""
        return cls(
            api=settings.agent_api,
            max_turns=settings.agent_max_turns,
            tool_timeout=settings.agent_tool_timeout,
            mcp_config=settings.mcp_config,
            rootdir=settings.rootdir,
            prices=PriceBook(settings.prices),
            max_tokens=settings.max_tokens,
            env=settings.agent_env,
        )

    def mcp_config_path(self) -> Path | None:
        """The MCP config file to use: ``mcp_config`` (must exist), else ``.mcp.json`` at ``rootdir``."""
        if self.rootdir is None:
            return Path(self.mcp_config) if self.mcp_config else None
        return find_mcp_config(self.rootdir, self.mcp_config)
