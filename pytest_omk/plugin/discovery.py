"""Which files pytest-omk collects: the canonical names wherever pytest walks, skill-local files
next to a ``SKILL.md``, the files and split directories ``--omk-samples`` names, and the names it
refuses with a reason (two canonical files in one directory, a sample file under another name).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from pytest_omk.errors import SampleFileError
from pytest_omk.loading.display import display_path
from pytest_omk.plugin.nodes import SampleFile

CANONICAL_NAMES = ("eval-samples.json", "eval-samples.yaml")


def collect_file(file_path: Path, parent: pytest.Collector, files: set[Path], dirs: set[Path]) -> Any:
    """The collector of ``file_path`` (``None``: not a sample file); ``files`` and ``dirs`` are
    what ``--omk-samples`` names, resolved."""
    # This hook sees every file pytest walks: resolve paths only when --omk-samples asks for it.
    if files or dirs:
        resolved = file_path.resolve()
        if resolved in files:
            return SampleFile.from_parent(parent, path=file_path)
        if resolved.parent in dirs:
            return None  # collected by its SplitDirectory
    name = file_path.name
    if name == "SKILL.md":
        found = skill_samples(file_path)
        if found is None:
            return None
        if not isinstance(found, Path):
            return AmbiguousSamples.from_parent(
                parent, path=file_path.parent / ".omk" / CANONICAL_NAMES[0], error=found
            )
        return SampleFile.from_parent(parent, path=found, system_file=file_path)
    if name not in CANONICAL_NAMES:
        misnamed = misnamed_sample_file(file_path, parent)
        if misnamed is None and near_miss(name):
            shown = display_path(file_path, parent.config.rootpath)
            # Attributed to the misnamed file itself, not to this module: the summary's location
            # is where the user has to act.
            warnings.warn_explicit(
                pytest.PytestWarning(
                    f"omk: {shown} is not collected: only {' and '.join(CANONICAL_NAMES)} are found by "
                    f"name (rename it, or pass it with --omk-samples={shown})"
                ),
                category=pytest.PytestWarning,
                filename=str(file_path),
                lineno=1,
            )
        return misnamed
    if file_path.parent.name == ".omk":
        skill_md = file_path.parent.parent / "SKILL.md"
        # Reached directly (e.g. named on the command line): only a real skill's folder counts.
        if not skill_md.is_file():
            return None
        return SampleFile.from_parent(parent, path=file_path, system_file=skill_md)
    found = canonical_in(file_path.parent)
    if found is not None and not isinstance(found, Path):
        if name != CANONICAL_NAMES[0]:
            return None  # report the ambiguity once, from the JSON file
        return AmbiguousSamples.from_parent(parent, path=file_path, error=found)
    return SampleFile.from_parent(parent, path=file_path)


def skill_samples(skill_md: Path) -> Path | SampleFileError | None:
    """The skill-local sample file next to ``<skill>/SKILL.md``, if any (or an ambiguity error)."""
    omk_dir = skill_md.parent / ".omk"
    return canonical_in(omk_dir)


def canonical_in(directory: Path) -> Path | SampleFileError | None:
    """The canonical sample file in ``directory``; both names present is an ambiguity error."""
    found = [directory / name for name in CANONICAL_NAMES if (directory / name).is_file()]
    if len(found) > 1:
        return SampleFileError(
            str(found[0]),
            f"ambiguous eval sample files: {found[0]} and {found[1]} both exist; keep one of them",
        )
    return found[0] if found else None


class AmbiguousSamples(pytest.File):
    """Stands in for a sample file that cannot be collected as it is (two canonical files in one
    directory, a sample file under another name): collecting it is an error."""

    def __init__(self, *, error: SampleFileError, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error

    def collect(self) -> Iterable[pytest.Item]:
        """Report the file's error."""
        raise self.CollectError(self.error.reason)


_SAMPLE_SUFFIXES = (".json", ".yaml", ".yml")
_NEAR_STEMS = frozenset({"eval-samples", "evals-samples", "eval-sample", "evals-sample", "evalsamples"})
"""Names a user may have meant as a sample file (compared in lower case, ``_`` read as ``-``)."""


def near_miss(name: str) -> bool:
    """Whether ``name`` looks meant as a sample file but is not a canonical name
    (``eval-samples.yml``, ``eval_samples.json``, ``evals-samples.yaml`` ...)."""
    stem, _, suffix = name.rpartition(".")
    return (
        f".{suffix}" in _SAMPLE_SUFFIXES
        and name not in CANONICAL_NAMES
        and stem.lower().replace("_", "-") in _NEAR_STEMS
    )


_SCHEMA_MARK = b"omk.eval-sample-set/"


def misnamed_sample_file(path: Path, parent: pytest.Collector) -> AmbiguousSamples | None:
    """A sample file named on the command line under another name: a collection error saying how
    to run it (``--omk-samples``), instead of pytest's bare "not found"."""
    if not path.name.endswith(_SAMPLE_SUFFIXES):
        return None
    named = {Path(arg.split("::")[0]).resolve() for arg in parent.config.args}
    if path.resolve() not in named:
        return None
    try:
        with path.open("rb") as stream:
            head = stream.read(65536)
    except OSError:
        return None
    if _SCHEMA_MARK not in head:
        return None
    shown = display_path(path, parent.config.rootpath)
    error = SampleFileError(
        shown,
        f"this looks like an omk sample file, but only {' and '.join(CANONICAL_NAMES)} are collected by "
        f"name; run it with --omk-samples {shown} (or list it in the ini key omk_samples)",
    )
    return AmbiguousSamples.from_parent(parent, path=path, error=error)
