"""Where the judge's answers came from: a structured output its server refused, and whether the
server and model that judged are the ones that answered the sample.

Both are read from the results themselves (``endpoint``, ``servedModel``,
``responseFormatRefused``), which recordings keep, so a replay says the same as the live run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit

from pytest_omk.models.results import ExecutionResult, ResponseFormatRefusal


def refused_formats(answers: Iterable[ExecutionResult]) -> Mapping[str, ResponseFormatRefusal]:
    """The structured output each endpoint refused (judged without it), by endpoint."""
    return {
        answer.endpoint or "": answer.responseFormatRefused
        for answer in answers
        if answer.responseFormatRefused is not None
    }


def _server(endpoint: str) -> str:
    """``scheme://host:port`` of an endpoint: the OpenAI and Anthropic routes of one server are
    one server."""
    parts = urlsplit(endpoint)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    return f"{parts.scheme}://{parts.hostname}:{port}"


def same_model(execution: ExecutionResult, answers: Iterable[ExecutionResult]) -> str | None:
    """``"<model> at <server>"`` when a judge answer came from the server and the model (as the
    server names it) that answered the sample, else ``None``.

    Names asked for prove nothing: llama.cpp answers any name with the one model it has loaded, and
    two servers may serve different models under one name. The server's own name for the model that
    answered, at the same address, does.
    """
    if execution.endpoint is None or execution.servedModel is None:
        return None
    server = _server(execution.endpoint)
    for answer in answers:
        if (
            answer.endpoint
            and answer.servedModel == execution.servedModel
            and _server(answer.endpoint) == server
        ):
            return f"{execution.servedModel!r} at {server}"
    return None
