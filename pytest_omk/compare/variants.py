"""Variants: ``--omk-variant NAME=PATH`` parsing, and per-variant means over sample records.

A variant is a named system-prompt file (a skill's ``SKILL.md``, a prompt file). Every sample runs
once per variant; the item is named ``<sample_id>[<NAME>]``, so the name must be short and safe in
a node id.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_omk.errors import ConfigError
from pytest_omk.grade.stats import mean2

MEAN_LAYERS = ("assertions", "fact", "behavior", "judge", "composite")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


@dataclass(frozen=True)
class Variant:
    """One variant: its name and the absolute path of its system-prompt file."""

    name: str
    path: Path

    def display(self, rootdir: Path) -> str:
        """The path relative to ``rootdir`` when it lies below it (for reports)."""
        try:
            return self.path.relative_to(rootdir.resolve()).as_posix()
        except ValueError:
            return self.path.as_posix()


def parse_variant(spec: str, base: Path) -> Variant:
    """``NAME=PATH`` → :class:`Variant`; a relative PATH is taken relative to ``base``."""
    name, sep, raw_path = spec.partition("=")
    name, raw_path = name.strip(), raw_path.strip()
    if not sep or not name or not raw_path:
        raise ConfigError(
            f"--omk-variant {spec!r} must look like NAME=PATH (e.g. concise=prompts/concise.md)"
        )
    if not _NAME.fullmatch(name):
        raise ConfigError(
            f"--omk-variant name {name!r} may only contain letters, digits, '_', '.' and '-' "
            "(it becomes part of the test id)"
        )
    path = (base / raw_path).resolve()
    if not path.is_file():
        raise ConfigError(f"--omk-variant {name}: the system prompt file {path} does not exist")
    return Variant(name, path)


def parse_variants(specs: Iterable[str], base: Path) -> tuple[Variant, ...]:
    """Parse every spec; names must be unique (the order given is kept: the first is the reference)."""
    variants: list[Variant] = []
    seen: set[str] = set()
    for spec in specs:
        variant = parse_variant(spec, base)
        if variant.name in seen:
            raise ConfigError(f"--omk-variant {variant.name!r} is given twice; variant names must be unique")
        seen.add(variant.name)
        variants.append(variant)
    return tuple(variants)


def variant_summaries(
    rows: Sequence[Mapping[str, Any]], variants: Sequence[Variant], rootdir: Path
) -> list[dict[str, Any]]:
    """Per variant, in the order given: sample count, outcome counts and the mean of each score."""
    summaries: list[dict[str, Any]] = []
    for variant in variants:
        mine = [r for r in rows if r.get("variant") == variant.name]
        summaries.append(
            {
                "name": variant.name,
                "path": variant.display(rootdir),
                "samples": len(mine),
                "outcomes": dict(Counter(str(r["outcome"]) for r in mine)),
                "means": {layer: mean2(r["scores"][layer] for r in mine) for layer in MEAN_LAYERS},
            }
        )
    return summaries
