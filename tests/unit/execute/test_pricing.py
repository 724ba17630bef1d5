"""Prices only where they are true: the list price of a provider's model applies to calls sent to
that provider's own endpoint; the user's prices (ini ``omk_prices``) apply anywhere."""

from __future__ import annotations

import pytest

from pytest_omk.errors import ConfigError
from pytest_omk.execute.pricing import PRICES, Price, PriceBook, parse_prices

OPENAI = "https://api.openai.com/v1/chat/completions"
ANTHROPIC = "https://api.anthropic.com/v1/messages"
LOCAL = "http://127.0.0.1:8080/v1/chat/completions"


def test_the_list_price_applies_only_at_the_providers_own_endpoint() -> None:
    book = PriceBook()
    assert book.price("gpt-4o-mini", url=OPENAI) == PRICES["gpt-4o-mini"]
    assert book.price("claude-haiku-4-5-20251001", url=ANTHROPIC) == PRICES["claude-haiku-4-5"]
    # A local server, a proxy, or the other provider: the name proves nothing about the bill.
    assert book.price("gpt-4o-mini", url=LOCAL) is None
    assert book.price("gpt-4o-mini", url=ANTHROPIC) is None
    assert book.price("claude-haiku-4-5", url="https://proxy.example.com/v1/messages") is None


def test_the_first_priced_name_wins_the_requested_one_before_the_served_one() -> None:
    book = PriceBook()
    assert book.price("my-deployment", "gpt-4o-2024-08-06", url=OPENAI) == PRICES["gpt-4o"]
    assert book.price(None, "gpt-4o", url=OPENAI) == PRICES["gpt-4o"]
    assert book.price("llama3", None, url=OPENAI) is None


def test_the_users_prices_apply_anywhere_and_override_the_list() -> None:
    book = PriceBook(parse_prices(["tiny = 1 2", "gpt-4o-mini = 0.1 0.2 0.05"]))
    assert book.price("TINY", url=LOCAL) == Price(1.0, 2.0)
    assert book.price("gpt-4o-mini", url=OPENAI) == Price(0.1, 0.2, 0.05)
    assert book.price("gpt-4o-mini", url=LOCAL) == Price(0.1, 0.2, 0.05)
    assert book.cost("tiny", url=LOCAL, input_tokens=1_000_000, output_tokens=500_000) == 2.0
    assert book.cost("unknown", url=LOCAL, input_tokens=10, output_tokens=10) is None


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("tiny 1 2", "expected MODEL = INPUT OUTPUT [CACHED_INPUT]"),
        ("tiny = 1", "expected MODEL = INPUT OUTPUT [CACHED_INPUT]"),
        ("tiny = 1 2 3 4", "expected MODEL = INPUT OUTPUT [CACHED_INPUT]"),
        ("tiny = one 2", "'one' is not a number"),
        ("tiny = -1 2", "'-1' is not a price"),
        ("tiny = nan 2", "'nan' is not a price"),
        (" = 1 2", "the model name is empty"),
    ],
)
def test_a_bad_price_line_names_the_key_the_line_and_what_is_allowed(line: str, why: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_prices(["ok = 1 2", line])
    message = str(caught.value)
    assert message.startswith("ini omk_prices, line 2: ")
    assert why in message
    assert "USD per million tokens" in message


def test_a_model_priced_twice_is_an_error() -> None:
    with pytest.raises(ConfigError, match="line 2: 'tiny' is priced twice"):
        parse_prices(["tiny = 1 2", "TINY = 3 4"])
