"""List prices of common OpenAI and Anthropic models, to turn reported tokens into ``costUSD``.

Neither chat-completions nor the Messages API reports a price, only token counts, so the cost of a
call is computed here from the provider's published list price. A model that is not in the table
gets no cost (``None``): ``cost_max`` assertions then read as missing evidence instead of passing
on a made-up ``0``.

Prices are USD per million tokens, standard (non-batch) tier, short-context rate, as published by
the providers when this table was last revised (``PRICES_REVISED``). Prices change: the table is a
best effort, and a wrong entry only affects ``cost_max`` readings and reported totals.

Lookup is exact (case-insensitive) first, then with a date or ``-latest`` suffix removed, so that
``gpt-4o-2024-08-06`` prices as ``gpt-4o`` and ``claude-3-5-haiku-20241022`` as
``claude-3-5-haiku``. There is deliberately no fuzzy prefix match: ``gpt-4o-mini`` must never be
priced as ``gpt-4o``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

PRICES_REVISED = "2025-11"
"""When the table below was last checked against the providers' pricing pages."""


@dataclass(frozen=True)
class Price:
    """USD per million tokens for one model."""

    input: float
    output: float
    cache_read: float | None = None
    """Price of prompt tokens served from the provider's prompt cache (``None``: the input price)."""
    cache_write: float | None = None
    """Price of prompt tokens written to the cache (Anthropic; ``None``: the input price)."""


def _anthropic(input_price: float, output_price: float) -> Price:
    # Anthropic bills cache reads at 0.1x and 5-minute cache writes at 1.25x the input price.
    return Price(input_price, output_price, round(input_price * 0.1, 6), round(input_price * 1.25, 6))


PRICES: Mapping[str, Price] = MappingProxyType(
    {
        # OpenAI (https://openai.com/api/pricing), cached-input prices where published.
        "gpt-5": Price(1.25, 10.00, 0.125),
        "gpt-5-mini": Price(0.25, 2.00, 0.025),
        "gpt-5-nano": Price(0.05, 0.40, 0.005),
        "gpt-4.1": Price(2.00, 8.00, 0.50),
        "gpt-4.1-mini": Price(0.40, 1.60, 0.10),
        "gpt-4.1-nano": Price(0.10, 0.40, 0.025),
        "gpt-4o": Price(2.50, 10.00, 1.25),
        "gpt-4o-mini": Price(0.15, 0.60, 0.075),
        "gpt-4-turbo": Price(10.00, 30.00),
        "gpt-4": Price(30.00, 60.00),
        "gpt-3.5-turbo": Price(0.50, 1.50),
        "o1": Price(15.00, 60.00, 7.50),
        "o1-mini": Price(1.10, 4.40, 0.55),
        "o3": Price(2.00, 8.00, 0.50),
        "o3-mini": Price(1.10, 4.40, 0.55),
        "o4-mini": Price(1.10, 4.40, 0.275),
        # Anthropic (https://www.anthropic.com/pricing), prompts up to 200k tokens.
        "claude-opus-4-5": _anthropic(5.00, 25.00),
        "claude-opus-4-1": _anthropic(15.00, 75.00),
        "claude-opus-4": _anthropic(15.00, 75.00),
        "claude-opus-4-0": _anthropic(15.00, 75.00),
        "claude-sonnet-4-5": _anthropic(3.00, 15.00),
        "claude-sonnet-4": _anthropic(3.00, 15.00),
        "claude-sonnet-4-0": _anthropic(3.00, 15.00),
        "claude-haiku-4-5": _anthropic(1.00, 5.00),
        "claude-3-7-sonnet": _anthropic(3.00, 15.00),
        "claude-3-5-sonnet": _anthropic(3.00, 15.00),
        "claude-3-5-haiku": _anthropic(0.80, 4.00),
        "claude-3-opus": _anthropic(15.00, 75.00),
        "claude-3-haiku": _anthropic(0.25, 1.25),
    }
)

# Snapshot suffixes: -2024-08-06 (OpenAI), -20241022 (Anthropic), -0613 (old OpenAI), -latest.
_SNAPSHOT_SUFFIX = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{8}|\d{4}|latest)$")


def lookup_price(model: str | None, table: Mapping[str, Price] = PRICES) -> Price | None:
    """The price of ``model``: exact name first, then without its snapshot suffix; else ``None``."""
    if not model:
        return None
    name = model.strip().lower()
    if name in table:
        return table[name]
    base = _SNAPSHOT_SUFFIX.sub("", name)
    return table.get(base) if base != name else None


def priced_name(*names: object, table: Mapping[str, Price] = PRICES) -> str | None:
    """The first of ``names`` with a known price (e.g. the requested alias, then the served snapshot)."""
    return next((n for n in names if isinstance(n, str) and lookup_price(n, table)), None)


def cost_usd(
    model: str | None,
    input_tokens: int,
    output_tokens: int,
    *,
    cache_read_tokens: int = 0,
    cache_write_tokens: int = 0,
    table: Mapping[str, Price] = PRICES,
) -> float | None:
    """USD cost of one call, or ``None`` when the model's price is unknown.

    ``input_tokens`` are the prompt tokens billed at the full input rate; cache reads and writes
    are passed separately because providers bill them at other rates.
    """
    price = lookup_price(model, table)
    if price is None:
        return None
    read_rate = price.input if price.cache_read is None else price.cache_read
    write_rate = price.input if price.cache_write is None else price.cache_write
    total = (
        input_tokens * price.input
        + output_tokens * price.output
        + cache_read_tokens * read_rate
        + cache_write_tokens * write_rate
    ) / 1_000_000
    # Strip float noise (0.15000000000000002) without losing sub-cent precision.
    return round(total, 10)
