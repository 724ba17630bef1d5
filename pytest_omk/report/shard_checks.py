"""What ``python -m pytest_omk merge`` checks of each shard's report before it trusts any of it.

A shard's report is input like any other: a value of the wrong type, a shard of another run or
another sample set, must stop the merge with one line (exit 4), never a traceback and never a merged
report that looks green. Every shard of one run collected the same items from the same sample files,
so each report carries a digest of that collection (``collection.digest``) that all must share.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_omk.errors import ConfigError

_SECTIONS: tuple[tuple[str, type, str], ...] = (
    ("config", dict, "an object"),
    ("summary", dict, "an object"),
    ("samples", list, "a list"),
)
_RUN_FIELDS: tuple[tuple[str, tuple[type, ...], str], ...] = (
    ("exitStatus", (int,), "an integer"),
    ("startedAt", (str,), "a string"),
    ("durationS", (int, float), "a number"),
    ("environment", (dict,), "an object"),
    ("collectionErrors", (list,), "a list"),
    ("otherTests", (dict,), "an object"),
)
EXIT_SEVERITY = (0, 5, 1, 2, 3, 4)
"""pytest's exit codes from least to most severe: passed, nothing collected, tests failed,
interrupted, internal error, usage error."""


def check_shard(path: Path, document: Mapping[str, Any]) -> None:
    """Refuse a shard whose sections or run fields have the wrong type (:class:`ConfigError`)."""
    for key, kind, name in _SECTIONS:
        if not isinstance(document.get(key), kind):
            raise ConfigError(f"{path}: {key} must be {name}")
    for key, kinds, name in _RUN_FIELDS:
        value = document.get(key)
        if key in document and (isinstance(value, bool) or not isinstance(value, kinds)):
            raise ConfigError(f"{path}: {key} must be {name}, not {str(value)[:40]!r}")
    if not all(isinstance(row, dict) for row in document["samples"]):
        raise ConfigError(f"{path}: every entry of samples must be an object")
    other = document.get("otherTests", {})
    if not all(isinstance(count, int) and not isinstance(count, bool) for count in other.values()):
        raise ConfigError(f"{path}: otherTests must count with integers")


def check_same_collection(reports: Sequence[tuple[Path, Mapping[str, Any]]]) -> None:
    """Every shard must come from one collection: the same items of the same sample files."""
    first_path, first = reports[0]
    expected = _digest(first_path, first)
    for path, document in reports[1:]:
        if _digest(path, document) == expected:
            continue
        if _members(document) is not None and _members(document) == _members(first):
            raise ConfigError(
                f"{path} and {first_path} ran the same items in a different order (their collection "
                "digests differ, their members do not): a plugin reordered the collection before the "
                "shard was cut (pytest-randomly or the like, in a pytest-omk without the stable cut); "
                "re-run the shards with one pytest-omk version, or with -p no:randomly"
            )
        raise ConfigError(
            f"{path} and {first_path} come from different sample sets or selections (their "
            "collection digests differ): merge the shards of one run only"
        )


def _members(document: Mapping[str, Any]) -> str | None:
    collection = document.get("collection")
    members = collection.get("members") if isinstance(collection, dict) else None
    return members if isinstance(members, str) else None


def _digest(path: Path, document: Mapping[str, Any]) -> str:
    collection = document.get("collection")
    digest = collection.get("digest") if isinstance(collection, dict) else None
    if not isinstance(digest, str):
        raise ConfigError(
            f"{path} does not say which sample set it ran (no collection.digest: written by an older "
            "pytest-omk?); re-run that shard"
        )
    return digest


def worst_exit(statuses: Iterable[int]) -> int:
    """The most severe of ``statuses`` (:data:`EXIT_SEVERITY`; an unknown code counts as an internal error)."""
    rank = {code: index for index, code in enumerate(EXIT_SEVERITY)}
    return max(statuses, key=lambda code: rank.get(code, rank[3]), default=0)
