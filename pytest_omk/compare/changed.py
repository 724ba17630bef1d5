"""``--omk-changed``: a digest of everything a sample's result depends on, and which samples a
baseline report can stand in for.

A sample's **input digest** is a SHA-256 over, in this order: the digest scheme, the plugin's
version (graders change between versions), the sample as validated (its canonical JSON: key order
and whitespace of the file do not matter), the system prompt or variant text, the bytes of every
file the sample reads to be graded or answered (``custom`` check modules, mocks' ``return_file``),
the model under test (executor id, model, endpoint), the judge (executor id, model, template
versions) and the options that change a verdict (``--omk-repeat``, pass rates, thresholds,
strictness), and the application's declared digest when there is one. Two runs with the same
digest would ask the same questions of the same model and grade the answers the same way.

What it cannot see: a model that changed behind the same name and endpoint, pages a URL in the
prompt serves, files an agent reads in the sample's working directory. The application's declared
digest (``--omk-app-digest``: the contents of the paths it names, or its ``version:`` lines) is
how a project adds what the plugin cannot hash.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # The format's models are imported by collection, off the critical path of start-up; this
    # module is imported while pytest configures (to carry a baseline) and must not pull them in.
    from pytest_omk.models import Sample

SCHEME = "omk.input-digest/v1"
CARRIED_OUTCOMES = ("passed", "failed", "xfailed", "xpassed")
"""Baseline outcomes that are results; a skipped or errored sample is run again."""


@dataclass(frozen=True)
class RunInputs:
    """What every sample of the run shares: the model, the judge and the options that grade."""

    plugin_version: str
    executor: str | None
    model: str | None
    endpoint: str | None
    judge: str | None = None
    judge_model: str | None = None
    judge_templates: str | None = None
    options: Mapping[str, Any] | None = None
    """Verdict-changing options (repeat, min pass rate, rubric threshold, strict, min composite ...)."""
    app_digest: str | None = None

    def canonical(self) -> str:
        """The run's part of every digest (computed once per run: the value is frozen)."""
        cached: str | None = self.__dict__.get("_canonical")
        if cached is not None:
            return cached
        text = _canonical(
            {
                "plugin": self.plugin_version,
                "executor": self.executor,
                "model": self.model,
                "endpoint": self.endpoint,
                "judge": self.judge,
                "judgeModel": self.judge_model,
                "judgeTemplates": self.judge_templates,
                "options": dict(self.options or {}),
                "app": self.app_digest,
            }
        )
        object.__setattr__(self, "_canonical", text)
        return text


def sample_files(sample: Sample) -> list[str]:
    """The files (relative to the sample file's directory) a sample reads besides the sample file."""
    from pytest_omk.models.sample import iter_leaves

    files: list[str] = []
    for assertion in sample.assertions or []:
        if assertion.type not in ("custom", "assert-set"):
            continue  # only a custom check (or a set holding one) reads a file
        for leaf in iter_leaves(assertion):
            fn = getattr(leaf, "fn", None)
            if leaf.type == "custom" and isinstance(fn, str):  # type: ignore[attr-defined]
                files.append(fn)
    for mock in sample.mocks or []:
        if mock.return_file:
            files.append(mock.return_file)
    return files


def input_digest(sample: Sample, *, system: str | None, base_dir: Path, run: RunInputs) -> str:
    """The sample's input digest (hex SHA-256)."""
    digest = hashlib.sha256()
    for part in (
        SCHEME,
        run.canonical(),
        _canonical(sample.model_dump(mode="json", by_alias=True, exclude_none=True)),
        system or "",
    ):
        _feed(digest, part.encode("utf-8"))
    for name in sample_files(sample):
        _feed(digest, name.encode("utf-8"))
        _feed(digest, _file_bytes(base_dir / name))
    return digest.hexdigest()


def _file_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        # A missing file is part of the input too (its check fails the same way again).
        return f"<unreadable: {exc.strerror or exc}>".encode()


def _feed(digest: Any, data: bytes) -> None:
    # Length-prefixed, so no part can run into the next one.
    digest.update(len(data).to_bytes(8, "big"))
    digest.update(data)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


SampleKey = tuple[str, str, str | None]


def carried_records(baseline: Mapping[str, Any]) -> dict[SampleKey, Mapping[str, Any]]:
    """The baseline's records that can be carried, by (file, sample id, variant)."""
    carried: dict[SampleKey, Mapping[str, Any]] = {}
    for row in baseline.get("samples") or []:
        if isinstance(row, Mapping) and row.get("inputDigest") and row.get("outcome") in CARRIED_OUTCOMES:
            carried[(str(row["file"]), str(row["sample_id"]), row.get("variant"))] = row
    return carried


def carry(record: Mapping[str, Any] | None, digest: str) -> Mapping[str, Any] | None:
    """The baseline record to report instead of running, when its digest equals ``digest``."""
    if record is None or record.get("inputDigest") != digest:
        return None
    return record
