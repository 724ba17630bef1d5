"""Write the report document to its sinks: JSON, HTML, Markdown and GitHub's step summary.

The document is built once per run; every sink renders from that one value after secrets are
scrubbed from it, so no sink can show what another hides.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, TextIO

from pytest_omk._util.visible import JsonVisibleWriter
from pytest_omk.recordings.scrub import Scrubber

STEP_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"
GITHUB_ENV = "GITHUB_ACTIONS"
"""Set to ``true`` by GitHub Actions: annotations are printed then (``--omk-annotations auto``)."""


@dataclass(frozen=True)
class ReportTargets:
    """Where this run's reports go (``None``: not asked for)."""

    json: Path | None = None
    html: Path | None = None
    markdown: Path | None = None
    step_summary: Path | None = None
    """GitHub Actions' summary file: appended to, as each step may add its part."""
    code_quality: Path | None = None
    """GitLab's code-quality report (``--omk-code-quality``)."""
    annotations: bool = False
    """Whether GitHub annotations are printed (``--omk-annotations``)."""

    @classmethod
    def from_options(
        cls,
        report: str | None,
        html: str | None,
        markdown: str | None,
        environ: Mapping[str, str],
        resolve: Callable[[str], Path],
        *,
        code_quality: str | None = None,
        annotations: str = "off",
    ) -> ReportTargets:
        """The targets of the ``--omk-report/-html/-markdown/-code-quality`` values and the
        environment (``--omk-annotations auto`` prints GitHub annotations under GitHub Actions)."""
        summary = environ.get(STEP_SUMMARY_ENV) or None
        github = annotations == "github" or (annotations == "auto" and environ.get(GITHUB_ENV) == "true")
        return cls(
            json=resolve(report) if report else None,
            html=resolve(html) if html else None,
            markdown=resolve(markdown) if markdown else None,
            step_summary=Path(summary) if summary else None,
            code_quality=resolve(code_quality) if code_quality else None,
            annotations=github,
        )

    @property
    def wanted(self) -> bool:
        """Whether any report is to be written at all (the records are kept whole only then)."""
        return any(
            (self.json, self.html, self.markdown, self.step_summary, self.code_quality, self.annotations)
        )


class Written(NamedTuple):
    """One report's line for the terminal, and whether it says the report could not be written."""

    line: str
    failed: bool = False


def write_reports(
    document: Mapping[str, Any], targets: ReportTargets, secrets: Iterable[str]
) -> list[Written]:
    """Render and write every wanted report; returns one line per report written or failed."""
    clean: dict[str, Any] = Scrubber(secrets).data(document)
    lines: list[Written] = []
    jobs: list[tuple[str, Path | None, Callable[[TextIO], object], bool]] = [
        ("JSON report", targets.json, lambda handle: _dump_json(clean, handle), False),
        ("HTML report", targets.html, lambda handle: handle.write(_html(clean)), False),
        ("Markdown summary", targets.markdown, lambda handle: handle.write(_markdown(clean)), False),
        ("step summary", targets.step_summary, lambda handle: handle.write(_markdown(clean)), True),
    ]
    for label, path, render, append in jobs:
        if path is None:
            continue
        try:
            _write(path, render, append=append)
        except OSError as exc:
            lines.append(
                Written(f"omk: cannot write the {label} to {path}: {exc.strerror or exc}", failed=True)
            )
        else:
            if label != "JSON report":
                lines.append(Written(f"omk: {label} written to {path}"))
    return lines


def _write(path: Path, render: Callable[[TextIO], object], *, append: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # ``surrogatepass`` would write invalid UTF-8; a lone surrogate from a JSON string becomes "?".
    with path.open("a" if append else "w", encoding="utf-8", errors="replace") as handle:
        render(handle)


def _dump_json(document: Mapping[str, Any], handle: TextIO) -> None:
    # Streamed: with ``indent`` the encoder is the pure-Python one, and ``json.dumps`` joins a list
    # of every token of the document at once (a 5.7 MB report of 2,000 samples peaked 53 MB).
    # Control, bidi and invisible characters are written as JSON escapes: same data, safe to read.
    writer = JsonVisibleWriter(handle)
    json.dump(document, writer, indent=2, ensure_ascii=False)
    writer.flush()
    handle.write("\n")


# The writers are imported when a report is written, not when the plugin loads: the HTML page's
# module is among the heaviest imports and would otherwise delay every run's first model call.
def _html(document: Mapping[str, Any]) -> str:
    from pytest_omk.report.html import render_html

    return render_html(document)


def _markdown(document: Mapping[str, Any]) -> str:
    from pytest_omk.report.markdown import render_markdown

    return render_markdown(document)
