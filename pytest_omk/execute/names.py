"""The names of the built-in executors, without importing any of them.

Checking ``--omk-executor`` for a typo happens when pytest configures, in every run that sets it
(sample files collected or not); importing the executors for that would make each such run build
the run-result models and import asyncio before its first test.
"""

from __future__ import annotations

BUILTIN_EXECUTORS = ("openai", "anthropic", "echo", "agent")
"""Specs naming a built-in executor (``agent:openai``/``agent:anthropic`` are forms of ``agent``)."""
