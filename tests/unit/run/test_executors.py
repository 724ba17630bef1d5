"""What an executor spec or an object handed to the plugin becomes (``run/executors.py``)."""

from __future__ import annotations

import asyncio

import pytest

from pytest_omk.errors import ConfigError
from pytest_omk.execute.base import AdaptedExecutor, Executor
from pytest_omk.execute.local import CallableExecutor, EchoExecutor
from pytest_omk.models.results import ExecutionResult
from pytest_omk.models.run import ExecutionRequest
from pytest_omk.run.executors import wrap_callable


class AnswersOnly:
    """A user's executor object with the answering part of the protocol and nothing else."""

    id = "my-app"
    supports_mocks = False

    def __init__(self) -> None:
        self.closed = False

    async def execute(self, request: ExecutionRequest) -> ExecutionResult:
        return ExecutionResult(output=f"answer to {request.prompt}")

    async def aclose(self) -> None:
        self.closed = True


def _request() -> ExecutionRequest:
    return ExecutionRequest(prompt="hi", sample_id="s1")


def test_an_object_that_only_answers_gets_the_optional_abilities() -> None:
    inner = AnswersOnly()
    executor = wrap_callable(inner, "conftest")
    assert isinstance(executor, AdaptedExecutor) and isinstance(executor, Executor)
    assert executor.id == "my-app" and not executor.supports_mocks
    assert executor.api_endpoint is None and executor.time_budget is None and executor.secrets == ()
    assert executor.records_answers and executor.answer_identity is None
    assert asyncio.run(executor.execute(_request())).output == "answer to hi"
    asyncio.run(executor.aclose())
    assert inner.closed


def test_a_full_executor_is_kept_and_a_function_is_wrapped() -> None:
    echo = EchoExecutor()
    assert wrap_callable(echo, "echo") is echo
    assert isinstance(wrap_callable(lambda request: "ok", "f"), CallableExecutor)


def test_anything_else_is_a_configuration_error() -> None:
    with pytest.raises(ConfigError, match="neither an executor nor a callable"):
        wrap_callable(42, "conftest")
