"""How the HTTP outcome of a provider API call becomes a result or one of our errors.

The policy, shared by every HTTP executor:

============================================  =============================================
outcome                                       raised
============================================  =============================================
429                                           ``TransientError(rate_limited=True)`` with the
                                              ``Retry-After`` hint (seconds or HTTP-date)
400 or 5xx saying the context window is       ``ExecutionError`` ("context window exceeded:
exceeded                                      not retried"): the same prompt cannot fit later
408, 5xx (incl. Anthropic's 529 "overloaded")  ``TransientError`` (``Retry-After`` honoured too)
other 4xx (bad key, unknown model, bad body)  :class:`RefusedRequest`: the provider's
                                              ``error.message`` or ``API error <status>``
timeout                                       ``TransientError(timed_out=True)``
refused connection                            ``TransientError``: "cannot connect to URL: is
                                              the server running?"
reset or dropped connection, truncated body   ``TransientError``
2xx whose body is not the expected JSON       ``TransientError`` ("malformed response"):
                                              proxies and local servers under load sometimes
                                              answer 200 with an HTML page or a cut body, and
                                              the retry budget bounds the cost of trying again
============================================  =============================================

Messages never contain request headers, and every known secret (the API key) plus anything
shaped like an API key is masked out of the provider's text, because some providers echo a
partial key back in their 401 message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from pytest_omk.errors import ExecutionError
from pytest_omk.execute.base import TransientError

_MAX_MESSAGE = 300
# Key-shaped tokens: sk-..., sk-ant-..., sk-proj-... (also the masked sk-abc***xyz echoes).
_KEY_SHAPED = re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_\-*.]{6,}")


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with every secret and every API-key-shaped token replaced by ``***``."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return _KEY_SHAPED.sub("***", text)


def parse_retry_after(headers: httpx.Headers, *, now: datetime | None = None) -> float | None:
    """Seconds to wait according to ``retry-after-ms`` or ``Retry-After`` (seconds or HTTP-date)."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def provider_message(response: httpx.Response) -> str | None:
    """The human message in an error body, in the shapes OpenAI, Anthropic, vLLM and Ollama use."""
    try:
        body = response.json()
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(body, dict):
        return None
    error = body.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    for candidate in (error, body.get("message"), body.get("detail")):
        if isinstance(candidate, str) and candidate.strip():
            return candidate
    return None


class RefusedRequest(ExecutionError):
    """A 4xx answer other than 429 and 408: the request itself was refused (not retried).

    ``status`` lets a caller that sent something optional (the judge's ``response_format``) try
    once more without it.
    """

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message)
        self.status = status


CONTEXT_EXCEEDED = re.compile(
    r"context_length_exceeded|exceed_context_size|context (?:size|length|window) (?:has been |was )?exceeded"
    r"|exceeds the (?:available|maximum) context|maximum context length|prompt is too long"
    r"|longer than the (?:model's )?(?:maximum|max) (?:model |context )?length",
    re.IGNORECASE,
)
"""How servers say a prompt does not fit: OpenAI and vLLM (``context_length_exceeded``, "maximum
context length"), llama.cpp (``exceed_context_size_error``, "Context size has been exceeded"),
Anthropic ("prompt is too long"), vLLM's newer "longer than the maximum model length"."""


def context_exceeded(response: httpx.Response, detail: str | None) -> bool:
    """Whether an error answer says the prompt (or prompt and answer) exceeds the context window."""
    if detail and CONTEXT_EXCEEDED.search(detail):
        return True
    try:
        error = response.json().get("error")
    except (ValueError, UnicodeDecodeError, AttributeError):
        return False
    codes = (error.get("code"), error.get("type")) if isinstance(error, dict) else ()
    return any(isinstance(code, str) and CONTEXT_EXCEEDED.search(code) for code in codes)


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 1] + "…"


def check_status(response: httpx.Response, *, provider: str, secrets: Iterable[str | None] = ()) -> None:
    """Raise the error that a non-2xx ``response`` maps to; return quietly on 2xx."""
    status = response.status_code
    if 200 <= status < 300:
        return
    detail = provider_message(response)
    text = f"{provider} API error {status}"
    if detail:
        text += f": {_clip(redact(detail, secrets))}"
    if status == 429:
        raise TransientError(text, retry_after=parse_retry_after(response.headers), rate_limited=True)
    if (status == 400 or status >= 500) and context_exceeded(response, detail):
        # The same prompt will not fit on a retry: three more calls would only fail the same way.
        raise ExecutionError(f"{text} (context window exceeded: not retried)")
    if status == 408 or status >= 500:
        raise TransientError(text, retry_after=parse_retry_after(response.headers))
    raise RefusedRequest(text, status=status)


def display_url(url: httpx.URL) -> str:
    """``url`` without credentials or query, safe to show in a message."""
    return str(url.copy_with(username=None, password=None, query=None, fragment=None))


def timed_out(provider: str, timeout: float, url: httpx.URL) -> TransientError:
    """The error for a call that outlived its deadline."""
    return TransientError(
        f"{provider} API request timed out after {timeout:g}s ({display_url(url)})", timed_out=True
    )


def transport_error(exc: httpx.HTTPError, *, provider: str, timeout: float, url: httpx.URL) -> ExecutionError:
    """The error for a request that produced no usable response (raise it ``from exc``)."""
    where = display_url(url)
    if isinstance(exc, httpx.TimeoutException):
        return timed_out(provider, timeout, url)
    if isinstance(exc, httpx.DecodingError):
        return malformed(provider, f"undecodable body: {exc}")
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.LocalProtocolError):
        # A bad URL scheme or a request we built wrongly will not get better by retrying.
        return ExecutionError(f"{provider} API request to {where} failed: {exc}")
    if isinstance(exc, httpx.ConnectError):
        if _refused(exc):
            return TransientError(f"{provider} API: cannot connect to {where}: is the server running?")
        return TransientError(f"{provider} API connection to {where} failed: {exc or type(exc).__name__}")
    if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError | httpx.WriteError):
        return TransientError(f"{provider} API connection dropped ({where}): {exc or type(exc).__name__}")
    return TransientError(f"{provider} API request to {where} failed: {type(exc).__name__}: {exc}")


def _refused(exc: BaseException) -> bool:
    """Whether nothing listens where a connection was attempted (not a DNS or TLS failure)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ConnectionRefusedError):
            return True
        # anyio's message when every address refused (httpcore keeps no cause on some versions).
        if "All connection attempts failed" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def malformed(provider: str, why: str) -> TransientError:
    """A 2xx answer we cannot read; retryable (see the module docstring)."""
    return TransientError(f"{provider} API returned a malformed response: {_clip(why)}")


def json_object(
    response: httpx.Response, *, provider: str, secrets: Iterable[str | None] = ()
) -> dict[str, Any]:
    """The body of a 2xx ``response`` as a JSON object, or a malformed-response error.

    The excerpt shown of a non-JSON body is redacted before it is cut, so a body echoing the key
    cannot show even a prefix of it.
    """
    try:
        body = json.loads(response.content)
    except (ValueError, UnicodeDecodeError, RecursionError):
        excerpt = redact(response.content[:4096].decode("utf-8", "replace"), secrets)[:60]
        raise malformed(provider, f"not JSON: {excerpt!r}") from None
    if not isinstance(body, dict):
        raise malformed(provider, f"expected a JSON object, got {type(body).__name__}")
    return body
