"""Load eval-samples files and split directories into validated bundles."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_omk.errors import SampleFileError
from pytest_omk.loading.parse import MAX_FILE_BYTES, parse_text
from pytest_omk.loading.validate import validate_document
from pytest_omk.models import Requires, Sample

if TYPE_CHECKING:
    from pytest_omk.js.v8 import JsEngine

_SPLIT_SUFFIXES = (".json", ".yaml", ".yml")
_SPLIT_SKIPPED_PREFIXES = ("report", "health", "_")


@dataclass(frozen=True)
class LoadedSample:
    """A validated sample and where it came from."""

    sample: Sample
    source: Path
    """The file that defines the sample."""
    index: int
    """Its position in that file's ``samples`` array."""


@dataclass(frozen=True)
class SampleBundle:
    """Everything loaded from one sample file or split directory."""

    path: Path
    base_dir: Path
    """Anchors relative ``cwd``, ``return_file``, ``custom.fn`` and ``requires.files`` paths."""
    samples: list[LoadedSample]
    requires: Requires | None = None
    system_file: Path | None = None
    """The skill's SKILL.md for skill-local samples (used as the system prompt)."""
    files: list[Path] = field(default_factory=list)


def is_yaml_path(path: Path) -> bool:
    """YAML iff the name ends with ``.yaml`` or ``.yml`` (case-sensitive, as upstream)."""
    return path.name.endswith((".yaml", ".yml"))


def load_file(path: Path, *, display: str | None = None, js: JsEngine | None = None) -> SampleBundle:
    """Read, parse and validate one sample file (``js``: the engine that compiles its regexes)."""
    shown = display or str(path)
    try:
        with path.open("rb") as stream:
            # An oversized file is refused from its size, before anything is read; reading stops
            # one byte past the limit anyway (a file still growing, a pipe), for parse_text to refuse.
            size = os.fstat(stream.fileno()).st_size
            if size > MAX_FILE_BYTES:
                raise SampleFileError(
                    shown, f"file is {size:,} bytes; sample files may be at most {MAX_FILE_BYTES:,} bytes"
                )
            raw = stream.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise SampleFileError(shown, f"cannot read file: {exc.strerror}") from None
    yaml_format = is_yaml_path(path)
    data = parse_text(raw, path=shown, yaml_format=yaml_format)
    text = raw.decode("utf-8") if yaml_format else None
    document = validate_document(data, path=shown, text=text, js=js)
    samples = [LoadedSample(s, path, i) for i, s in enumerate(document.samples)]
    return SampleBundle(path, path.parent, samples, document.requires, files=[path])


def split_directory_files(directory: Path) -> list[Path]:
    """The files a split directory loads, in JavaScript's default (UTF-16) sort order."""
    names = [
        p.name
        for p in directory.iterdir()
        if p.is_file()
        and p.name.lower().endswith(_SPLIT_SUFFIXES)
        and not p.name.lower().startswith(_SPLIT_SKIPPED_PREFIXES)
    ]
    # Big-endian UTF-16 bytes compare like JavaScript's code units; "surrogatepass" keeps names that
    # are not valid UTF-8 on disk (decoded by Python to lone surrogates) sortable.
    names.sort(key=lambda name: name.encode("utf-16-be", "surrogatepass"))
    return [directory / name for name in names]


def load_directory(
    directory: Path, *, display: str | None = None, js: JsEngine | None = None
) -> SampleBundle:
    """Load a split directory: every eligible file is a complete v2 document."""
    shown = display or str(directory)
    try:
        files = split_directory_files(directory)
    except OSError as exc:
        raise SampleFileError(shown, f"cannot read directory: {exc.strerror}") from None
    if not files:
        raise SampleFileError(
            shown,
            "no sample files found in directory (looking for *.json/*.yaml/*.yml, "
            "excluding names starting with report, health or _)",
        )
    samples: list[LoadedSample] = []
    first_file: dict[str, Path] = {}
    merged: dict[str, list[str]] = {}
    for file in files:
        bundle = load_file(file, display=f"{shown}/{file.name}", js=js)
        for loaded in bundle.samples:
            sid = loaded.sample.sample_id
            if sid in first_file:
                raise SampleFileError(
                    shown,
                    f'duplicate sample_id "{sid}": defined in both "{first_file[sid].name}" '
                    f'and "{file.name}"',
                )
            first_file[sid] = file
            samples.append(loaded)
        if bundle.requires is not None:
            for key, values in bundle.requires.model_dump(exclude_none=True).items():
                bucket = merged.setdefault(key, [])
                bucket.extend(v for v in values if v not in bucket)
    requires = Requires.model_validate(merged) if merged else None
    return SampleBundle(directory, directory, samples, requires, files=files)
