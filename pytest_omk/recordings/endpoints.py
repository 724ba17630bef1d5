"""Which server answers a call: the endpoint part of a recording key.

vcrpy matches a request on its method and URI, so another server is another request. Ours does the
same for HTTP executors: the key holds the scheme, host, port and path of the provider URL, so
recordings made against one server never replay as if another had answered. What authenticates a
call never enters the key: user info in the URL is dropped, and so are query values whose names
look like credentials (``api_key``, ``token``, ``sig``...). Command and Python executors have no
endpoint (their id already names what runs).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit

if TYPE_CHECKING:
    from pytest_omk.models.run import ExecutionRequest

_SECRET_QUERY_PARTS = ("key", "token", "secret", "sig", "password", "auth", "credential")
_DEFAULT_PORTS = {"http": 80, "https": 443}


@lru_cache(maxsize=64)
def endpoint_key(url: str) -> str:
    """``scheme://host:port/path[?query]`` of ``url``: no user info, no credential-like query values.

    The port is always written (``https://api.openai.com:443/v1/...``) so that spelling the default
    port or leaving it out is the same endpoint. Kept per URL: every model call's key asks again.
    """
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"  # IPv6 literal
    port = parts.port or _DEFAULT_PORTS.get(scheme, 0)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not _secret_name(k)]
    text = f"{scheme}://{host}:{port}{parts.path or '/'}"
    return f"{text}?{urlencode(sorted(query))}" if query else text


def _secret_name(name: str) -> bool:
    lowered = name.lower()
    return any(part in lowered for part in _SECRET_QUERY_PARTS)


def call_identity(
    executor_id: str,
    request: ExecutionRequest,
    endpoint: str | None = None,
    app: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """What the key of an executor call hashes: executor, endpoint (HTTP executors), the app's
    digest (an app whose whole answers are recorded) and the request."""
    identity: dict[str, Any] = {"executor": executor_id, "request": request.identity()}
    if endpoint is not None:
        identity["endpoint"] = endpoint  # another server is another call
    if app is not None:
        identity["app"] = dict(app)  # another version of the app is another call
    return identity
