"""Configuration errors found before any item runs: one message, exit code 4 (a usage error).

Two mistakes would otherwise surface as one ERROR per sample after pytest has started running:

- an executor spec that is neither a built-in name nor an existing command (``--omk-executor
  opnai``): as upstream, any other string is run as a command line, so a typo would be run for
  every sample. A single word that is no command on ``PATH`` and close to a built-in name is
  refused with "did you mean";
- a missing API key when a live call will be needed: the record mode calls live (``all``,
  ``rewrite``, ``off``), or a sample's call has no recording to replay (``once``,
  ``new_episodes``). Replaying everything (``none``, or every call recorded) needs no key.

Plain Python: the session turns :class:`~pytest_omk.errors.ConfigError` into ``pytest.UsageError``.
"""

from __future__ import annotations

import difflib
import shlex
import shutil
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from pytest_omk.errors import ConfigError

if TYPE_CHECKING:  # the plugin imports this module at start-up: no models yet
    from pytest_omk.execute.base import Executor

ALWAYS_LIVE = ("all", "rewrite", "off")


def check_executor_spec(spec: str, builtins: Sequence[str], *, option: str = "--omk-executor") -> None:
    """Refuse a single-word spec that is no built-in and no command on ``PATH`` (with a suggestion)."""
    text = spec.strip()
    if not text or text.startswith(("command:", "python:")) or text in builtins:
        return
    try:
        words = shlex.split(text)
    except ValueError:
        return  # the command executor reports a bad command line itself
    if len(words) != 1 or "/" in words[0] or shutil.which(words[0]) is not None:
        return
    close = difflib.get_close_matches(words[0], builtins, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]}?" if close else f" (built-in executors: {', '.join(builtins)})"
    raise ConfigError(
        f"{option} {text!r}: not a built-in executor and no command of that name is on PATH{hint} "
        f"To run a command anyway, write {option}='command:{text}'."
    )


def missing_key(executor: Executor | None) -> str | None:
    """The message of an HTTP executor whose required API key is absent, else ``None``."""
    endpoint = None if executor is None else executor.api_endpoint
    return None if endpoint is None else endpoint.missing_key


def check_live_key(
    executor: Executor | None,
    mode: str,
    labels: Iterable[str],
    recorded: Callable[[str], bool],
    *,
    option: str = "--omk-executor",
) -> None:
    """Raise when ``executor`` lacks its key and some call will be live.

    ``labels`` are the samples that will call it; ``recorded(label)`` says whether that sample's
    call replays (only asked in the modes that replay).
    """
    message = missing_key(executor)
    if executor is None or message is None or mode == "none":
        return
    if mode in ALWAYS_LIVE:
        needing = next(iter(labels), None)
        why = f"--omk-record-mode={mode} calls the model live"
    else:
        needing = next((label for label in labels if not recorded(label)), None)
        why = f"sample {needing!r} has no recording to replay (--omk-record-mode={mode})"
    if needing is None:
        return
    raise ConfigError(
        f"{option} {executor.id}: {message}, and {why}. Set the key, or replay only with "
        "--omk-record-mode=none."
    )
