"""What a call cost: the providers' list prices, the user's own prices, and where each applies.

Neither chat-completions nor the Messages API reports a price, only token counts, so the cost of a
call is computed here. :class:`PriceBook` decides which price is true for a call: a price the user
gave (ini ``omk_prices``, parsed by :func:`parse_prices`) applies at any endpoint and wins; a list
price below applies only to a call sent to that provider's own endpoint (``api.openai.com``,
``api.anthropic.com``), because a local server, a proxy or another provider answers to any model
name and bills nothing like it. Anything else gets no cost (``None``): ``cost_max`` assertions then
read as missing evidence instead of passing on a made-up number.

Prices are USD per million tokens, standard (non-batch) tier, short-context rate, as published by
the providers when this table was last revised (``PRICES_REVISED``). Prices change: the table is a
best effort, and a wrong entry only affects ``cost_max`` readings and reported totals.

Lookup is exact (case-insensitive) first, then with a date or ``-latest`` suffix removed, so that
``gpt-4o-2024-08-06`` prices as ``gpt-4o`` and ``claude-3-5-haiku-20241022`` as
``claude-3-5-haiku``. There is deliberately no fuzzy prefix match: ``gpt-4o-mini`` must never be
priced as ``gpt-4o``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from urllib.parse import urlsplit

from pytest_omk.errors import ConfigError

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


OPENAI_PRICES: Mapping[str, Price] = MappingProxyType(
    {
        # https://openai.com/api/pricing, cached-input prices where published.
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
    }
)
ANTHROPIC_PRICES: Mapping[str, Price] = MappingProxyType(
    {
        # https://www.anthropic.com/pricing, prompts up to 200k tokens.
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
PRICES: Mapping[str, Price] = MappingProxyType({**OPENAI_PRICES, **ANTHROPIC_PRICES})
"""Every list price, by model name (lower case)."""
LIST_PRICES_BY_HOST: Mapping[str, Mapping[str, Price]] = MappingProxyType(
    {"api.openai.com": OPENAI_PRICES, "api.anthropic.com": ANTHROPIC_PRICES}
)
"""The list prices that apply to calls sent to each provider's own host."""

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
    return price_of_call(price, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens)


def price_of_call(
    price: Price,
    input_tokens: int,
    output_tokens: int,
    cache_read_tokens: int = 0,
    cache_write_tokens: int = 0,
) -> float:
    """USD cost of one call at ``price`` (cache reads and writes at their own rates)."""
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


@dataclass(frozen=True)
class PriceBook:
    """Which price is true for a call: the user's (any endpoint) before the list price of a
    provider's model (that provider's own endpoint only); otherwise none.

    The one place costs are computed: the executors, the judge's calls and budgets all ask it.
    """

    user: Mapping[str, Price] = field(default_factory=dict)
    """Prices from ini ``omk_prices``, by model name in lower case."""

    def price(self, *names: str | None, url: str) -> Price | None:
        """The price of a call to ``url`` answered under one of ``names`` (the requested name
        first, then the one the server reports), or ``None`` when no price is known to be true."""
        for name in names:
            found = lookup_price(name, self.user)
            if found is not None:
                return found
        listed = LIST_PRICES_BY_HOST.get((urlsplit(url).hostname or "").lower(), {})
        return next((found for name in names if (found := lookup_price(name, listed)) is not None), None)

    def cost(
        self,
        *names: str | None,
        url: str,
        input_tokens: int,
        output_tokens: int,
        cache_read_tokens: int = 0,
        cache_write_tokens: int = 0,
    ) -> float | None:
        """USD cost of one call (see :meth:`price`), ``None`` when no price is known to be true."""
        price = self.price(*names, url=url)
        if price is None:
            return None
        return price_of_call(price, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens)


MAX_PRICE = 100_000.0
"""The dearest price a line may give, USD per million tokens: over a hundred times any list price,
and small enough that any run's cost is exact in the report's decimal rounding (``1e30`` was not)."""
PRICE_LINE = "MODEL = INPUT OUTPUT [CACHED_INPUT]"
"""The shape of one ``omk_prices`` line (USD per million tokens)."""


def parse_prices(lines: Sequence[str]) -> dict[str, Price]:
    """The prices of ini ``omk_prices``, one model per line; a bad line is a :class:`ConfigError`
    naming the key, the line number and the shape allowed."""
    prices: dict[str, Price] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, price = _price_line(line, f"ini omk_prices, line {number}")
        if name in prices:
            raise ConfigError(f"ini omk_prices, line {number}: {name!r} is priced twice")
        prices[name] = price
    return prices


def _price_line(line: str, where: str) -> tuple[str, Price]:
    def bad(why: str) -> ConfigError:
        return ConfigError(f"{where}: {line.strip()!r}: {why}; expected {PRICE_LINE}, USD per million tokens")

    name, equals, values = line.partition("=")
    name = name.strip().lower()
    numbers = values.split()
    if not equals or not 2 <= len(numbers) <= 3:
        raise bad("not a price line")
    if not name:
        raise bad("the model name is empty")
    amounts: list[float] = []
    for text in numbers:
        try:
            amount = float(text)
        except ValueError:
            raise bad(f"{text!r} is not a number") from None
        if not math.isfinite(amount) or amount < 0:
            raise bad(f"{text!r} is not a price")
        if amount > MAX_PRICE:
            raise bad(f"{text!r} is above {MAX_PRICE:,.0f} USD per million tokens")
        amounts.append(amount)
    return name, Price(*amounts)
