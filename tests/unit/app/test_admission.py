"""Who may use the model gateway: judged by a request's head alone."""

from __future__ import annotations

import pytest

from pytest_omk.app.admission import Admission, route_of
from pytest_omk.app.messages import HttpRequest

SECRET = "s3cret-s3cret-s3cret-s3cret-s3cr"
PORT = 4242
OPEN = {"tok-open"}
JSON = {"host": f"127.0.0.1:{PORT}", "content-type": "application/json", "content-length": "2"}


def judge(target: str = f"/{SECRET}/_/openai/v1/chat/completions", **headers: str) -> int | None:
    admission = Admission(SECRET, lambda: PORT, OPEN.__contains__)
    refused = admission.refusal(HttpRequest("POST", target, {**JSON, **headers}, b""))
    return None if refused is None else refused.status


def test_a_route_is_the_secret_then_the_run_the_api_and_the_providers_path() -> None:
    route = route_of(f"/{SECRET}/tok-open/anthropic/v1/messages?beta=true", SECRET)
    assert route is not None and (route.run, route.api, route.rest) == (
        "tok-open",
        "anthropic",
        "/v1/messages",
    )
    assert route_of(f"/{SECRET}x/_/openai/v1", SECRET) is None
    assert route_of("/_/openai/v1/chat/completions", SECRET) is None
    assert route_of(f"/{SECRET}", SECRET) is None


def test_the_app_with_the_secret_at_its_own_address_is_served() -> None:
    assert judge() is None
    assert judge(f"/{SECRET}/tok-open/openai/v1/chat/completions") is None
    assert judge(host=f"localhost:{PORT}") is None
    assert judge(**{"sec-fetch-site": "same-origin"}) is None
    assert judge(**{"content-type": "application/vnd.api+json; charset=utf-8"}) is None


@pytest.mark.parametrize(
    ("target", "headers", "status"),
    [
        ("/_/openai/v1/chat/completions", {}, 403),
        (f"/{SECRET[:-1]}/_/openai/v1/chat/completions", {}, 403),
        (f"/{SECRET}/tok-closed/openai/v1/chat/completions", {}, 403),
        (f"/{SECRET}/_/openai/v1", {"host": "attacker.example"}, 403),
        (f"/{SECRET}/_/openai/v1", {"host": f"127.0.0.1:{PORT + 1}"}, 403),
        (f"/{SECRET}/_/openai/v1", {"origin": "null"}, 403),
        (f"/{SECRET}/_/openai/v1", {"sec-fetch-site": "cross-site"}, 403),
        (f"/{SECRET}/_/openai/v1", {"content-type": "text/plain"}, 415),
        (f"/{SECRET}/_/openai/v1", {"content-type": "multipart/form-data; boundary=x"}, 415),
    ],
)
def test_everything_else_is_refused(target: str, headers: dict[str, str], status: int) -> None:
    assert judge(target, **headers) == status


def test_a_request_without_a_body_needs_no_content_type() -> None:
    admission = Admission(SECRET, lambda: PORT, OPEN.__contains__)
    head = HttpRequest("GET", f"/{SECRET}/_/openai/v1/models", {"host": f"127.0.0.1:{PORT}"}, b"")
    assert admission.refusal(head) is None
