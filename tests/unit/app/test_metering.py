"""What an app's model call used, read from the answer the gateway passed on (pytest_omk.app.metering)."""

from __future__ import annotations

import json
from typing import Any

from pytest_omk.app.metering import BYTES_PER_TOKEN, metered
from pytest_omk.execute.pricing import Price, PriceBook
from tests.fakes.metered_llm import anthropic_stream, openai_json, openai_stream

OPENAI = {"api": "openai", "body": {"model": "gpt-4o-mini"}}
ANTHROPIC = {"api": "anthropic", "body": {"model": "claude-3-5-haiku-latest"}}
URL = "http://127.0.0.1:9/v1/chat/completions"


def stream(text: str) -> dict[str, Any]:
    return {"status": 200, "contentType": "text/event-stream; charset=utf-8", "text": text}


def test_an_openai_stream_is_read_from_its_last_usage_chunk() -> None:
    used, refused = metered(OPENAI, stream(openai_stream(400, 600)), URL, PriceBook(), 100)
    assert (used.input_tokens, used.output_tokens, used.estimated, refused) == (400, 600, False, None)


def test_an_anthropic_stream_adds_the_start_and_the_last_delta() -> None:
    used, _ = metered(ANTHROPIC, stream(anthropic_stream(400, 600)), URL, PriceBook(), 100)
    assert (used.input_tokens, used.output_tokens, used.estimated) == (400, 600, False)


def test_integral_floats_are_counts_and_a_fraction_is_refused_but_counted() -> None:
    whole = {"status": 200, "contentType": "application/json",
             "json": json.loads(openai_json({"prompt_tokens": 20.0, "completion_tokens": 5.0}))}  # fmt: skip
    used, refused = metered(OPENAI, whole, URL, PriceBook(), 100)
    assert (used.input_tokens, used.output_tokens, refused) == (20, 5, None)
    half = {**whole, "json": json.loads(openai_json({"prompt_tokens": 20.5, "completion_tokens": 5}))}
    used, refused = metered(OPENAI, half, URL, PriceBook(), 100)
    assert used.estimated and refused is not None and "20.5" in refused


def test_an_answer_without_usage_is_estimated_and_priced_when_the_price_is_known() -> None:
    answer = {"status": 200, "contentType": "application/json", "json": json.loads(openai_json(None))}
    body = len(json.dumps(answer["json"]).encode())
    used, _ = metered(OPENAI, answer, URL, PriceBook({"gpt-4o-mini": Price(1.0, 2.0)}), 400)
    assert used.estimated
    assert used.input_tokens == 400 // BYTES_PER_TOKEN
    assert used.output_tokens == -(-body // BYTES_PER_TOKEN)
    assert used.cost_usd is not None and used.cost_usd > 0
    unpriced, _ = metered(OPENAI, stream("data: [DONE]\n\n"), URL, PriceBook(), 400)  # a stream without usage
    assert unpriced.estimated and unpriced.cost_usd is None
