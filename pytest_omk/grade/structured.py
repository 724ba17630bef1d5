"""Graders for structured output: ``json_valid`` and ``json_schema``.

Both parse the raw output exactly as JavaScript's ``JSON.parse`` would: no code-fence stripping,
no extraction of a JSON object from surrounding prose, only JSON whitespace (space, tab, CR, LF)
around the value, any JSON value (``42``, ``"x"``, ``null``) accepted, ``NaN``/``Infinity`` refused.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pytest_omk.grade._table import entry
from pytest_omk.grade.base import GradeContext, Grader
from pytest_omk.js.jsonparse import JsonSyntaxError, parse_deep
from pytest_omk.js.v8 import JsTimeout
from pytest_omk.models import AssertionBase
from pytest_omk.models.assertions import JsonSchema, JsonValid
from pytest_omk.models.jsonschema_check import ajv_problem, validator_for
from pytest_omk.models.results import Reading

T = TypeVar("T")


@dataclass(frozen=True)
class Parsed:
    """The outcome of ``JSON.parse``: the value, or why parsing failed."""

    value: Any = None
    error: str | None = None


def _refuse_constant(name: str) -> Any:
    # Python's json accepts NaN, Infinity and -Infinity; JSON.parse does not.
    raise ValueError(f"{name} is not valid JSON")


def parse_json(text: str) -> Parsed:
    """Parse ``text`` with ``JSON.parse`` semantics."""
    try:
        return Parsed(json.loads(text, parse_constant=_refuse_constant))
    except json.JSONDecodeError as exc:
        return Parsed(error=f"{exc.msg} at line {exc.lineno} column {exc.colno}")
    except ValueError as exc:
        return Parsed(error=str(exc))
    except RecursionError:
        # Deeper than Python's recursive parser goes; JSON.parse has no such limit.
        try:
            return Parsed(parse_deep(text))
        except JsonSyntaxError as exc:
            return Parsed(error=str(exc))


def on_deep_stack(call: Callable[[], T]) -> T:
    """``call()`` on a fresh thread with a 512 MiB stack and a recursion limit to match."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 1_000_000))
        try:
            outcome["value"] = call()
        except BaseException as exc:  # re-raised on the caller's thread
            outcome["error"] = exc
        finally:
            sys.setrecursionlimit(limit)

    previous = threading.stack_size(512 * 1024 * 1024)
    try:
        thread = threading.Thread(target=run, name="omk-deep-json")
        thread.start()
    finally:
        threading.stack_size(previous)
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    value: T = outcome["value"]
    return value


def _json_valid(a: JsonValid, ctx: GradeContext) -> Reading:
    parsed = parse_json(ctx.output)
    if parsed.error is None:
        return Reading.passed(f"the output is valid JSON ({type(parsed.value).__name__})")
    return Reading.failed(
        f"expected the output to be valid JSON ({parsed.error}); output: {ctx.quote(ctx.output)}"
    )


def _pointer(path: Any) -> str:
    return "/" + "/".join(str(part) for part in path) if path else "(root)"


def _json_schema(a: JsonSchema, ctx: GradeContext) -> Reading:
    parsed = parse_json(ctx.output)
    if parsed.error is not None:
        return Reading.failed(
            f"expected the output to be JSON matching the schema, but it is not JSON ({parsed.error}); "
            f"output: {ctx.quote(ctx.output)}"
        )
    import jsonschema.exceptions
    import referencing.exceptions

    problem = ajv_problem(a.schema_, ctx.engine)
    if problem is not None:  # loaded without an engine: the u-flag pattern check happens here
        return Reading.error(f"the JSON Schema cannot be compiled: {problem}")
    validator = validator_for(a.schema_, ctx.engine)

    def first_error() -> Any:
        return jsonschema.exceptions.best_match(validator.iter_errors(parsed.value))

    try:
        try:
            error = first_error()
        except RecursionError:
            # A value nested deeper than Python's recursion limit (JSON.parse took it): validated
            # again, and its messages rendered, on a thread with a deep stack.
            error = on_deep_stack(first_error)
    except referencing.exceptions.Unresolvable as exc:
        return Reading.error(
            f"the JSON Schema refers outside itself ({ctx.quote(str(exc))}); references resolve only "
            "inside the schema and are never fetched"
        )
    except JsTimeout as exc:
        return Reading.error(f"a pattern of the JSON Schema was not decided: {exc}")
    except (RecursionError, jsonschema.exceptions.SchemaError) as exc:
        return Reading.error(
            f"the JSON Schema could not be applied ({type(exc).__name__}: {ctx.quote(str(exc))})"
        )
    if error is None:
        return Reading.passed("the output is JSON matching the schema")
    return Reading.failed(
        f"expected the output to match the JSON Schema; at {_pointer(error.absolute_path)}: "
        f"{ctx.quote(error.message, limit=120)}"
    )


GRADERS: dict[type[AssertionBase], Grader] = dict(
    [
        entry(JsonValid, _json_valid),
        entry(JsonSchema, _json_schema),
    ]
)
"""Structured-output graders, keyed by assertion class."""
