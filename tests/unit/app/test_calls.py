"""The key and the stored answer of an app's own model call."""

from __future__ import annotations

import pytest

from pytest_omk.app.calls import (
    call_identity,
    repeat_key,
    replayed_answer,
    request_body,
    stored_answer,
)


def test_only_what_changes_an_answer_is_in_the_key() -> None:
    headers = {
        "anthropic-version": "2023-06-01",
        "x-api-key": "sk-ant-secret-value-123",
        "user-agent": "Anthropic/Python 0.40",
        "x-stainless-retry-count": "0",
    }
    identity = call_identity(
        api="anthropic",
        url="https://user:pw@api.anthropic.com/v1/messages?api_key=zzz",
        method="POST",
        headers=headers,
        body={"model": "claude"},
        occurrence=0,
    )
    assert identity == {
        "api": "anthropic",
        "endpoint": "https://api.anthropic.com:443/v1/messages",
        "method": "POST",
        "headers": {"anthropic-version": "2023-06-01"},
        "body": {"model": "claude"},
        "occurrence": 0,
    }
    again = {**identity, "occurrence": 3}
    assert repeat_key(identity) == repeat_key(again) != repeat_key({**identity, "body": {"model": "other"}})


@pytest.mark.parametrize(
    ("raw", "content_type", "expected"),
    [
        (b'{"a": 1}', "application/json", {"a": 1}),
        (b'{"a": 1}', "", {"a": 1}),
        (b"plain words", "text/plain", {"text": "plain words"}),
        (b"\xff\xfe\x00", "application/octet-stream", "binary"),
        (b"", "application/json", None),
    ],
)
def test_request_bodies(raw: bytes, content_type: str, expected: object) -> None:
    body = request_body(raw, content_type)
    if expected == "binary":
        assert isinstance(body, dict) and len(body["sha256"]) == 64 and body["bytes"] == 3
    else:
        assert body == expected


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("application/json", b'{"choices": [{"message": {"content": "hi"}}]}'),
        ("text/event-stream", b'data: {"delta": "h"}\n\ndata: [DONE]\n\n'),
        ("audio/mpeg", b"\x00\x01\xff"),
    ],
)
def test_an_answer_is_sent_back_as_it_came(content_type: str, body: bytes) -> None:
    stored = stored_answer(200, {"content-type": content_type, "x-request-id": "req-1"}, body)
    status, headers, data = replayed_answer(stored)
    assert (status, headers) == (200, {"content-type": content_type})
    assert data == body if "json" not in content_type else data.replace(b" ", b"") == body.replace(b" ", b"")


def test_an_unusable_stored_answer_says_why() -> None:
    with pytest.raises(ValueError, match="status"):
        replayed_answer({"contentType": "application/json", "json": {}})
    with pytest.raises(ValueError, match="none of"):
        replayed_answer({"status": 200, "contentType": "application/json"})
