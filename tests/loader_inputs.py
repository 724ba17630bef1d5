"""Building blocks shared by the loader's property tests.

Used by ``tests/unit/loading/test_fuzz.py``, the schema contract
(``tests/contracts/test_sample_schema.py``) and ``tests/reliability/test_loader_robustness.py``:
the valid documents they mutate, the key names of the sample format, walking a JSON document's
containers, and a time limit that turns a hang into a test failure.
"""

from __future__ import annotations

import contextlib
import json
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

VALID_DIR = Path(__file__).resolve().parent / "data" / "valid"
VALID_JSON_SEEDS: list[Any] = [
    json.loads(p.read_text(encoding="utf-8")) for p in sorted(VALID_DIR.glob("*.json"))
]
"""The valid JSON documents of ``tests/data/valid``, parsed, in file-name order."""

FORMAT_KEYS: tuple[str, ...] = (
    # assertion keys
    "type",
    "value",
    "values",
    "pattern",
    "flags",
    "schema",
    "weight",
    "not",
    "mode",
    "children",
    "n",
    "threshold",
    "reference",
    "fn",
    # sample, rubric and mock keys
    "sample_id",
    "prompt",
    "context",
    "rubric",
    "assertions",
    "mocks",
    "mocksStrict",
    "match",
    "return",
    "return_file",
    "return_seq",
    "tool",
    "criterion",
    "covers",
    "environment",
    "requires",
)
"""Key names of the sample format that mutations add (each test adds its own extras)."""


def containers(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The paths of every object and array in ``node`` (itself first), depth-first."""
    found = [path] if isinstance(node, dict | list) else []
    if isinstance(node, dict):
        for key, child in node.items():
            found += containers(child, (*path, key))
    elif isinstance(node, list):
        for index, child in enumerate(node):
            found += containers(child, (*path, index))
    return found


def node_at(node: Any, path: tuple[Any, ...]) -> Any:
    """The part of ``node`` that ``path`` (keys and indices) leads to."""
    for part in path:
        node = node[part]
    return node


class Hang(Exception):
    """Raised inside a :func:`time_limit` block that ran out of time."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Fail with :class:`Hang` after ``seconds`` (on the main thread of a POSIX process)."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def _alarm(signum: int, frame: object) -> None:
        raise Hang(f"did not finish within {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
