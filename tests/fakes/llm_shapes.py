"""The wire shapes of the two APIs the fake speaks: reading requests, writing answers and errors."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import Any

from tests.fakes.llm_script import Api, Fault, Reply

_ERROR_TYPES = {
    "rate_limit": ("rate_limit_error", "Rate limit reached for requests (fake)"),
    "server_error": ("api_error", "The server had an error while processing your request (fake)"),
    "unavailable": ("overloaded_error", "The service is temporarily unavailable (fake)"),
    "status": ("invalid_request_error", "Bad request (fake)"),
}


def _text_of(content: Any) -> str:
    """Text of a message content: a string, or the text parts of a list of blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for block in content:
            if isinstance(block, dict):
                if isinstance(block.get("text"), str):
                    parts.append(block["text"])
                elif "content" in block:  # Anthropic tool_result blocks nest their content
                    parts.append(_text_of(block["content"]))
        return "\n".join(parts)
    return ""


def conversation(api: Api, body: Any) -> tuple[str, str, list[str]]:
    """``(last user message, system prompt, every message text)`` of a request body."""
    if not isinstance(body, dict):
        return "", "", []
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    if api == "openai":
        system = "\n".join(
            _text_of(m.get("content")) for m in messages if m.get("role") in ("system", "developer")
        )
    else:
        system = _text_of(body.get("system"))
    users = [_text_of(m.get("content")) for m in messages if m.get("role") == "user"]
    texts = [_text_of(m.get("content")) for m in messages]
    if api == "anthropic":  # OpenAI's system prompt is one of the messages already
        texts.insert(0, system)
    return (users[-1] if users else ""), system, texts


def first_user(api: Api, body: Any) -> str:
    """The text of the first user message (the task an agent conversation started with)."""
    if not isinstance(body, dict):
        return ""
    users = [m for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") == "user"]
    return _text_of(users[0].get("content")) if users else ""


def tool_results(api: Api, body: Any) -> str:
    """The tool results sent since the model's last answer, joined by newlines (``""`` if none).

    OpenAI sends them as ``role: tool`` messages, Anthropic as ``tool_result`` blocks of the last
    user message.
    """
    if not isinstance(body, dict):
        return ""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    if api == "openai":
        tail: list[dict[str, Any]] = []
        for message in reversed(messages):
            if message.get("role") != "tool":
                break
            tail.insert(0, message)
        return "\n".join(_text_of(m.get("content")) for m in tail)
    last = messages[-1] if messages else {}
    content = last.get("content") if last.get("role") == "user" else None
    if not isinstance(content, list):
        return ""
    return "\n".join(
        _text_of(b.get("content")) for b in content if isinstance(b, dict) and b.get("type") == "tool_result"
    )


def _words(texts: Iterable[str]) -> int:
    return sum(len(t.split()) for t in texts)


def reply_body(api: Api, reply: Reply, body: Any, serial: int) -> dict[str, Any]:
    """A successful answer in ``api``'s shape, usage included."""
    requested = body.get("model") if isinstance(body, dict) else None
    model = reply.model or (requested if isinstance(requested, str) else "fake-model")
    _, _, texts = conversation(api, body)
    arguments = [json.dumps(dict(c.arguments)) for c in reply.tool_calls]
    prompt_tokens, completion_tokens = reply.usage or (
        max(1, _words(texts)),
        _words([reply.text or "", *arguments]),
    )
    calls = [(c.id or f"call_{serial}_{i}", c) for i, c in enumerate(reply.tool_calls)]
    if api == "openai":
        message: dict[str, Any] = {
            "role": "assistant",
            "content": reply.text if reply.text or not calls else None,
        }
        if calls:
            message["tool_calls"] = [
                {"id": cid, "type": "function", "function": {"name": c.name, "arguments": arg}}
                for (cid, c), arg in zip(calls, arguments, strict=True)
            ]
        return {
            "id": f"chatcmpl-fake-{serial}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": reply.finish_reason or ("tool_calls" if calls else "stop"),
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
    content: list[dict[str, Any]] = [{"type": "text", "text": reply.text}] if reply.text else []
    content += [
        {"type": "tool_use", "id": cid, "name": c.name, "input": dict(c.arguments)} for cid, c in calls
    ]
    return {
        "id": f"msg_fake_{serial}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": reply.finish_reason or ("tool_use" if calls else "end_turn"),
        "stop_sequence": None,
        "usage": {"input_tokens": prompt_tokens, "output_tokens": completion_tokens},
    }


def error_body(api: Api | None, fault: Fault) -> dict[str, Any]:
    """The provider-shaped error body of an HTTP-status fault."""
    kind, default_message = _ERROR_TYPES.get(fault.kind, ("api_error", "error (fake)"))
    message = fault.message or default_message
    if api == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}
