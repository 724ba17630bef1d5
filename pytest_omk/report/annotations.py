"""CI annotations at the failing check's line: GitHub's workflow commands and GitLab's code quality.

Both are built from the run's sample records (the JSON report's ``samples``), so they show what the
report shows. A failed check is an error at its assertion's (or rubric dimension's) line, a sample
that errored is an error at the sample's line, and under ``--omk-strict`` a reading without evidence
is a warning. Text is scrubbed of secrets by the caller's scrubber and made inert here: a workflow
command is one line, so a newline in a model's output cannot start a command of its own.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pytest_omk._util.visible import visible, workflow_inert
from pytest_omk.report.outputs import Written

GITHUB_LIMIT = 10
"""Annotations of one level printed at most: GitHub shows ten of each level per step."""
MESSAGE_CHARS = 1000
"""A finding's message is cut here: an annotation is a pointer, the report holds the rest."""

Level = Literal["error", "warning"]


@dataclass(frozen=True)
class Finding:
    """One thing to point at: a failed check, a sample that errored, or missing evidence (strict)."""

    level: Level
    file: str
    """The sample file, relative to the rootdir (as in the report)."""
    line: int | None
    """1-based; ``None`` when the file's lines are unknown (the file's first line is used)."""
    nodeid: str
    check: str
    """``assertion 1: contains``, ``rubric: clarity`` or ``sample``."""
    kind: str
    """The assertion's type, ``rubric`` or ``sample``: what GitLab groups findings by."""
    message: str

    @property
    def title(self) -> str:
        """What the annotation is titled: the sample and the check."""
        return f"{self.nodeid} · {self.check}"

    @property
    def fingerprint(self) -> str:
        """Stable across runs and line moves: the sample and the check, not the text."""
        return hashlib.sha256(f"{self.nodeid}\0{self.check}".encode()).hexdigest()


def findings(samples: Iterable[Mapping[str, Any]], *, strict: bool) -> list[Finding]:
    """Every finding of the samples, in report order (each sample's checks in order)."""
    found: list[Finding] = []
    for sample in samples:
        where = (str(sample.get("file", "")), str(sample.get("nodeid", "")))
        if sample.get("outcome") == "error":
            message = str(sample.get("error") or "the sample's model call failed")
            found.append(
                Finding("error", where[0], sample.get("line"), where[1], "sample", "sample", message)
            )
            continue
        for entry in sample.get("assertions") or []:
            level = _level(entry.get("status"), strict)
            if level is not None:
                check = f"assertion {entry.get('index')}: {entry.get('type')}"
                found.append(_finding(level, where, entry, check, str(entry.get("type")), sample))
        for name, entry in (sample.get("rubric") or {}).items():
            level = _level(entry.get("status"), strict)
            if level is not None:
                found.append(
                    _finding(level, where, entry, f"rubric: {name}", "rubric", sample, reason="reason")
                )
    return found


def _level(status: object, strict: bool) -> Level | None:
    if status == "fail":
        return "error"
    if status == "missing" and strict:
        return "warning"
    return None


def _finding(
    level: Level,
    where: tuple[str, str],
    entry: Mapping[str, Any],
    check: str,
    kind: str,
    sample: Mapping[str, Any],
    *,
    reason: str = "message",
) -> Finding:
    line = entry.get("line") or sample.get("line")
    message = str(entry.get(reason) or entry.get("message") or check)
    if level == "warning":
        message = f"missing evidence (--omk-strict): {message}"
    return Finding(level, where[0], line, where[1], check, kind, message)


# --- GitHub --------------------------------------------------------------------------------------


def _data(text: str) -> str:
    """A workflow command's message: ``%``, CR and LF escaped (GitHub unescapes them)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    """A workflow command's property value: its message escaping, plus ``:`` and ``,``."""
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _inert(text: str, scrub: Callable[[str], str]) -> str:
    """Masked whole, then cut; escaped; no ``##[`` left (GitHub's runner acts on it anywhere in a
    line, inside a workflow command's message too)."""
    text = scrub(text)
    if len(text) > MESSAGE_CHARS:
        text = text[: MESSAGE_CHARS - 1] + "…"
    return workflow_inert(visible(text))


def github_commands(
    found: Sequence[Finding],
    *,
    scrub: Callable[[str], str],
    path: Callable[[str], str] = str,
    limit: int = GITHUB_LIMIT,
) -> list[str]:
    """``::error file=…,line=…,title=…::…`` per finding, at most ``limit`` of each level, then one
    ``::notice`` saying how many were left out. ``path`` maps a report path to the repository's."""
    lines: list[str] = []
    left_out = 0
    shown = {"error": 0, "warning": 0}
    for finding in found:
        if shown[finding.level] >= limit:
            left_out += 1
            continue
        shown[finding.level] += 1
        props = [f"file={_property(path(finding.file))}"]
        if finding.line:
            props.append(f"line={finding.line}")
        props.append(f"title={_property(_inert(finding.title, scrub))}")
        lines.append(f"::{finding.level} {','.join(props)}::{_data(_inert(finding.message, scrub))}")
    if left_out:
        lines.append(
            f"::notice title=pytest-omk::{left_out} more failed checks are not annotated "
            f"(GitHub shows {limit} of each kind); the omk scores section and the reports list them all"
        )
    return lines


# --- GitLab --------------------------------------------------------------------------------------

_SEVERITY: dict[Level, str] = {"error": "major", "warning": "minor"}


def code_quality(found: Sequence[Finding], *, scrub: Callable[[str], str]) -> str:
    """GitLab's code-quality report (a JSON array of issues), for ``artifacts:reports:codequality``."""
    issues = [
        {
            "description": _inert(f"{finding.title}: {finding.message}", scrub),
            "check_name": f"omk/{finding.kind}",
            "fingerprint": finding.fingerprint,
            "severity": _SEVERITY[finding.level],
            "location": {"path": finding.file, "lines": {"begin": finding.line or 1}},
        }
        for finding in found
    ]
    return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"


def ci_outputs(
    samples: Sequence[Mapping[str, Any]],
    *,
    strict: bool,
    github: bool,
    code_quality_path: Path | None,
    scrub: Callable[[str], str],
    repo_path: Callable[[str], str] = str,
) -> tuple[list[str], list[Written]]:
    """The GitHub annotations to print, and the line saying where the code-quality file went."""
    found = findings(samples, strict=strict)
    commands = github_commands(found, scrub=scrub, path=repo_path) if github else []
    written: list[Written] = []
    if code_quality_path is not None:
        try:
            code_quality_path.parent.mkdir(parents=True, exist_ok=True)
            code_quality_path.write_text(code_quality(found, scrub=scrub), encoding="utf-8")
        except OSError as exc:
            written.append(
                Written(
                    f"omk: cannot write the code-quality report to {code_quality_path}: "
                    f"{exc.strerror or exc}",
                    failed=True,
                )
            )
        else:
            written.append(Written(f"omk: code-quality report written to {code_quality_path}"))
    return commands, written


def repository_path(rootdir: Path, workspace: str | None) -> Callable[[str], str]:
    """Maps a report path (relative to the rootdir) to one relative to the repository GitHub checked
    out (``$GITHUB_WORKSPACE``), which is what an annotation's ``file`` must be."""
    if not workspace:
        return str

    def mapped(path: str) -> str:
        full = (rootdir / path).resolve()
        try:
            return full.relative_to(Path(workspace).resolve()).as_posix()
        except ValueError:
            return path

    return mapped
