"""The names of the built-in executors, without importing any of them.

Checking ``--omk-executor`` for a typo happens when pytest configures, in every run that sets it
(sample files collected or not); importing the executors for that would make each such run build
the run-result models and import asyncio before its first test.
"""

from __future__ import annotations

BUILTIN_EXECUTORS = ("openai", "anthropic", "echo", "agent", "agent:openai", "agent:anthropic")
"""Specs naming a built-in executor (``agent:openai``/``agent:anthropic`` are forms of ``agent``)."""


def is_own_code(spec: str) -> bool:
    """Whether ``spec`` runs the project's own code (``python:...``, a command), not a built-in model
    executor: such an app runs live, and the model calls it makes are what is recorded."""
    name = spec.strip()
    return bool(name) and name.partition(":")[0] not in BUILTIN_EXECUTORS
