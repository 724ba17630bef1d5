"""Explaining a replay miss: find the nearest recorded request and say which fields differ.

A miss in replay-only mode usually means one field moved (a new model name, an edited prompt, a
changed system file). Naming that field turns "no recording" into a fix, as vcrpy's "found N
similar requests" does, but per field rather than per matcher.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_omk.recordings.files import Document

_SHORT_VALUE = 60
"""Values up to this length are quoted in full; longer ones are described by position."""
_AROUND = 24
"""Characters shown on each side of the first difference of two long texts."""

FIX_HINT = (
    "To record it, run once with --omk-record-mode=new_episodes (or =all to re-record everything) "
    "and commit the recordings directory."
)


def request_fields(identity: Mapping[str, Any]) -> dict[str, Any]:
    """The comparable fields of an identity: the request's fields plus any top-level extras.

    The executor is left out because candidates are already restricted to the same executor.
    """
    fields: dict[str, Any] = {}
    for name, value in identity.items():
        if name == "executor":
            continue
        if name == "request" and isinstance(value, Mapping):
            fields.update(value)
        else:
            fields[name] = value
    return fields


def _is_short(value: Any) -> bool:
    if value is None or isinstance(value, bool | int | float):
        return True
    return isinstance(value, str) and len(value) <= _SHORT_VALUE and "\n" not in value


def describe_field(name: str, ours: Any, recorded: Any) -> str:
    """One difference, e.g. ``model: 'gpt-4o-mini' (this run) vs 'gpt-4o' (recorded)``."""
    if _is_short(ours) and _is_short(recorded):
        return f"{name}: {ours!r} (this run) vs {recorded!r} (recorded)"
    if isinstance(ours, str) and isinstance(recorded, str):
        at = next((i for i, (a, b) in enumerate(zip(ours, recorded, strict=False)) if a != b), None)
        if at is None:
            at = min(len(ours), len(recorded))
        return (
            f"{name} differs from character {at} "
            f"({len(ours)} characters in this run, {len(recorded)} recorded): "
            f"{_around(ours, at)} (this run) vs {_around(recorded, at)} (recorded)"
        )
    return f"{name} differs"


def _around(text: str, at: int) -> str:
    """The text near character ``at``, quoted with ``repr`` (line breaks and controls shown escaped),
    with ellipses where it was cut: enough to see the edit without the whole prompt."""
    start, end = max(0, at - _AROUND), at + _AROUND
    return ("…" if start else "") + repr(text[start:end]) + ("…" if end < len(text) else "")


def _hint(diffs: Sequence[str], ours: Mapping[str, Any], recorded: Mapping[str, Any]) -> str:
    """What to do: point the run at the recorded endpoint when only that differs, else record."""
    if diffs and all(diff.startswith("endpoint:") for diff in diffs):
        return (
            f"Only the endpoint differs: the recordings were made against {recorded.get('endpoint')!r}. "
            "Point the run at that endpoint (OPENAI_BASE_URL or ANTHROPIC_BASE_URL, the same in CI) to "
            "replay them, or record against this one with --omk-record-mode=new_episodes."
        )
    return FIX_HINT


def differences(ours: Mapping[str, Any], recorded: Mapping[str, Any], prefix: str = "") -> list[str]:
    """Every differing field, in this run's field order, then fields only the recording has.

    Nested objects and lists of equal length are compared item by item, so a changed message in a
    request body is named by its path (``body.messages[0].content``), not as "body differs".
    """
    diffs = []
    for name in [*ours, *(n for n in recorded if n not in ours)]:
        path = f"{prefix}{name}"
        if name not in recorded:
            diffs.append(f"{path}: only in this run")
        elif name not in ours:
            diffs.append(f"{path}: only in the recording")
        elif ours[name] != recorded[name]:
            diffs.extend(_described(path, ours[name], recorded[name]))
    return diffs


def _described(path: str, ours: Any, recorded: Any) -> list[str]:
    if isinstance(ours, Mapping) and isinstance(recorded, Mapping):
        return differences(ours, recorded, prefix=f"{path}.")
    if isinstance(ours, list) and isinstance(recorded, list):
        if len(ours) != len(recorded):
            return [f"{path}: {len(ours)} items in this run, {len(recorded)} recorded"]
        return [
            line
            for index, (mine, theirs) in enumerate(zip(ours, recorded, strict=True))
            if mine != theirs
            for line in _described(f"{path}[{index}]", mine, theirs)
        ]
    return [describe_field(path, ours, recorded)]


def nearest(identity: Mapping[str, Any], documents: Sequence[Document]) -> Document | None:
    """The document of the same executor with the most equal fields (first one on a tie)."""
    executor = identity.get("executor")
    ours = request_fields(identity)
    best: Document | None = None
    best_score = -1
    for document in documents:
        if document.identity.get("executor") != executor:
            continue
        theirs = request_fields(document.identity)
        score = sum(1 for name, value in ours.items() if name in theirs and theirs[name] == value)
        if score > best_score:
            best, best_score = document, score
    return best


def _target(identity: Mapping[str, Any]) -> str:
    """`` POST http://...`` for a call identified by its method and endpoint (an app's model call)."""
    method, endpoint = identity.get("method"), identity.get("endpoint")
    return f" {method} {endpoint}" if isinstance(method, str) and isinstance(endpoint, str) else ""


def _mode_says(mode: str) -> str:
    if mode == "once":
        return "--omk-record-mode=once records only sample files that have no recordings yet"
    return f"--omk-record-mode={mode} only replays"


def describe_miss(
    *,
    mode: str = "none",
    kind: str,
    label: str,
    directory: Path,
    expected: Path,
    identity: Mapping[str, Any],
    documents: Sequence[Document],
    same_sample: Sequence[Document] = (),
) -> list[str]:
    """The lines of a replay-miss message (``identity`` already scrubbed like the stored ones),
    ending with what to do about it.

    The nearest recording is sought among ``same_sample`` (the sample's own recordings) first, and
    among all ``documents`` only when none of those fits: a run that misses every call (a changed
    model or endpoint) explains each miss from a handful of files instead of the whole directory.
    """
    executor = identity.get("executor")
    call = f"{kind} call" + (f" to executor {executor!r}" if executor is not None else _target(identity))
    lines = [
        f"No recording for sample {label!r} ({call}) in {directory}, and {_mode_says(mode)} "
        f"(it would be {expected.as_posix()})."
    ]
    best = nearest(identity, same_sample) or nearest(identity, documents)
    if best is None:
        others = sorted({repr(d.identity["executor"]) for d in documents if "executor" in d.identity})
        if executor is None:
            lines.append(f"No {kind} recording exists there.")
        else:
            line = f"No recording exists for executor {executor!r}"
            lines.append(line + (f" (recordings exist for {', '.join(others)})." if others else "."))
        return [*lines, FIX_HINT]
    where = best.path.relative_to(directory).as_posix() if best.path.is_relative_to(directory) else best.path
    ours, theirs = request_fields(identity), request_fields(best.identity)
    diffs = differences(ours, theirs)
    if diffs:
        lines.append(f"Nearest recording: {where} (sample {best.label!r}), which differs in:")
        lines.extend(f"  - {diff}" for diff in diffs)
    else:
        lines.append(
            f"Nearest recording: {where} (sample {best.label!r}) has the same request fields but another "
            "key: it was edited by hand, or recorded with different secrets in the prompt."
        )
    return [*lines, _hint(diffs, ours, theirs)]
