"""What identifies a model call made *inside* an app, and how its answer is stored.

An app under test (a ``python:`` callable, the hook's or the ``omk_app`` fixture's app, a
``command:`` script) runs live; the HTTP calls it makes to a model provider reach the model
gateway, which replays or records them one file each (kind ``http``). The key is what the app
sent: the provider endpoint (scheme, host, port and path, never credentials), the method, the
few headers that change an answer, the body, and which repetition of that same request it is.
Who sent it (which executor, which sample) is not in the key: the sample only names the file.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from pytest_omk.recordings.endpoints import endpoint_key

KIND = "http"
"""The recordings kind of inner calls (``<recordings>/http/...``)."""

ANSWER_HEADERS = ("anthropic-version", "anthropic-beta", "openai-beta")
"""Request headers that change what a provider answers; every other header (keys, user agents,
SDK telemetry, retry counts) is left out of the key and never stored."""

KEPT_RESPONSE_HEADERS = ("content-type",)
_TEXT_TYPES = ("json", "text/", "event-stream", "xml")
_TOKEN = r"[A-Za-z0-9!#$%&'*+.^_`|~-]+"
_CONTENT_TYPE = re.compile(rf'{_TOKEN}/{_TOKEN}(?: *; *{_TOKEN}=(?:{_TOKEN}|"[^"\x00-\x1f\x7f]*"))* *')
"""A plain ``type/subtype; name=value`` media type: nothing a header line could be split with."""


def request_body(raw: bytes, content_type: str) -> Any:
    """The body as the key holds it: parsed JSON, else text, else a digest of the bytes."""
    if not raw:
        return None
    if "json" in content_type or raw[:1] in (b"{", b"["):
        try:
            return json.loads(raw)
        except ValueError:
            pass
    try:
        return {"text": raw.decode("utf-8")}
    except UnicodeDecodeError:
        return {"sha256": hashlib.sha256(raw).hexdigest(), "bytes": len(raw)}


def call_identity(
    *, api: str, url: str, method: str, headers: Mapping[str, str], body: Any, occurrence: int
) -> dict[str, Any]:
    """The identity (hashed into the key) of one inner call; ``headers`` lower-cased."""
    return {
        "api": api,
        "endpoint": endpoint_key(url),
        "method": method,
        "headers": {name: headers[name] for name in ANSWER_HEADERS if name in headers},
        "body": body,
        "occurrence": occurrence,
    }


def repeat_key(identity: Mapping[str, Any]) -> str:
    """What two identical requests share (everything but the occurrence), as a short hash."""
    rest = {k: v for k, v in identity.items() if k != "occurrence"}
    return hashlib.sha256(json.dumps(rest, sort_keys=True, ensure_ascii=True).encode()).hexdigest()[:32]


def stored_answer(status: int, headers: Mapping[str, str], body: bytes) -> dict[str, Any]:
    """The recording's ``result``: status, content type and the body (JSON, text or base64)."""
    content_type = headers.get("content-type", "")
    answer: dict[str, Any] = {"status": status, "contentType": content_type}
    if any(kind in content_type for kind in _TEXT_TYPES):
        text = body.decode("utf-8", errors="replace")
        if "json" in content_type:
            try:
                answer["json"] = json.loads(text)
                return answer
            except ValueError:
                pass
        answer["text"] = text
        return answer
    answer["base64"] = base64.b64encode(body).decode("ascii")
    return answer


def answer_problem(answer: Mapping[str, Any]) -> str | None:
    """Why a recording's ``result`` cannot be sent back as an HTTP answer, or ``None``. Recorded
    headers are data: a status outside 200-599 or a content type that is not a plain media type (a
    CR LF in it would add headers of the file's choosing to the app's answer) is refused."""
    status = answer.get("status")
    content_type = answer.get("contentType")
    if not isinstance(status, int) or isinstance(status, bool) or not 200 <= status <= 599:
        return f"has result.status {status!r} (allowed: an integer from 200 to 599)"
    if not isinstance(content_type, str) or (content_type and not _CONTENT_TYPE.fullmatch(content_type)):
        return f"has result.contentType {content_type!r} (allowed: a plain type/subtype; name=value)"
    return None


def replayed_answer(answer: Mapping[str, Any]) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and body to send back for a recording's ``result``."""
    problem = answer_problem(answer)
    if problem is not None:
        raise ValueError(problem)
    status, content_type = answer["status"], answer["contentType"]
    if "json" in answer:
        body = json.dumps(answer["json"], ensure_ascii=False).encode("utf-8")
    elif isinstance(answer.get("text"), str):
        body = answer["text"].encode("utf-8")
    elif isinstance(answer.get("base64"), str):
        body = base64.b64decode(answer["base64"])
    else:
        raise ValueError('has none of "json", "text" or "base64"')
    return status, ({"content-type": content_type} if content_type else {}), body


def usage_of(answer: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """Input and output tokens an OpenAI- or Anthropic-shaped JSON answer reports."""
    data = answer.get("json")
    usage = data.get("usage") if isinstance(data, Mapping) else None
    if not isinstance(usage, Mapping):
        return None, None
    tokens_in = usage.get("prompt_tokens", usage.get("input_tokens"))
    tokens_out = usage.get("completion_tokens", usage.get("output_tokens"))
    return (
        tokens_in if isinstance(tokens_in, int) and not isinstance(tokens_in, bool) else None,
        tokens_out if isinstance(tokens_out, int) and not isinstance(tokens_out, bool) else None,
    )
